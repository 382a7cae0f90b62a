// Minimax sign approximations: the Remez result equioscillates (the alternation theorem's certificate of
// optimality) and beats the Chebyshev interpolant of its degree; the composite {15, 15, 27} reaches 2^-13 on
// [-1, -eps] U [eps, 1] at eps = 2^-9 on fresh random points, keeps the sign of x and stays below 2 near 0; bad
// arguments and non-convergence are typed errors.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cerium/circuits/minimax.hpp"
#include "cerium/core/error.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

namespace circuits = cerium::circuits;
using cerium::InvalidArgument;
using cerium::NumericalError;

namespace {

double sign_of(double x) { return x < 0 ? -1.0 : 1.0; }

// max |p(x) - 1| over a dense grid and random points of [lower, upper].
double sampled_error(const circuits::Polynomial& p, double lower, double upper, std::mt19937_64& rng) {
  double worst = 0;
  for (int j = 0; j <= 20000; ++j) worst = std::max(worst, std::abs(p.evaluate(lower + (upper - lower) * j / 20000) - 1));
  std::uniform_real_distribution<double> d(lower, upper);
  for (int j = 0; j < 20000; ++j) worst = std::max(worst, std::abs(p.evaluate(d(rng)) - 1));
  return worst;
}

}  // namespace

TEST_CASE("the Remez minimax sign equioscillates and beats the Chebyshev interpolant", "[circuits][minimax]") {
  auto rng = cerium_test::make_rng(71);
  INFO("test seed " << cerium_test::test_seed());
  struct Case {
    int degree;
    double lower, upper;
  };
  for (const Case c : {Case{7, 0.1, 1}, Case{15, 1.0 / 512, 1}, Case{15, 0.3, 1}, Case{27, 0.05, 1}, Case{63, 0.01, 1},
                       Case{15, 0.05, 0.5}}) {
    INFO("degree " << c.degree << " on [" << c.lower << ", " << c.upper << "]");
    const circuits::MinimaxSign m = circuits::minimax_sign(c.degree, c.lower, c.upper);
    INFO("error " << m.error << " after " << m.iterations << " iterations");
    CHECK(m.polynomial.degree() == static_cast<std::size_t>(c.degree));
    CHECK(m.polynomial.parity() == circuits::Parity::odd);
    CHECK(m.polynomial.upper == c.upper);  // on [-upper, upper]: [-1, 1] costs no interval map

    // (degree + 3) / 2 points in [lower, upper] where p - 1 alternates in sign at the same magnitude.
    REQUIRE(m.alternation.size() == static_cast<std::size_t>(c.degree + 3) / 2);
    for (std::size_t i = 0; i < m.alternation.size(); ++i) {
      const double x = m.alternation[i];
      const double r = m.polynomial.evaluate(x) - 1;
      CHECK(x >= c.lower);
      CHECK(x <= c.upper);
      if (i > 0) CHECK(x > m.alternation[i - 1]);
      CHECK(std::abs(std::abs(r) - m.error) <= 1e-6 * m.error);
      if (i > 0) CHECK(sign_of(r) == -sign_of(m.polynomial.evaluate(m.alternation[i - 1]) - 1));
      CHECK(std::abs(m.polynomial.evaluate(-x) + 1 + r) <= 1e-12);  // odd: the same on [-upper, -lower]
    }
    // No larger error anywhere: with the alternation, the best approximation of this degree.
    CHECK(sampled_error(m.polynomial, c.lower, c.upper, rng) <= m.error * (1 + 1e-9));

    // The interpolant of sign at the Chebyshev nodes of [-upper, upper], of the same degree, does worse there.
    const auto interpolant = circuits::Polynomial::chebyshev_interpolant(
        [](long double t) { return t < 0 ? -1.0L : 1.0L; }, c.degree, -c.upper, c.upper);
    const double interpolant_error = sampled_error(interpolant, c.lower, c.upper, rng);
    INFO("interpolant error " << interpolant_error);
    CHECK(m.error < interpolant_error);
  }
}

