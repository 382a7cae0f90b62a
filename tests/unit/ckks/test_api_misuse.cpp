// Randomized misuse of the eager CKKS API: out-of-range levels, steps, slot counts, scales and constants, and
// operands of two contexts mixed. Every call must succeed or throw the cerium::Error subclass of its kind
// (core/error.hpp's mapping), never a standard-library exception; the message names the bad value.

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cerium/core/error.hpp"
#include "evaluator_test_support.hpp"
#include "support/catch.hpp"
#include "support/misuse.hpp"

using namespace evaluator_test;
using cerium_test::require_error;
using cerium_test::pick;
using cerium_test::succeed_or_error;

namespace {

// A level outside [0, max_level] (and not -1, which means "the top").
int bad_level(std::mt19937_64& rng, int max_level) {
  const int above = max_level + 1 + static_cast<int>(rng() % 1000);
  const int below = -2 - static_cast<int>(rng() % 1000);
  return pick<int>(rng, {above, below, max_level + 1, std::numeric_limits<int>::max(), std::numeric_limits<int>::min()});
}

// A slot count that is not a power of two in [1, N/2] (0 means N/2 and is valid).
std::size_t bad_slots(std::mt19937_64& rng, std::size_t max_slots) {
  const std::size_t not_power = 3 + 2 * (rng() % (max_slots / 2));
  return pick<std::size_t>(rng, {not_power, max_slots * 2, max_slots + 1, std::size_t{1} << 40,
                                 std::numeric_limits<std::size_t>::max(), 6, 12});
}

// Rotation steps of any size and sign.
std::int64_t any_steps(std::mt19937_64& rng) {
  return pick<std::int64_t>(rng, {static_cast<std::int64_t>(rng()), std::numeric_limits<std::int64_t>::min(),
                                  std::numeric_limits<std::int64_t>::max(), -static_cast<std::int64_t>(rng() % 5000),
                                  static_cast<std::int64_t>(rng() % 5000), 0});
}

// A double that is not a usable scale or constant (or is an extreme one).
double odd_double(std::mt19937_64& rng) {
  return pick<double>(rng, {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min(),
                            -1.0, -0.0, 1e300, std::numeric_limits<double>::max(), -1e200});
}

std::string text(std::int64_t v) { return std::to_string(v); }

// core/error.hpp's mapping for scales: a value that is no scale at all (NaN, infinite, negative) is an
// InvalidArgument; a positive scale the level cannot carry (below 1, beyond what adjust_scale can reach) is a
// LevelError; an encoding whose integers overflow Q_level ("scale overflow", values times scale) is an
// InvalidArgument.
bool not_a_scale(double scale) { return !(scale > 0) || std::isinf(scale); }

// Runs f with `scale` and checks the class of its error by the mapping above (`huge` is the class for a finite
// scale too large for the level).
template <class Huge, class F>
void check_scale_call(const std::string& call, double scale, F&& f) {
  if (not_a_scale(scale)) {
    require_error<InvalidArgument>(call, f);
  } else if (scale < 1) {
    require_error<LevelError>(call, f, "scale");
  } else {
    succeed_or_error<Huge>(call, f);
  }
}

// The toy fixtures: f with the relinearization key, a rotation key for step 1 and conjugation; g another context.
struct Fixtures {
  Fixture f{toy(10, 3, 1, 1), {.relinearization = true, .rotations = {1}, .conjugation = true}};
  Fixture g{toy(11, 2, 1, 1), {.relinearization = false}};
};

Fixtures& fixtures() {
  static Fixtures fx;
  return fx;
}

}  // namespace

