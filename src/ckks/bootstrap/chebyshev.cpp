#include "chebyshev.hpp"

#include <cmath>
#include <numbers>

#include "cerium/core/check.hpp"

namespace cerium::ckks::bootstrap_detail {

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
  return x * b1 - b2 + c[0];
}

std::function<long double(long double)> scaled_cosine(int k_range, int double_angle_steps) {
  const long double k = k_range;
  const long double divisor = std::ldexp(1.0L, double_angle_steps);
  return [k, divisor](long double x) {
    return std::cos(2 * std::numbers::pi_v<long double> * (k * x - 0.25L) / divisor);
  };
}

}  // namespace cerium::ckks::bootstrap_detail
