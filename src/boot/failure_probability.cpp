#include "cerium/boot/failure_probability.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cerium/core/check.hpp"

namespace cerium::boot {

namespace {

constexpr double minus_infinity = -std::numeric_limits<double>::infinity();
constexpr long double max_steps = 1L << 25;

}  // namespace

std::optional<double> irwin_hall_tail_log2(int n, double x) {
  require(n >= 1, "irwin_hall_tail_log2: n = {} must be at least 1", n);
  if (!(x > 0)) return 0.0;
  const long double half = static_cast<long double>(n) / 2;
  if (x >= half) return minus_infinity;
  // P(|S_n| > x) = 2 P(U_n <= y), U_n = S_n + n/2 uncentered, y = n/2 - x; P(U_n <= y) = sum_j f_(n+1)(y - j)
  // (f_(n+1)(t) = F_n(t) - F_n(t - 1) telescopes). The densities at theta + j come from the B-spline recurrence
  // f_m(t) = (t f_(m-1)(t) + (m - t) f_(m-1)(t - 1)) / (m - 1): positive terms on the support, exact zeros outside.
  const long double y = half - x;
  const auto last = static_cast<std::size_t>(std::floor(y));
  const long double theta = y - static_cast<long double>(last);
  if (static_cast<long double>(n + 1) * static_cast<long double>(last + 1) > max_steps) return std::nullopt;
  std::vector<long double> f(last + 1, 0.0L);
  f[0] = 1;  // f_1 = 1 on [0, 1)
  constexpr long double negligible = 1e-4900L;  // far below any answer; keeps the x87 unit out of subnormals
  for (int m = 2; m <= n + 1; ++m) {
    for (std::size_t j = last + 1; j-- > 0;) {
      const long double t = theta + static_cast<long double>(j);
      const long double below = j > 0 ? f[j - 1] : 0.0L;
      const long double value = (t * f[j] + (m - t) * below) / (m - 1);
      f[j] = value < negligible ? 0.0L : value;
    }
  }
  long double lower = 0;
  for (const long double v : f) lower += v;
  if (lower == 0) return minus_infinity;
  return static_cast<double>(std::log2(2 * lower));
}

double gaussian_tail_log2(int n, double x) {
  require(n >= 1, "gaussian_tail_log2: n = {} must be at least 1", n);
  if (!(x > 0)) return 0.0;
  // P(|Z| > x) = erfc(u), u = x / (sigma sqrt 2); past long double's range erfc(u) ~ exp(-u^2) / (u sqrt(pi)).
  const long double u = static_cast<long double>(x) / std::sqrt(static_cast<long double>(n) / 6);
  const long double p = std::erfc(u);
  if (p > std::numeric_limits<long double>::min()) return static_cast<double>(std::log2(p));
  const long double pi = 3.141592653589793238462643383279503L;
  return static_cast<double>((-u * u) / std::log(2.0L) - std::log2(u * std::sqrt(pi)) +
                             std::log2(1 - 1 / (2 * u * u)));
}

FailureProbability failure_probability(int hamming_weight, int k_range, std::size_t coefficients) {
  require(hamming_weight >= 1, "failure_probability: hamming_weight = {} must be at least 1", hamming_weight);
  require(k_range >= 1, "failure_probability: k_range = {} must be at least 1", k_range);
  require(coefficients >= 1, "failure_probability: coefficients must be at least 1");
  FailureProbability p{.hamming_weight = hamming_weight, .k_range = k_range, .coefficients = coefficients};
  const double bound = k_range + 0.5;  // |I| > K <=> |S_h| > K + 1/2 (I = round(S_h))
  p.gaussian_per_coefficient_log2 = gaussian_tail_log2(hamming_weight, bound);
  const std::optional<double> exact = irwin_hall_tail_log2(hamming_weight, bound);
  p.exact = exact.has_value();
  p.per_coefficient_log2 = exact.value_or(p.gaussian_per_coefficient_log2);
  const double union_factor = std::log2(static_cast<double>(coefficients));
  p.per_bootstrap_log2 = std::min(0.0, p.per_coefficient_log2 + union_factor);
  p.gaussian_per_bootstrap_log2 = std::min(0.0, p.gaussian_per_coefficient_log2 + union_factor);
  return p;
}

FailureProbability failure_probability(const ckks::Parameters& parameters, const BootstrapConfig& config) {
  const std::size_t n = parameters.ring_degree();
  const std::size_t slots = config.slots == 0 ? n / 2 : config.slots;
  require<ParameterError>(slots <= n / 2, "failure_probability: {} slots exceed N/2 = {}", slots, n / 2);
  int weight = 0;
  bool dense = false;
  if (config.sparse_encapsulation) {
    weight = config.ephemeral_hamming_weight;
  } else if (parameters.config().secret == ckks::SecretDistribution::hamming_weight) {
    weight = parameters.config().hamming_weight;
  } else {
    weight = static_cast<int>(std::lround(2.0 * static_cast<double>(n) / 3));  // uniform ternary: E[h] = 2N/3
    dense = true;
  }
  FailureProbability p = failure_probability(weight, config.k_range, 2 * slots);
  p.dense_secret = dense;
  return p;
}

}  // namespace cerium::boot
