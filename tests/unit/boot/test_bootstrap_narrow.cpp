// Narrow levels (CkksConfig::narrow_levels: one prime of about 2^30 a level below the bootstrapper's output) at a
// toy size: the bootstrap lands on the narrow chain's scale, products rescaled level after level stay on it, and
// a value bootstrapped, multiplied down to level 1 and bootstrapped again keeps its precision. Precision as in
// test_bootstrap.cpp: bits of the mean and worst error against the plaintext values.
#include <cmath>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/scale.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;
using namespace cerium::boot;

namespace {

constexpr int kNarrow = 6;

CkksConfig narrow_toy(int log_n) {
  CkksConfig c = presets::bootstrappable_toy(log_n, 16 + kNarrow);
  c.narrow_levels = kNarrow;
  return c;
}

double bits(const Values& got, const Values& want, bool worst) {
  double total = 0, largest = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(got.at(i) - want[i]);
    total += e;
    largest = std::max(largest, e);
  }
  return -std::log2(worst ? largest : total / static_cast<double>(want.size()));
}

}  // namespace

TEST_CASE("narrow levels: the bootstrap lands on the narrow chain and values multiply down it (N = 2^11)",
          "[ckks][bootstrap][narrow][heavy]") {
  Fixture f(narrow_toy(11), {.relinearization = true});
  const Parameters& params = f.context->parameters();
  auto first_rng = cerium_test::make_rng(1);
  CHECK(f.encrypt(random_real(first_rng, 4), 1, 4).scale() == params.default_scale_at(1));
  Bootstrapper boot(f.context, {});
  boot.set_keys(std::make_shared<const BootstrapKeys>(boot.generate_keys(f.keygen)));
  REQUIRE(boot.levels().output == kNarrow);  // the bootstrap's 16 levels are the wide ones above
  auto rng = cerium_test::make_rng(91);
  INFO("seed " << cerium_test::test_seed());
  std::uniform_real_distribution<double> size(0.9, 1.0);
  std::bernoulli_distribution sign(0.5);
  const std::size_t slots = boot.slots();
  Values want = random_real(rng, slots);
  // The first input at a scale of 2^40, so that its own error (a fresh encryption at about 2^30 keeps about 18
  // bits at this N) does not hide the bootstrap's; later rounds bootstrap what the products left.
  Ciphertext ct = f.encrypt(want, 1, slots, std::ldexp(1.0, 40));
  for (int round = 0; round < 2; ++round) {
    ct = boot.bootstrap(ct);
    REQUIRE(ct.level() == kNarrow);
    CHECK(ckks::scales_match(ct.scale(), params.default_scale_at(kNarrow)));
    const double mean_bits = bits(f.decrypt(ct), want, false), worst_bits = bits(f.decrypt(ct), want, true);
    INFO("round " << round << ": bootstrapped " << mean_bits << " bits (mean), " << worst_bits << " worst");
    // The bootstrap alone (21.4 / 18.7 bits here; 24.7 / 22.9 landing on a wide level's 2^56): its last rescale
    // lands on 2^30. Then the input's error: 17 bits after the products below.
    CHECK(mean_bits >= (round == 0 ? 20 : 15));
    CHECK(worst_bits >= (round == 0 ? 17 : 12));
    // Down every narrow level: times a fresh encryption of signs of size 0.9..1 at the default scale, rescaled by
    // one prime; the scale stays the level's default.
    while (ct.level() > 1) {
      Values w(slots);
      for (auto& v : w) v = sign(rng) ? size(rng) : -size(rng);
      const Ciphertext cw = f.encrypt(w, ct.level(), slots, ct.scale());
      ct = f.evaluator.rescale(f.evaluator.multiply(ct, cw));
      want = zip(want, w, [](Complex u, Complex v) { return u * v; });
      CHECK(ckks::scales_match(ct.scale(), params.default_scale_at(ct.level())));
    }
    const double mean = bits(f.decrypt(ct), want, false), worst = bits(f.decrypt(ct), want, true);
    INFO("round " << round << ": at level 1 after " << kNarrow - 1 << " products: mean " << mean << " bits, worst "
                  << worst);
    CHECK(mean >= 15);
    CHECK(worst >= 12);
  }
}
