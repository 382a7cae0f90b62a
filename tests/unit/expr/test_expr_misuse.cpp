// Randomized misuse of the eDSL: expressions evaluated with missing keys, levels out of range, polynomials deeper
// than the levels left, leaves of two contexts, non-finite constants, empty sums. Every eval must succeed or throw
// the cerium::Error subclass of its kind (core/error.hpp), never a standard-library exception.

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "expr_test_support.hpp"
#include "support/catch.hpp"
#include "support/misuse.hpp"

using namespace expr_test;
using cerium_test::require_error;
using cerium_test::pick;
using cerium_test::succeed_or_error;
using cerium::plan::EvalContext;
using cerium::plan::eval;

namespace {

std::string text(std::int64_t v) { return std::to_string(v); }

// N = 2^10, 3 levels; keys for step 1 only.
Fixture& small() {
  static Fixture f(toy(10, 3, 1, 1), {.relinearization = true, .rotations = {1}});
  return f;
}

}  // namespace

TEST_CASE("eDSL misuse throws typed errors", "[expr][misuse]") {
  auto rng = cerium_test::make_rng(9301);
  INFO("seed " << cerium_test::test_seed());
  Fixture& f = small();
  const EvalContext context{f.evaluator};
  const int max_level = f.context->max_level();
  Fixture other(toy(11, 2, 1, 1), {.relinearization = true});
  for (int trial = 0; trial < 30; ++trial) {
    const Values v = random_real(rng, 8);
    const auto x = lift(f.encrypt(v));
    const auto bottom = lift(f.encrypt(v, 0));
    // Rotations without keys (steps that reduce to 0 or 1 mod N/2 have one).
    const std::int64_t steps = pick<std::int64_t>(rng, {std::numeric_limits<std::int64_t>::min(),
                                                        std::numeric_limits<std::int64_t>::max(),
                                                        static_cast<std::int64_t>(rng()), 2, -1});
    succeed_or_error<MissingKeyError>("eval(rotate(x, " + text(steps) + "))",
                                      [&] { (void)eval(rotate(x, steps), context); });
    succeed_or_error<MissingKeyError>("eval(sum_rotations(x, {1, " + text(steps) + "}))",
                                      [&] { (void)eval(sum_rotations(x, std::vector<std::int64_t>{1, steps}), context); });
    require_error<MissingKeyError>("eval(conjugate(x))", [&] { (void)eval(conjugate(x), context); });
    require_error<InvalidArgument>("sum_rotations(x, {})",
                                   [&] { (void)sum_rotations(x, std::vector<std::int64_t>{}); }, "empty");
    require_error<InvalidArgument>("sum({})", [&] { (void)sum(std::vector<CipherLeaf>{}); }, "no terms");
    // Levels.
    const int level = pick<int>(rng, {-1, -1000, max_level + 1, std::numeric_limits<int>::max(),
                                      std::numeric_limits<int>::min()});
    require_error<LevelError>("eval(level_down(x, " + text(level) + "))",
                              [&] { (void)eval(level_down(x, level), context); }, text(level));
    require_error<LevelError>("eval(rescale(level-0 x))", [&] { (void)eval(rescale(bottom * bottom), context); });
    require_error<LevelError>("eval(level-0 x * 0.5)", [&] { (void)eval(rescale(bottom * 0.5), context); });
    // A polynomial deeper than the levels: degree 15 needs 4 levels, the parameters have 3.
    std::array<double, 16> coefficients{};
    for (auto& c : coefficients) c = std::uniform_real_distribution<double>(-1, 1)(rng);
    require_error<LevelError>("eval(polynomial of degree 15 on 3 levels)",
                              [&] { (void)eval(polynomial(x, coefficients), context); });
    std::array<double, 4> cubic{0.5, std::nan(""), 0.25, 0.125};
    require_error<InvalidArgument>("eval(polynomial with a NaN coefficient)",
                                   [&] { (void)eval(polynomial(x, cubic), context); });
    // Non-finite constants.
    const double c = pick<double>(rng, {std::nan(""), std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity()});
    require_error<InvalidArgument>("eval(x + " + std::to_string(c) + ")", [&] { (void)eval(x + c, context); });
    require_error<InvalidArgument>("eval(x * " + std::to_string(c) + ")", [&] { (void)eval(rescale(x * c), context); });
    // Leaves of two contexts, and another context's evaluator.
    const auto foreign = lift(other.encrypt(v, 1));
    require_error<MismatchError>("eval(x + another context's ciphertext)", [&] { (void)eval(x + foreign, context); });
    require_error<MismatchError>("eval(x * another context's plaintext)",
                                 [&] { (void)eval(x * lift(other.encoder.encode(v)), context); });
    require_error<MismatchError>("eval(x) with another context's evaluator",
                                 [&] { (void)eval(x + 1.0, EvalContext{other.evaluator}); });
    require_error<MismatchError>("eval(an empty ciphertext)", [&] { (void)eval(lift(Ciphertext{}) + 1.0, context); });
    // Operands of other slot counts.
    const auto sparse = lift(f.encrypt(v, -1, 8));
    require_error<MismatchError>("eval(512 slots + 8 slots)", [&] { (void)eval(x + sparse, context); }, "slots");
  }
}