TEST_CASE("encoder misuse throws typed errors", "[ckks][misuse]") {
  auto rng = cerium_test::make_rng(9001);
  INFO("seed " << cerium_test::test_seed());
  const Fixture& f = fixtures().f;
  const int max_level = f.context->max_level();
  const std::size_t max_slots = f.max_slots();
  for (int trial = 0; trial < 60; ++trial) {
    const Values x = random_real(rng, 1 + rng() % 8);
    const int level = bad_level(rng, max_level);
    require_error<LevelError>("encode(level " + text(level) + ")",
                              [&] { (void)f.encoder.encode(x, {.level = level}); }, text(level));
    require_error<LevelError>("encode_constant(level " + text(level) + ")",
                              [&] { (void)f.encoder.encode_constant(0.5, {.level = level}); }, text(level));
    const std::size_t slots = bad_slots(rng, max_slots);
    require_error<InvalidArgument>("encode(slots " + std::to_string(slots) + ")",
                                   [&] { (void)f.encoder.encode(x, {.slots = slots}); }, std::to_string(slots));
    require_error<InvalidArgument>("encode_constant(slots " + std::to_string(slots) + ")",
                                   [&] { (void)f.encoder.encode_constant(0.5, {.slots = slots}); },
                                   std::to_string(slots));
    // Too many values for the slots.
    const std::size_t few = std::size_t{1} << (rng() % 4);
    const Values many = random_real(rng, few + 1 + rng() % 16);
    require_error<InvalidArgument>("encode(" + std::to_string(many.size()) + " values into " + std::to_string(few) +
                                       " slots)",
                                   [&] { (void)f.encoder.encode(many, {.slots = few}); },
                                   std::to_string(many.size()));
    // Scales: zero means the default; anything else odd is refused, a subnormal one may encode (to zeros).
    const double scale = odd_double(rng);
    if (scale != 0) {  // 0 (or -0) means the default scale
      check_scale_call<InvalidArgument>("encode(scale " + std::to_string(scale) + ")", scale,
                                        [&] { (void)f.encoder.encode(x, {.scale = scale}); });
      check_scale_call<InvalidArgument>("encode_constant(scale " + std::to_string(scale) + ")", scale,
                                        [&] { (void)f.encoder.encode_constant(0.5, {.scale = scale}); });
    }
    // Values and constants that are not finite or overflow the modulus.
    Values bad = x;
    bad[rng() % bad.size()] = {odd_double(rng), 0};
    succeed_or_error<InvalidArgument>("encode(a value " + std::to_string(bad[0].real()) + ")",
                                      [&] { (void)f.encoder.encode(bad); });
    const double c = odd_double(rng);
    succeed_or_error<InvalidArgument>("encode_constant(" + std::to_string(c) + ")",
                                      [&] { (void)f.encoder.encode_constant(c); });
    // Empty vectors encode zeros.
    CHECK(cerium_test::succeed_or_error<InvalidArgument>("encode({})", [&] {
            (void)f.encoder.encode(Values{});
          }) == cerium_test::Outcome::succeeded);
  }
}

