// No standard-library exception escapes eval (issue 26): polynomials of degrees 1 to 63 on operands at every level
// (so up to five levels deeper than the operand has; two deeper used to throw std::out_of_range from the scale
// chain's .at(-1) in plan/power_basis.hpp), and rotations by odd steps (0, multiples of the slots, INT64_MIN, huge,
// without keys) inside expressions, under every PlanOptions. Each eval must succeed or throw a cerium::Error whose
// message names the operation; a result that succeeds decrypts to the plain answer where one is computed.

#include <array>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include "expr_test_support.hpp"
#include "support/api_arguments.hpp"
#include "support/catch.hpp"
#include "support/misuse.hpp"
#include "support/random.hpp"

using namespace expr_test;
using cerium::plan::eval;
using cerium::plan::EvalContext;
using cerium::plan::PlanOptions;
using cerium_test::pick;

using namespace cerium_test;

namespace {

// N = 2^10, 3 levels of one 28-bit prime; keys for steps 1, -1 and 5 and conjugation.
Fixture& small() {
  static Fixture f(toy(10, 3, 1, 1), {.relinearization = true, .rotations = {1, -1, 5}, .conjugation = true});
  return f;
}

PlanOptions draw_options(std::mt19937_64& rng) {
  return PlanOptions{.fuse_sums = rng() % 2 == 0,
                     .share_subexpressions = rng() % 2 == 0,
                     .fold_rescale = pick<std::optional<bool>>(rng, {std::nullopt, true, false})};
}

std::string describe(const PlanOptions& o) {
  return std::string("fuse_sums ") + (o.fuse_sums ? "on" : "off") + ", share " +
         (o.share_subexpressions ? "on" : "off") + ", fold_rescale " +
         (o.fold_rescale ? (*o.fold_rescale ? "on" : "off") : "unset");
}

// p(x) in the clear.
template <std::size_t N>
Values plain_polynomial(const Values& x, const std::array<double, N>& c) {
  Values out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    Complex power(1, 0), sum(0, 0);
    for (std::size_t k = 0; k < N; ++k) {
      sum += c[k] * power;
      power *= x[i];
    }
    out[i] = sum;
  }
  return out;
}

// One polynomial of degree D on x (at whatever level x is): succeeds with the right values, or throws a
// LevelError naming the polynomial.
template <std::size_t D>
void try_polynomial(Tally& tally, std::mt19937_64& rng, const Ciphertext& x, const Values& plain,
                    const std::string& what, const PlanOptions& options) {
  Fixture& f = small();
  std::array<double, D + 1> c{};
  // Coefficients that keep |p(x)| <= 1 for |x| <= 1/2.
  for (auto& v : c) v = std::uniform_real_distribution<double>(-0.5, 0.5)(rng) / static_cast<double>(D + 1);
  const std::string call =
      "eval(polynomial of degree " + std::to_string(D) + " on " + what + ", " + describe(options) + ")";
  Ciphertext out;
  bool threw_level_error = false;
  const bool ok = attempt(tally, call, "polynomial", [&] {
    try {
      out = eval(polynomial(lift(x), c), EvalContext{f.evaluator}, options);
    } catch (const LevelError&) {
      threw_level_error = true;
      throw;
    }
  });
  // Deeper than x's levels: the error is the LevelError of its kind; within them, it succeeds.
  const int depth = cerium::expr::Polynomial<CipherLeaf, D>::depth;
  INFO(call << ": depth " << depth << ", x at level " << x.level());
  if (depth <= x.level()) {
    CHECK(ok);
  } else {
    CHECK(threw_level_error);
  }
  if (ok) {
    CHECK(out.level() == x.level() - depth);
    const double bits = precision_bits(f.decrypt(out), plain_polynomial(plain, c));
    INFO(call << ": " << bits << " bits");
    CHECK(bits >= 8);
  }
}

template <std::size_t... D>
void try_polynomials(Tally& tally, std::mt19937_64& rng, const Ciphertext& x, const Values& plain,
                     const std::string& what, const PlanOptions& options) {
  (try_polynomial<D>(tally, rng, x, plain, what, options), ...);
}

std::int64_t draw_steps(std::mt19937_64& rng) {
  return pick<std::int64_t>(rng, {0, 1, -1, 5, 2, -5, 512, -512, 513, 1024, i64_min, i64_max, i64_min + 1,
                                  static_cast<std::int64_t>(rng()), -static_cast<std::int64_t>(rng() % 100000)});
}

}  // namespace