TEST_CASE("the minimax composite {15, 15, 27} approximates sign within 2^-13 for eps <= |x| <= 1, eps = 2^-9",
          "[circuits][minimax]") {
  auto rng = cerium_test::make_rng(72);
  INFO("test seed " << cerium_test::test_seed());
  const double eps = std::exp2(-9);
  const circuits::CompositeSign sign = circuits::composite_sign({15, 15, 27}, eps);
  REQUIRE(sign.stages.size() == 3);
  // Measured: stage errors 0.952 on [2^-9, 1], 0.558 on [0.0246, 1], 9.94e-5 on [0.284, 1]; composite 9.94e-5
  // = 2^-13.30, peak 1 + 9.94e-5.
  std::string stages;
  for (const auto& s : sign.stages) stages += "[" + std::to_string(s.lower) + ", 1]: " + std::to_string(s.error) + "; ";
  INFO("stage errors " << stages);
  CHECK(sign.error < std::exp2(-13));
  CHECK(sign.error > std::exp2(-13.5));  // the stated figure, not a much better one by accident
  CHECK(sign.stages[0].lower == eps);
  CHECK(sign.stages[0].error == Catch::Approx(circuits::minimax_sign(15, eps).error).epsilon(1e-12));
  for (std::size_t i = 1; i < sign.stages.size(); ++i) CHECK(sign.stages[i].lower > sign.stages[i - 1].lower);
  CHECK(sign.error == sign.stages.back().error);

  std::uniform_real_distribution<double> away(eps, 1), near(0, eps);
  double worst = 0;
  for (int j = 0; j < 40000; ++j) {
    const double x = (j % 2 == 0 ? 1 : -1) * away(rng);  // [eps, 1] and [-1, -eps]
    worst = std::max(worst, std::abs(sign.evaluate(x) - sign_of(x)));
  }
  INFO("measured " << worst << " = 2^" << std::log2(worst) << ", designed " << sign.error);
  CHECK(worst <= sign.error * (1 + 1e-9));
  CHECK(worst > 0.5 * sign.error);  // random points come near the equioscillation peaks
  // Below eps: the sign of x kept, the magnitude at most the peak (below 2), every stage's input in [-1, 1].
  CHECK(sign.peak < 2);
  int wrong_sign = 0, over_peak = 0, out_of_range = 0;
  for (int j = 0; j < 10000; ++j) {
    const double x = (j % 2 == 0 ? 1 : -1) * near(rng);
    const double y = sign.evaluate(x);
    wrong_sign += sign_of(y) != sign_of(x);
    over_peak += std::abs(y) > sign.peak;
    double t = x;
    for (std::size_t i = 0; i + 1 < sign.stages.size(); ++i) {
      t = sign.stages[i].polynomial.evaluate(t);
      out_of_range += std::abs(t) > 1;
    }
  }
  CHECK(wrong_sign == 0);
  CHECK(over_peak == 0);
  CHECK(out_of_range == 0);
}

TEST_CASE("a composite with more stages than it needs stays bounded and keeps the sign near 0", "[circuits][minimax]") {
  // After the second stage the image is so narrow that its optimum would leave [0, 1] for inputs below it: those
  // stages are designed on a wider interval.
  const circuits::CompositeSign sign = circuits::composite_sign({27, 27, 27, 27}, 0.1);
  INFO("error " << sign.error << ", peak " << sign.peak);
  CHECK(sign.error < 1e-13);
  CHECK(sign.peak < 2);
  double lowest = 1, highest = 0, worst = 0;
  for (int j = 1; j <= 20000; ++j) {
    const double x = static_cast<double>(j) / 20000;
    const double y = sign.evaluate(x);
    lowest = std::min(lowest, y);
    highest = std::max(highest, y);
    if (x >= 0.1) worst = std::max(worst, std::abs(y - 1));
  }
  CHECK(lowest > 0);
  CHECK(highest <= sign.peak);
  CHECK(worst <= sign.error * (1 + 1e-6) + 1e-15);
}

TEST_CASE("minimax sign arguments and non-convergence are typed errors naming the value", "[circuits][minimax]") {
  const auto names = [](auto call, const std::string& value) {
    try {
      call();
      FAIL("accepted " << value);
    } catch (const InvalidArgument& e) {
      CHECK(std::string(e.what()).find(value) != std::string::npos);
    }
  };
  names([] { circuits::minimax_sign(14, 0.1); }, "14");
  names([] { circuits::minimax_sign(1, 0.1); }, "1");
  names([] { circuits::minimax_sign(15, 0.0); }, "0");
  names([] { circuits::minimax_sign(15, 0.5, 0.25); }, "0.25");
  names([] { circuits::composite_sign({15, 16, 27}, 0.01); }, "16");
  names([] { circuits::composite_sign({15, -3}, 0.01); }, "-3");
  names([] { circuits::composite_sign({15}, 0.0); }, "0");
  names([] { circuits::composite_sign({15}, 1.0); }, "1");
  names([] { circuits::composite_sign({15}, std::nan("")); }, "nan");
  CHECK_THROWS_AS(circuits::composite_sign({}, 0.01), InvalidArgument);
  // Degree 27 on [0.001, 1] needs 8 exchanges: 2 are not enough.
  CHECK_THROWS_AS(circuits::minimax_sign(27, 0.001, 1, {.max_iterations = 2}), NumericalError);
  CHECK(circuits::minimax_sign(27, 0.001, 1).iterations <= 12);
}
