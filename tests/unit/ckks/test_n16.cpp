// The scheme at the size bootstrapping and the workloads use: N = 2^16, 50 limbs, dnum 5 (presets::leveled_n16).
// One fixture (key generation at this size takes seconds on the CPU) serves every section.
#include "evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

TEST_CASE("multiply, rescale and hoisted rotations at N = 2^16 (presets::leveled_n16)", "[ckks][evaluator][n16]") {
  auto rng = cerium_test::make_rng(1616);
  static const Fixture f(presets::leveled_n16(), {.rotations = {1, -5}});
  const std::size_t n = f.max_slots();
  const Values x = random_complex(rng, n), y = random_complex(rng, n);
  const Ciphertext cx = f.encrypt(x), cy = f.encrypt(y);

  SECTION("fresh encryption") {
    // Mean precision of a fresh public-key encryption: at least log2(scale) - (log2(N) + 2) = 38 bits.
    const Values got = f.decrypt(cx);
    double total_error = 0;
    for (std::size_t i = 0; i < n; ++i) total_error += std::abs(got[i] - x[i]);
    const double mean_bits = -std::log2(total_error / static_cast<double>(n));
    INFO("fresh: mean " << mean_bits << " bits, worst " << precision_bits(got, x) << " bits");
    CHECK(mean_bits >= 38);
  }
  SECTION("multiply, relinearize, rescale, then two hoisted rotations") {
    const Ciphertext product = f.evaluator.rescale(f.evaluator.multiply(cx, cy));
    REQUIRE(product.level() == f.context->max_level() - 1);
    const Values want = zip(x, y, [](Complex u, Complex v) { return u * v; });
    const double product_bits = precision_bits(f.decrypt(product), want);
    const std::int64_t steps[] = {1, -5};
    const auto rotations = f.evaluator.rotate_hoisted(product, steps);
    const double bits_1 = precision_bits(f.decrypt(rotations[0]), rotated(want, 1));
    const double bits_5 = precision_bits(f.decrypt(rotations[1]), rotated(want, -5));
    INFO(f.context->parameters().describe() << ": product " << product_bits << " bits, rotations " << bits_1 << ", "
                                            << bits_5 << " bits");
    // The product: log2(scale) - log2(N) - 9 = 31 (the formula of the smaller tests). A rotation adds a key
    // switch at scale 2^56 whose ModDown rounding (about alpha (1 + |s|_1) = 2^19 per coefficient, times ~2^8 in
    // the slots) dominates: 2^-29 at worst, so 28 bits are asserted (measured 30.2).
    CHECK(product_bits >= 31);
    CHECK(bits_1 >= 28);
    CHECK(bits_5 >= 28);
  }
}
