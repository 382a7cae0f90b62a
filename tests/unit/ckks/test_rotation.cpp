// Rotations and conjugation against the plaintext permutation and conjugate, hoisted rotations against single
// ones (word for word: both apply the automorphism to the ModUp digits of c1), and the sigma-first key switch
// (ModUp of sigma(c1)) as an independent reference at the same precision.
//
// Bounds: a rotation adds one key switch's noise, no larger than the fresh-encryption noise, so the bounds are
// those of test_evaluator.cpp: log2(scale) - log2(N) - 9 bits.

#include <complex>
#include <cstdint>
#include <vector>

#include "cerium/rlwe/key_switch.hpp"
#include "cerium/ring/automorphism.hpp"
#include "evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

namespace {

double bound_for(const CkksConfig& config) { return config.level_prime_bits * config.level_width - config.log_n - 9.0; }

// The textbook rotation: sigma applied to c0 and c1 first, then a key switch of sigma(c1).
Ciphertext sigma_first_rotation(const Fixture& f, const Ciphertext& a, std::uint32_t galois_element) {
  const auto& automorphism = f.context->automorphism(galois_element);
  const auto& key = f.evaluator.galois_keys()->at(galois_element);
  auto switched = key_switch(*f.context, automorphism.apply(a.part(1)), a.level(), key);
  ring::RnsPoly c0 = automorphism.apply(a.part(0));
  c0 += switched[0];
  std::vector<ring::RnsPoly> parts;
  parts.push_back(std::move(c0));
  parts.push_back(std::move(switched[1]));
  return Ciphertext(f.context, std::move(parts), a.level(), a.scale(), a.slots());
}

}  // namespace

TEST_CASE("rotations by positive and negative steps, hoisted and not", "[ckks][rotation]") {
  auto rng = cerium_test::make_rng(201);
  for (const auto& config : {toy(11, 2, 2, 2), toy(10, 3, 1, 3), toy(12, 2, 2, 1)}) {
    const std::int64_t half = std::int64_t{1} << (config.log_n - 1);
    const std::vector<std::int64_t> steps = {1, 2, 5, -1, -3, 17, half / 2, half - 1, half + 4};
    Fixture f(config, {.relinearization = false, .rotations = steps});
    const double bound = bound_for(config);
    const Values x = random_complex(rng, f.max_slots());
    const Ciphertext a = f.encrypt(x);
    const std::vector<Ciphertext> hoisted = f.evaluator.rotate_hoisted(a, steps);
    REQUIRE(hoisted.size() == steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Ciphertext single = f.evaluator.rotate(a, steps[i]);
      const double bits = precision_bits(f.decrypt(single), rotated(x, steps[i]));
      INFO(f.context->parameters().describe()
           << ": rotate by " << steps[i] << ": " << bits << " bits (bound " << bound << ")");
      CHECK(bits >= bound);
      CHECK(same_words(single, hoisted[i]));
      CHECK(single.level() == a.level());
      CHECK(single.scale() == a.scale());
    }
    // In place, and a step that is a multiple of the slot count (no key needed: a copy).
    Ciphertext in_place = a.clone();
    f.evaluator.rotate_inplace(in_place, -1);
    CHECK(same_words(in_place, hoisted[3]));
    CHECK(same_words(f.evaluator.rotate(a, 2 * half), a));
  }
}

TEST_CASE("hoisted rotation agrees in precision with the sigma-first key switch", "[ckks][rotation]") {
  auto rng = cerium_test::make_rng(202);
  const CkksConfig config = toy(11, 3, 2, 3);
  Fixture f(config, {.relinearization = false, .rotations = {3, -7}});
  const Values x = random_complex(rng, f.max_slots());
  const Ciphertext a = f.encrypt(x);
  for (const std::int64_t step : {3, -7}) {
    const std::uint32_t element = ring::rotation_galois_element(step, f.context->ring_degree());
    const double ours = precision_bits(f.decrypt(f.evaluator.rotate(a, step)), rotated(x, step));
    const double reference = precision_bits(f.decrypt(sigma_first_rotation(f, a, element)), rotated(x, step));
    INFO("rotate by " << step << ": hoisted path " << ours << " bits, sigma-first path " << reference << " bits");
    CHECK(ours >= bound_for(config));
    CHECK(reference >= bound_for(config));
    CHECK(std::abs(ours - reference) < 2.0);
  }
}

TEST_CASE("rotations at lower levels and with sparse slots", "[ckks][rotation]") {
  auto rng = cerium_test::make_rng(203);
  const CkksConfig config = toy(11, 3, 2, 2);
  // Keys for 5 and -2; the sparse test rotates by 64 + 5 = 69 and by 62 (= -2 mod 64), which need equivalent keys.
  Fixture f(config, {.rotations = {5, -2}});
  const double bound = bound_for(config);
  for (int level = f.context->max_level(); level >= 0; --level) {
    const Values x = random_complex(rng, f.max_slots());
    const Ciphertext a = f.encrypt(x, level);
    const double bits = precision_bits(f.decrypt(f.evaluator.rotate(a, 5)), rotated(x, 5));
    INFO("level " << level << ": rotate by 5: " << bits << " bits");
    CHECK(bits >= bound);
  }
  const std::size_t slots = 64;
  const Values x = random_complex(rng, slots);
  const Ciphertext a = f.encrypt(x, -1, slots);
  for (const std::int64_t step : {5, -2, 69, 62}) {
    const double bits = precision_bits(f.decrypt(f.evaluator.rotate(a, step)), rotated(x, step));
    INFO(slots << " slots: rotate by " << step << ": " << bits << " bits");
    CHECK(bits >= bound);
  }
}

TEST_CASE("conjugation matches the plaintext conjugate", "[ckks][rotation]") {
  auto rng = cerium_test::make_rng(204);
  for (const auto& config : {toy(11, 2, 2, 2), toy(10, 2, 1, 1)}) {
    Fixture f(config, {.relinearization = false, .rotations = {1}, .conjugation = true});
    const Values x = random_complex(rng, f.max_slots());
    const Ciphertext a = f.encrypt(x);
    const Ciphertext c = f.evaluator.conjugate(a);
    const double bits = precision_bits(f.decrypt(c), map(x, [](Complex u) { return std::conj(u); }));
    INFO(f.context->parameters().describe() << ": conjugate " << bits << " bits");
    CHECK(bits >= bound_for(config));
    // Real part by (x + conj(x)) / 2 stays real: imaginary parts vanish to the noise.
    Ciphertext twice_real = f.evaluator.add(a, c);
    CHECK(precision_bits(f.decrypt(twice_real), map(x, [](Complex u) { return Complex(2 * u.real(), 0); })) >=
          bound_for(config) - 1);
    Ciphertext in_place = a.clone();
    f.evaluator.conjugate_inplace(in_place);
    CHECK(same_words(in_place, c));
  }
}