TEST_CASE("evaluator misuse throws typed errors", "[ckks][misuse]") {
  auto rng = cerium_test::make_rng(9002);
  INFO("seed " << cerium_test::test_seed());
  const Fixture& f = fixtures().f;
  const Evaluator& ev = f.evaluator;
  const int max_level = f.context->max_level();
  const Values x = random_real(rng, 8);
  const Ciphertext top = f.encrypt(x);
  const Ciphertext bottom = f.encrypt(x, 0);
  const Ciphertext sparse = f.encrypt(x, -1, 8);
  const Ciphertext three_parts = ev.multiply_no_relin(top, top);
  for (int trial = 0; trial < 60; ++trial) {
    const int level = bad_level(rng, max_level);
    require_error<LevelError>("level_down(level " + text(level) + ")", [&] { (void)ev.level_down(bottom, level); },
                              text(level));
    require_error<LevelError>("level_down(a level-0 ciphertext to " + text(level) + ")",
                              [&] { (void)ev.level_down(bottom, level > 0 ? level : 1); });
    require_error<LevelError>("level_prime_product(" + text(level) + ")",
                              [&] { (void)ev.level_prime_product(level); }, text(level));
    require_error<LevelError>("rescale(level 0)", [&] { (void)ev.rescale(bottom); }, "rescale");
    require_error<LevelError>("multiply(level 0, constant)", [&] { (void)ev.multiply(bottom, 0.5); });
    require_error<LevelError>("multiply_rescale(level 0)", [&] { (void)ev.multiply_rescale(bottom, bottom); });

    // Rotations: only step 1 (and multiples of the slot count) have keys.
    const std::int64_t steps = any_steps(rng);
    const auto reduced = ((steps % 512) + 512) % 512;
    const bool has_key = reduced == 0 || reduced == 1;
    if (has_key) {
      succeed_or_error<MissingKeyError>("rotate(" + text(steps) + ")", [&] { (void)ev.rotate(top, steps); });
    } else {
      require_error<MissingKeyError>("rotate(" + text(steps) + ")", [&] { (void)ev.rotate(top, steps); },
                                     text(steps));
    }
    const std::vector<std::int64_t> many_steps = {1, steps};
    succeed_or_error<MissingKeyError>("rotate_hoisted({1, " + text(steps) + "})",
                                      [&] { (void)ev.rotate_hoisted(top, many_steps); });
    succeed_or_error<MissingKeyError>("rotate(sparse, " + text(steps) + ")", [&] { (void)ev.rotate(sparse, steps); });
    const std::size_t slots = bad_slots(rng, f.max_slots());
    require_error<InvalidArgument>("rotation_key(" + text(steps) + ", slots " + std::to_string(slots) + ")",
                                   [&] { (void)ev.rotation_key(steps, slots); }, std::to_string(slots));
    require_error<InvalidArgument>("rotation_key(" + text(steps) + ", 0 slots)",
                                   [&] { (void)ev.rotation_key(steps, 0); }, "slots");
    succeed_or_error<MissingKeyError>("rotation_key(" + text(steps) + ", 8 slots)",
                                      [&] { (void)ev.rotation_key(steps, 8); });
    require_error<InvalidArgument>("rotate(a 3-part ciphertext)", [&] { (void)ev.rotate(three_parts, 1); }, "parts");

    // Constants and scales.
    const double c = odd_double(rng);
    succeed_or_error<InvalidArgument>("add(constant " + std::to_string(c) + ")", [&] { (void)ev.add(top, c); });
    succeed_or_error<InvalidArgument>("sub(constant " + std::to_string(c) + ")", [&] { (void)ev.sub(top, c); });
    succeed_or_error<InvalidArgument>("multiply(constant " + std::to_string(c) + ")",
                                      [&] { (void)ev.multiply(top, c); });
    succeed_or_error<InvalidArgument>("add(complex constant)",
                                      [&] { (void)ev.add(top, std::complex<double>(0.5, c)); });
    if (!std::isfinite(c)) {
      require_error<InvalidArgument>("multiply(constant " + std::to_string(c) + ")",
                                     [&] { (void)ev.multiply(top, c); });
    }
    const double target = odd_double(rng);
    check_scale_call<LevelError>("adjust_scale(" + std::to_string(target) + ")", target,
                                 [&] { (void)ev.adjust_scale(top, target); });
    require_error<LevelError>("adjust_scale(level 0)",
                              [&] { (void)ev.adjust_scale(bottom, f.context->parameters().default_scale()); });
    const auto integer = static_cast<std::int64_t>(rng());
    succeed_or_error<InvalidArgument>("multiply_integer(" + text(integer) + ")",
                                      [&] { (void)ev.multiply_integer(top, integer); });
    // Operands of other slot counts, and empty ones.
    require_error<MismatchError>("add(slots 512 and 8)", [&] { (void)ev.add(top, sparse); }, "slots");
    require_error<MismatchError>("multiply(slots 512 and 8)", [&] { (void)ev.multiply(top, sparse); }, "slots");
    require_error<MismatchError>("add(an empty ciphertext)", [&] { (void)ev.add(top, Ciphertext{}); });
    require_error<MismatchError>("rescale(an empty ciphertext)", [&] { (void)ev.rescale(Ciphertext{}); });
    require_error<MismatchError>("decrypt(an empty ciphertext)", [&] { (void)f.decryptor.decrypt(Ciphertext{}); });
    require_error<MismatchError>("encrypt(an empty plaintext)", [&] { (void)f.encryptor.encrypt(Plaintext{}); });
    require_error<MismatchError>("decode(an empty plaintext)", [&] { (void)f.encoder.decode(Plaintext{}); });
  }
}

