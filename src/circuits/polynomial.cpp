#include "cerium/circuits/polynomial.hpp"

#include <cmath>
#include <numbers>

#include "cerium/core/check.hpp"

namespace cerium::circuits {

std::vector<double> chebyshev_coefficients(const std::function<long double(long double)>& f, int degree) {
  require(degree >= 1, "Chebyshev degree {} must be at least 1", degree);
  const int nodes = degree + 1;
  const long double pi = std::numbers::pi_v<long double>;
  std::vector<long double> values(static_cast<std::size_t>(nodes));
  for (int k = 0; k < nodes; ++k) values[static_cast<std::size_t>(k)] = f(std::cos(pi * (k + 0.5L) / nodes));
  std::vector<double> c(static_cast<std::size_t>(nodes));
  for (int i = 0; i < nodes; ++i) {
    long double sum = 0;
    for (int k = 0; k < nodes; ++k) sum += values[static_cast<std::size_t>(k)] * std::cos(pi * i * (k + 0.5L) / nodes);
    c[static_cast<std::size_t>(i)] = static_cast<double>(sum * (i == 0 ? 1.0L : 2.0L) / nodes);
  }
  return c;
}

double chebyshev_evaluate(const std::vector<double>& c, double x) {
  double b1 = 0, b2 = 0;
  for (std::size_t i = c.size(); i-- > 1;) {
    const double b0 = 2 * x * b1 - b2 + c[i];
    b2 = b1;
    b1 = b0;
  }
  return x * b1 - b2 + (c.empty() ? 0.0 : c[0]);
}

Polynomial Polynomial::chebyshev_interpolant(const std::function<long double(long double)>& f, int degree,
                                             double lower, double upper) {
  require(std::isfinite(lower) && std::isfinite(upper) && lower < upper,
          "Chebyshev interpolant: the interval [{}, {}] must be finite with lower < upper", lower, upper);
  const long double half_width = (static_cast<long double>(upper) - lower) / 2;
  const long double middle = (static_cast<long double>(upper) + lower) / 2;
  Polynomial p;
  p.basis = PolynomialBasis::chebyshev;
  p.lower = lower;
  p.upper = upper;
  p.coefficients = chebyshev_coefficients([&](long double t) { return f(half_width * t + middle); }, degree);
  return p;
}

Polynomial Polynomial::power(std::vector<double> coefficients) {
  Polynomial p;
  p.basis = PolynomialBasis::power;
  p.coefficients = std::move(coefficients);
  return p;
}

Parity Polynomial::parity() const {
  bool even = true, odd = true;
  for (std::size_t k = 0; k < coefficients.size(); ++k) {
    if (coefficients[k] == 0) continue;
    (k % 2 == 0 ? odd : even) = false;
  }
  if (odd && !even) return Parity::odd;
  if (even && !odd) return Parity::even;
  return Parity::none;
}

double Polynomial::evaluate(double x) const {
  if (basis == PolynomialBasis::chebyshev) {
    const double t = maps_interval() ? (2 * x - lower - upper) / (upper - lower) : x;
    return chebyshev_evaluate(coefficients, t);
  }
  double sum = 0;
  for (std::size_t k = coefficients.size(); k-- > 0;) sum = sum * x + coefficients[k];
  return sum;
}

}  // namespace cerium::circuits