TEST_CASE("eDSL polynomials deeper than their operand's levels throw LevelErrors naming the polynomial",
          "[expr][api_arguments]") {
  auto rng = cerium_test::make_rng(2611);
  INFO("seed " << cerium_test::test_seed());
  Fixture& f = small();
  Tally tally;
  for (int level = 0; level <= f.context->max_level(); ++level) {
    const Values plain = map(random_real(rng, 16), [](Complex v) { return v * 0.5; });
    const Ciphertext x = f.encrypt(plain, level, 16);
    const std::string what = "x at level " + std::to_string(level);
    try_polynomials<1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 31, 63>(tally, rng, x, plain, what, draw_options(rng));
  }
  // The cases: a degree-15 polynomial (depth 5) one and two levels deeper than x, under both plan forms.
  const Values plain = map(random_real(rng, 16), [](Complex v) { return v * 0.5; });
  for (const int level : {f.context->max_level(), f.context->max_level() - 1}) {
    const Ciphertext x = f.encrypt(plain, level, 16);
    for (const bool fuse : {false, true}) {
      try_polynomial<15>(tally, rng, x, plain, "x at level " + std::to_string(level), PlanOptions{.fuse_sums = fuse});
    }
  }
  INFO(tally.succeeded << " evals succeeded, " << tally.typed << " threw cerium::Errors");
  CHECK(tally.succeeded > 0);
  CHECK(tally.typed > 0);
}

TEST_CASE("eDSL rotations by odd steps inside expressions throw cerium::Errors only", "[expr][api_arguments]") {
  auto rng = cerium_test::make_rng(2612);
  INFO("seed " << cerium_test::test_seed());
  Fixture& f = small();
  const Evaluator keyless(f.context);
  const int max_level = f.context->max_level();
  Tally tally;
  for (int draw = 0; draw < 200; ++draw) {
    const int level = static_cast<int>(rng() % static_cast<std::uint64_t>(max_level + 1));
    const std::size_t slots = pick<std::size_t>(rng, {8, 512, 1});
    const Values v = random_real(rng, std::min<std::size_t>(slots, 8));
    const auto x = lift(f.encrypt(v, level, slots));
    const std::int64_t s = draw_steps(rng), t = draw_steps(rng);
    const PlanOptions options = draw_options(rng);
    const bool without_keys = rng() % 6 == 0;
    const EvalContext context{without_keys ? keyless : f.evaluator};
    const std::string args = "x at level " + std::to_string(level) + " of " + std::to_string(slots) + " slots, " +
                             std::to_string(s) + ", " + std::to_string(t) + (without_keys ? ", without keys" : "") +
                             ", " + describe(options);
    const std::string rot = "rotat|Galois|relineariz";  // a missing key names the rotation (or relinearization)
    switch (rng() % 9) {
      case 0:
        attempt(tally, "eval(rotate(x, s); " + args + ")", rot, [&] { (void)eval(rotate(x, s), context, options); });
        break;
      case 1:
        attempt(tally, "eval(rotate(rotate(x, s), t); " + args + ")", rot,
                [&] { (void)eval(rotate(rotate(x, s), t), context, options); });
        break;
      case 2:
        attempt(tally, "eval(sum_rotations(x, {s, t, s}); " + args + ")", rot, [&] {
          (void)eval(sum_rotations(x, std::vector<std::int64_t>{s, t, s}), context, options);
        });
        break;
      case 3:
        attempt(tally, "eval(rotate(x * x, s); " + args + ")", rot + "|level|multiply",
                [&] { (void)eval(rotate(x * x, s), context, options); });
        break;
      case 4:
        attempt(tally, "eval(rotate(rescale(x * 0.5), s) + x; " + args + ")", rot + "|level|multiply|rescale",
                [&] { (void)eval(rotate(rescale(x * 0.5), s) + x, context, options); });
        break;
      case 5:
        attempt(tally, "eval(conjugate(rotate(x, s)); " + args + ")", rot + "|conjugat",
                [&] { (void)eval(conjugate(rotate(x, s)), context, options); });
        break;
      case 6:
        attempt(tally, "eval(sum_rotations(x, s, t) * integer(INT64_MIN); " + args + ")", rot,
                [&] { (void)eval(sum_rotations(x, s, t) * cerium::expr::integer(i64_min), context, options); });
        break;
      case 7: {
        const int down = pick<int>(rng, {-1, -5, 0, level, level + 1, max_level + 3, std::numeric_limits<int>::min()});
        attempt(tally, "eval(rotate(level_down(x, " + std::to_string(down) + "), s); " + args + ")", rot + "|level",
                [&] { (void)eval(rotate(level_down(x, down), s), context, options); });
        break;
      }
      default:
        attempt(tally, "eval(rotate(x, s) + rotate(x, s) * rotate(x, t); " + args + ")", rot + "|level|multiply",
                [&] { (void)eval(rotate(x, s) + rotate(x, s) * rotate(x, t), context, options); });
        break;
    }
  }
  // A rotation that succeeds is the rotation: steps 5 + INT64_MIN reduce to 5 - 2^63 mod 8 = 5 at 8 slots.
  const Values v = random_real(rng, 8);
  const Ciphertext x = f.encrypt(v, -1, 8);
  Ciphertext out;
  REQUIRE(attempt(tally, "eval(rotate(x, INT64_MIN + 5))", "",
                  [&] { out = eval(rotate(lift(x), i64_min + 5), EvalContext{f.evaluator}); }));
  CHECK(precision_bits(f.decrypt(out), rotated(v, 5)) >= 15);
  INFO(tally.succeeded << " evals succeeded, " << tally.typed << " threw cerium::Errors");
  CHECK(tally.succeeded > 20);
  CHECK(tally.typed > 20);
}