TEST_CASE("objects of two contexts mixed throw MismatchError", "[ckks][misuse]") {
  auto rng = cerium_test::make_rng(9003);
  INFO("seed " << cerium_test::test_seed());
  Fixtures& fx = fixtures();
  const Fixture& f = fx.f;
  const Fixture& g = fx.g;
  const Values x = random_real(rng, 4);
  const Ciphertext a = f.encrypt(x), b = g.encrypt(x);
  const Plaintext pa = f.encoder.encode(x), pb = g.encoder.encode(x);
  const auto g_relin = std::make_shared<const RelinearizationKey>(g.keygen.relinearization_key());
  const auto g_galois = std::make_shared<const GaloisKeys>(g.keygen.galois_keys({1}));
  Evaluator scratch(f.context);
  for (int trial = 0; trial < 40; ++trial) {
    const bool swap = rng() % 2 == 1;
    const Ciphertext& first = swap ? b : a;
    const Ciphertext& second = swap ? a : b;
    require_error<MismatchError>("add(two contexts)", [&] { (void)f.evaluator.add(first, second); }, "contexts");
    require_error<MismatchError>("multiply(two contexts)", [&] { (void)f.evaluator.multiply(first, second); });
    require_error<MismatchError>("sub(ciphertext, another context's plaintext)",
                                 [&] { (void)f.evaluator.sub(a, pb); });
    require_error<MismatchError>("rotate(another context's ciphertext)", [&] { (void)f.evaluator.rotate(b, 1); });
    require_error<MismatchError>("decrypt(another context's ciphertext)", [&] { (void)f.decryptor.decrypt(b); });
    require_error<MismatchError>("encrypt(another context's plaintext)", [&] { (void)f.encryptor.encrypt(pb); });
    require_error<MismatchError>("decode(another context's plaintext)", [&] { (void)f.encoder.decode(pb); });
    require_error<MismatchError>("set_relinearization_key(another context's key)",
                                 [&] { scratch.set_relinearization_key(g_relin); });
    require_error<MismatchError>("set_galois_keys(another context's keys)",
                                 [&] { scratch.set_galois_keys(g_galois); });
    (void)pa;
  }
}

TEST_CASE("key generation and parameter misuse throws typed errors", "[ckks][misuse]") {
  auto rng = cerium_test::make_rng(9004);
  INFO("seed " << cerium_test::test_seed());
  const Fixture& f = fixtures().f;
  for (int trial = 0; trial < 30; ++trial) {
    const std::int64_t steps = any_steps(rng);
    const std::vector<std::int64_t> step_list = {steps};
    succeed_or_error<InvalidArgument>("galois_keys({" + text(steps) + "})",
                                      [&] { (void)f.keygen.galois_keys(step_list); });
    const auto element = static_cast<std::uint32_t>(rng());
    succeed_or_error<InvalidArgument>("galois_key(" + text(element) + ")", [&] { (void)f.keygen.galois_key(element); });
    if (element % 2 == 0) {
      require_error<InvalidArgument>("galois_key(" + text(element) + ")", [&] { (void)f.keygen.galois_key(element); },
                                     text(element));
    }
    // Flooding parameters out of range.
    const NoiseFlooding flooding{.noise_bound = odd_double(rng),
                                 .statistical_security = pick<int>(rng, {0, -5, 129, 1000, 30}),
                                 .query_budget = pick<std::uint64_t>(rng, {0, 1, ~std::uint64_t{0}})};
    succeed_or_error<InvalidArgument>("flooding_sigma", [&] { (void)flooding_sigma(flooding); });
    const Ciphertext ct = f.encrypt(Values{{0.25, 0}});
    succeed_or_error<Error>("decrypt_public", [&] { (void)f.decryptor.decrypt_public(ct, flooding); });
    // Parameter sets that are structurally wrong.
    CkksConfig config = toy(10, 2, 1, 1);
    switch (trial % 6) {
      case 0: config.log_n = pick<int>(rng, {-1, 0, 1, 31, 64, 1000}); break;
      case 1: config.levels = pick<int>(rng, {-1, -100, 5000}); break;
      case 2: config.level_width = pick<int>(rng, {0, 3, -1, 100}); break;
      case 3: config.level_prime_bits = pick<int>(rng, {0, 1, 61, 64, -3}); break;
      case 4: config.dnum = pick<int>(rng, {0, -1, 1000}); break;
      default: config.base_primes = pick<int>(rng, {0, -1, 1000}); break;
    }
    INFO("log_n " << config.log_n << " levels " << config.levels << " width " << config.level_width << " bits "
                  << config.level_prime_bits << " dnum " << config.dnum << " base " << config.base_primes);
    succeed_or_error<ParameterError>("Parameters(config)", [&] { (void)Parameters(config); });
    const std::size_t slots = bad_slots(rng, f.max_slots());
    require_error<InvalidArgument>("context.fft(" + std::to_string(slots) + ")", [&] { (void)f.context->fft(slots); });
  }
}
