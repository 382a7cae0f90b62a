// PolynomialEvaluator on encrypted slots against the same polynomial in doubles on random inputs: Chebyshev
// interpolants on intervals other than [-1, 1], odd polynomials (fewer products), the power basis; the
// simulation against the real run (levels, scales); and the scale chain's rules.

#include <cmath>
#include <vector>

#include "cerium/circuits/polynomial_evaluator.hpp"
#include "cerium/circuits/scale_chain.hpp"
#include "support/catch.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;
namespace circuits = cerium::circuits;

namespace {

constexpr std::size_t kSlots = 128;

Fixture& fixture() {
  static Fixture f(toy(12, 9, 2, 3), {.relinearization = true});
  return f;
}

Values uniform(std::mt19937_64& rng, double lower, double upper) {
  std::uniform_real_distribution<double> dist(lower, upper);
  Values v(kSlots);
  for (auto& x : v) x = {dist(rng), 0.0};
  return v;
}

// Runs p on x encrypted at the top level; checks the simulation against the run and returns the precision.
double evaluate_bits(const circuits::PolynomialEvaluator& p, const Values& x, int* depth = nullptr) {
  Fixture& f = fixture();
  const Ciphertext ct = f.encrypt(x, -1, kSlots);
  const auto shape = p.simulate(f.evaluator, ct.level(), ct.scale());
  const Ciphertext y = p.evaluate(f.evaluator, ct);
  CHECK(shape.output_level == y.level());
  CHECK(cerium::ckks::scales_match(shape.output_scale, y.scale()));
  CHECK(shape.depth == ct.level() - y.level());
  if (depth != nullptr) *depth = shape.depth;
  Values want(kSlots);
  for (std::size_t i = 0; i < kSlots; ++i) want[i] = p.polynomial().evaluate(x[i].real());
  const Values out = f.decrypt(y);
  return precision_bits(Values(out.begin(), out.begin() + kSlots), want);
}

}  // namespace

TEST_CASE("Chebyshev interpolants evaluate like their plaintext reference", "[circuits][polynomial]") {
  auto rng = cerium_test::make_rng(921);
  SECTION("sigmoid on [-8, 8], degree 31") {
    const auto p = circuits::Polynomial::chebyshev_interpolant(
        [](long double x) { return 1 / (1 + std::exp(-x)); }, 31, -8, 8);
    CHECK(std::abs(p.evaluate(1.5) - 1 / (1 + std::exp(-1.5))) < 1e-5);  // the interpolant itself is close
    int depth = 0;
    const double bits = evaluate_bits(circuits::PolynomialEvaluator(p), uniform(rng, -8, 8), &depth);
    INFO("sigmoid degree 31: " << bits << " bits, depth " << depth);
    CHECK(bits >= 25);
    CHECK(depth == 1 + 5 + 1);  // the interval map, ceil(log2(32)) + 1
  }
  SECTION("an odd polynomial makes only odd powers") {
    const auto p = circuits::Polynomial::chebyshev_interpolant([](long double x) { return std::tanh(3 * x); }, 27);
    auto odd = p;
    for (std::size_t k = 0; k < odd.coefficients.size(); k += 2) odd.coefficients[k] = 0;  // exact zeros
    REQUIRE(odd.parity() == circuits::Parity::odd);
    auto dense = odd;
    dense.coefficients[2] = 1e-300;  // not odd any more, the same values
    const auto& f = fixture();
    const auto odd_shape = circuits::PolynomialEvaluator(odd).simulate(f.evaluator, 9, f.context->parameters().default_scale());
    const auto dense_shape =
        circuits::PolynomialEvaluator(dense).simulate(f.evaluator, 9, f.context->parameters().default_scale());
    INFO("products: odd " << odd_shape.ciphertext_products << ", dense " << dense_shape.ciphertext_products);
    CHECK(odd_shape.ciphertext_products < dense_shape.ciphertext_products);
    CHECK(evaluate_bits(circuits::PolynomialEvaluator(odd), uniform(rng, -1, 1)) >= 25);
  }
}

TEST_CASE("power-basis polynomials", "[circuits][polynomial]") {
  auto rng = cerium_test::make_rng(922);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (const std::size_t degree : {2u, 3u, 7u, 12u}) {
    std::vector<double> c(degree + 1);
    for (auto& v : c) v = dist(rng) / static_cast<double>(degree);
    const double bits = evaluate_bits(circuits::PolynomialEvaluator(circuits::Polynomial::power(c)), uniform(rng, -1, 1));
    INFO("degree " << degree << ": " << bits << " bits");
    CHECK(bits >= 25);
  }
}

TEST_CASE("too few levels fail in the simulation and in the run", "[circuits][polynomial]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(923);
  const circuits::PolynomialEvaluator p(circuits::Polynomial::chebyshev_interpolant(
      [](long double x) { return std::sin(x); }, 63));
  const Ciphertext ct = f.encrypt(uniform(rng, -1, 1), 4, kSlots);
  CHECK_THROWS_AS(p.simulate(f.evaluator, ct.level(), ct.scale()), LevelError);
  CHECK_THROWS_AS(p.evaluate(f.evaluator, ct), LevelError);
  CHECK_THROWS_AS(circuits::PolynomialEvaluator(circuits::Polynomial::power({1.0})), InvalidArgument);
}

TEST_CASE("the scale chain's levels and rules", "[circuits][chain]") {
  Fixture& f = fixture();
  const double scale = f.context->parameters().default_scale();
  const auto down = circuits::ScaleChain::descending(f.evaluator, 6, scale);
  for (int l = 6; l >= 1; --l)
    CHECK(down.at(l - 1) == down.at(l) * down.at(l) / f.evaluator.level_prime_product(l));
  const auto up = circuits::ScaleChain::ascending(f.evaluator, 2, scale, 6);
  CHECK(up.at(2) == scale);
  for (int l = 3; l <= 6; ++l)
    CHECK(cerium::ckks::scales_match(up.at(l - 1), up.at(l) * up.at(l) / f.evaluator.level_prime_product(l)));
  CHECK_THROWS_AS(up.at(1), LevelError);

  auto rng = cerium_test::make_rng(924);
  const Values x = uniform(rng, -1, 1);
  const Ciphertext ct = f.encrypt(x, 6, kSlots);
  const Ciphertext square = down.multiply(f.evaluator, ct, ct);
  CHECK(square.level() == 5);
  CHECK(cerium::ckks::scales_match(square.scale(), down.at(5)));
  Ciphertext lowered = ct.clone();
  up.bring_to(f.evaluator, lowered, 4);  // off the chain at 6: adjust_scale from level 5
  CHECK(lowered.level() == 4);
  CHECK(cerium::ckks::scales_match(lowered.scale(), up.at(4)));
  const Values out = f.decrypt(lowered);
  CHECK(precision_bits(Values(out.begin(), out.begin() + kSlots), x) >= 25);
  Ciphertext off = f.encrypt(x, 4, kSlots, scale * 3);
  CHECK_THROWS_AS(up.bring_to(f.evaluator, off, 4), LevelError);
}
