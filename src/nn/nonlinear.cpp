// The elementwise layers of nn/nonlinear.hpp: their polynomials, chosen for the least depth within a tolerance,
// and their errors measured on a grid.
#include "cerium/nn/nonlinear.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "nonlinear_checks.hpp"

namespace cerium::nn {
namespace {

using nonlinear_checks::require_range;
using nonlinear_checks::require_tolerance;
using nonlinear_detail::depth_of;

// Points where errors are measured: a uniform grid fine enough for the degrees used here (dozens of points per
// oscillation of a degree-63 error), plus a geometric one on a positive range, where relative errors peak near
// the lower end.
constexpr std::size_t grid_points = 8193;

std::vector<double> error_grid(double lower, double upper) {
  std::vector<double> points;
  for (std::size_t i = 0; i < grid_points; ++i) {
    points.push_back(lower + (upper - lower) * static_cast<double>(i) / (grid_points - 1));
  }
  if (lower > 0) {
    const double ratio = std::log(upper / lower);
    for (std::size_t i = 1; i + 1 < grid_points; ++i) {
      points.push_back(lower * std::exp(ratio * static_cast<double>(i) / (grid_points - 1)));
    }
  }
  return points;
}

template <class Layer>
double max_absolute_error(const Layer& layer, const std::vector<double>& grid) {
  double worst = 0;
  for (const double x : grid) worst = std::max(worst, std::abs(layer.approximate(x) - layer.exact(x)));
  return std::isfinite(worst) ? worst : std::numeric_limits<double>::infinity();
}

template <class Layer>
double max_relative_error(const Layer& layer, const std::vector<double>& grid) {
  double worst = 0;
  for (const double x : grid) worst = std::max(worst, std::abs(layer.approximate(x) / layer.exact(x) - 1));
  return std::isfinite(worst) ? worst : std::numeric_limits<double>::infinity();
}

// A degree-1 Chebyshev polynomial on [lower, upper] in the power basis: c0 + c1 x costs one level, where the
// interval's map and the coefficient would cost two.
circuits::Polynomial cheapest_form(circuits::Polynomial p) {
  if (p.basis != circuits::PolynomialBasis::chebyshev || p.degree() != 1) return p;
  const double slope = 2 / (p.upper - p.lower), offset = -(p.lower + p.upper) / (p.upper - p.lower);
  return circuits::Polynomial::power({p.coefficients[0] + p.coefficients[1] * offset, p.coefficients[1] * slope});
}

// T_n(z), also for |z| > 1.
long double chebyshev_t(int n, long double z) {
  if (std::abs(z) <= 1) return std::cos(n * std::acos(z));
  const long double magnitude = std::cosh(n * std::acosh(std::abs(z)));
  return z < 0 && n % 2 == 1 ? -magnitude : magnitude;
}

// Among layers built for each candidate, the shallowest (then the first: the cheapest to evaluate).
template <class Layer>
std::optional<Layer> shallowest(std::optional<Layer> best, std::optional<Layer> candidate) {
  if (!candidate) return best;
  if (!best || candidate->depth() < best->depth()) return candidate;
  return best;
}

}  // namespace

// ---- Exp ----

Exp::Exp(const ExpConfig& config, int degree, int squarings) : config_(config), squarings_(squarings) {
  const long double shrink = std::ldexp(1.0L, -squarings);
  const long double root_scale = std::pow(static_cast<long double>(config.scale), shrink);
  polynomial_ = circuits::Polynomial::chebyshev_interpolant(
      [&](long double x) { return root_scale * std::exp(x * shrink); }, degree, config.lower, config.upper);
  polynomial_ = cheapest_form(std::move(polynomial_));
  depth_ = depth_of(*this);
  max_error_ = max_absolute_error(*this, error_grid(config.lower, config.upper));
}

Exp::Exp(const ExpConfig& config) {
  require_range("exp", config.lower, config.upper, false);
  require_tolerance("exp", config.tolerance);
  require(std::isfinite(config.scale) && config.scale > 0, "exp: the scale {} must be positive", config.scale);
  require(config.degree >= 0 && config.squarings >= -1 && config.squarings <= 30,
          "exp: degree {} (0: chosen) and squarings {} (-1: chosen, at most 30)", config.degree, config.squarings);
  if (config.degree > 0 && config.squarings >= 0) {
    *this = Exp(config, config.degree, config.squarings);
    return;
  }
  const std::vector<int> degrees = config.degree > 0 ? std::vector<int>{config.degree} : std::vector<int>{3, 7, 15, 31, 63};
  const double target = config.tolerance * config.scale * std::exp(config.upper);
  std::optional<Exp> best;
  for (const int degree : degrees) {
    const int first = std::max(config.squarings, 0), last = config.squarings >= 0 ? config.squarings : 24;
    for (int r = first; r <= last; ++r) {
      Exp candidate(config, degree, r);
      if (candidate.max_error() <= target) {
        best = shallowest(std::move(best), std::optional<Exp>(std::move(candidate)));
        break;
      }
    }
  }
  require(best.has_value(), "exp on [{}, {}]: no degree (of {}) and squarings (of {}) reach the tolerance {}",
          config.lower, config.upper, config.degree > 0 ? std::to_string(config.degree) : "3 to 63",
          config.squarings >= 0 ? std::to_string(config.squarings) : "0 to 24", config.tolerance);
  *this = std::move(*best);
}

// ---- Reciprocal ----

Reciprocal::Reciprocal(const ReciprocalConfig& config, int degree, int iterations)
    : config_(config), iterations_(iterations) {
  // The guess minimizing max |1 - x p(x)| over degree-`degree` p: 1 - x p(x) = T_(d+1)(t(x)) / T_(d+1)(t(0)), t
  // the map of [a, b] onto [-1, 1]; Newton then squares that error at every step.
  const long double a = config.lower, b = config.upper;
  const auto t = [&](long double x) { return (2 * x - a - b) / (b - a); };
  const long double at_zero = chebyshev_t(degree + 1, t(0));
  guess_ = cheapest_form(circuits::Polynomial::chebyshev_interpolant(
      [&](long double x) { return config.scale * (1 - chebyshev_t(degree + 1, t(x)) / at_zero) / x; }, degree, a, b));
  if (iterations > 0) {
    circuits::Polynomial error;  // exactly T_(d+1) / T_(d+1)(t(0)): the sparse form skips the other powers
    error.coefficients.assign(static_cast<std::size_t>(degree) + 2, 0.0);
    error.coefficients.back() = static_cast<double>(1 / at_zero);
    error.lower = config.lower;
    error.upper = config.upper;
    error_ = error;
    const int direct = depth_of(*this);
    error_.reset();
    if (direct < depth_of(*this)) error_ = error;
  }
  depth_ = depth_of(*this);
  max_error_ = max_relative_error(*this, error_grid(config.lower, config.upper));
}

Reciprocal::Reciprocal(const ReciprocalConfig& config) {
  require_range("reciprocal", config.lower, config.upper, true);
  require_tolerance("reciprocal", config.tolerance);
  require(std::isfinite(config.scale) && config.scale > 0, "reciprocal: the scale {} must be positive", config.scale);
  require(config.guess_degree >= 0 && config.guess_degree <= 255 && config.iterations >= -1 && config.iterations <= 40,
          "reciprocal: guess degree {} (0: chosen, at most 255) and iterations {} (-1: chosen, at most 40)",
          config.guess_degree, config.iterations);
  if (config.guess_degree > 0 && config.iterations >= 0) {
    *this = Reciprocal(config, config.guess_degree, config.iterations);
    return;
  }
  const std::vector<int> degrees = config.guess_degree > 0 ? std::vector<int>{config.guess_degree}
                                                          : std::vector<int>{1, 3, 7, 15, 31, 63, 127, 255};
  std::optional<Reciprocal> best;
  for (const int degree : degrees) {
    int k = config.iterations;
    if (k < 0) {  // the guess's error e0 = 1 / |T_(d+1)(t(0))| is squared by each iteration
      const long double t0 = -(static_cast<long double>(config.upper) + config.lower) / (config.upper - config.lower);
      long double error = 1 / std::abs(chebyshev_t(degree + 1, t0));
      for (k = 0; k < 40 && error > config.tolerance; ++k) error *= error;
    }
    for (const int last = std::min(k + 2, 40); k <= last; ++k) {  // rounding may want one more
      Reciprocal candidate(config, degree, k);
      if (config.iterations >= 0 || candidate.max_error() <= config.tolerance) {
        best = shallowest(std::move(best), std::optional<Reciprocal>(std::move(candidate)));
        break;
      }
    }
  }
  require(best.has_value(), "reciprocal on [{}, {}]: no guess degree and iteration count reach the tolerance {}",
          config.lower, config.upper, config.tolerance);
  *this = std::move(*best);
}

// ---- InverseSqrt ----

namespace {

// The step z <- alpha z - beta' x z^3 in terms of u = sqrt(x) y: u <- alpha u (1 - r u^2), r = beta / alpha.
// Given the range [u_lo, u_hi] of u, the r minimizing max / min of g(u) = u (1 - r u^2) over it (g is concave:
// its minimum is at an end, its maximum at 1 / sqrt(3 r) when that lies inside), by golden section; alpha then
// centres alpha g on 1. For a narrow range around 1 this is Newton's r = 1/3, alpha = 3/2.
std::pair<double, double> fitted_step(double u_lo, double u_hi) {
  const auto extremes = [&](double r) {
    const auto g = [&](double u) { return u * (1 - r * u * u); };
    const double low = std::min(g(u_lo), g(u_hi));
    double high = std::max(g(u_lo), g(u_hi));
    if (r > 0) {
      const double peak = 1 / std::sqrt(3 * r);
      if (peak > u_lo && peak < u_hi) high = g(peak);
    }
    return std::pair{low, high};
  };
  const auto spread = [&](double r) {
    const auto [low, high] = extremes(r);
    return low > 0 ? std::log(high / low) : std::numeric_limits<double>::infinity();
  };
  const double golden = (std::sqrt(5.0) - 1) / 2;
  double lo = 0, hi = 1 / (u_hi * u_hi);
  for (int i = 0; i < 200; ++i) {
    const double m1 = hi - golden * (hi - lo), m2 = lo + golden * (hi - lo);
    if (spread(m1) <= spread(m2)) {
      hi = m2;
    } else {
      lo = m1;
    }
  }
  const double r = (lo + hi) / 2;
  const auto [low, high] = extremes(r);
  const double alpha = 2 / (low + high);
  return {alpha, alpha * r};
}

}  // namespace

InverseSqrt::InverseSqrt(const InverseSqrtConfig& config, int degree, int max_iterations) : config_(config) {
  const double a = config.lower;
  const std::vector<double> grid = error_grid(config.lower, config.upper);
  const circuits::Polynomial fit = circuits::Polynomial::chebyshev_interpolant(
      [](long double x) { return 1 / std::sqrt(x); }, degree, config.lower, config.upper);
  // u = sqrt(x) y on the grid, stepped as forward steps it, to fit each step to the range left.
  std::vector<double> u(grid.size());
  double u_lo = std::numeric_limits<double>::infinity(), u_hi = 0, worst = 0;
  const auto measure = [&] {
    u_lo = *std::min_element(u.begin(), u.end());
    u_hi = *std::max_element(u.begin(), u.end());
    worst = std::max(1 - u_lo, u_hi - 1);
  };
  for (std::size_t i = 0; i < grid.size(); ++i) u[i] = std::sqrt(grid[i]) * fit.evaluate(grid[i]);
  measure();
  require(u_lo > 0, "inverse sqrt: the degree-{} guess is not positive on [{}, {}]", degree, config.lower,
          config.upper);
  const bool fixed = config.iterations >= 0;
  while (static_cast<int>(steps_.size()) < max_iterations && (fixed || worst > config.tolerance)) {
    const auto [alpha, beta] = fitted_step(u_lo, u_hi);
    for (double& v : u) v = alpha * v * (1 - beta / alpha * v * v);
    steps_.push_back({alpha, beta / a});  // in z = sqrt(a) y: z <- alpha z - (beta / a) x z^3
    measure();
  }
  // The guess gives z (or scale y without steps); the last step gives scale y.
  guess_ = fit;
  const double guess_factor = steps_.empty() ? config.scale : std::sqrt(a);
  for (double& c : guess_.coefficients) c *= guess_factor;
  guess_ = cheapest_form(std::move(guess_));
  if (!steps_.empty()) {
    steps_.back().alpha *= config.scale / std::sqrt(a);
    steps_.back().x_factor *= config.scale / std::sqrt(a);
  }
  depth_ = depth_of(*this);
  max_error_ = max_relative_error(*this, grid);
}

InverseSqrt::InverseSqrt(const InverseSqrtConfig& config) {
  require_range("inverse sqrt", config.lower, config.upper, true);
  require_tolerance("inverse sqrt", config.tolerance);
  require(std::isfinite(config.scale) && config.scale > 0, "inverse sqrt: the scale {} must be positive",
          config.scale);
  require(config.guess_degree >= 0 && config.guess_degree <= 255 && config.iterations >= -1 && config.iterations <= 40,
          "inverse sqrt: guess degree {} (0: chosen, at most 255) and iterations {} (-1: chosen, at most 40)",
          config.guess_degree, config.iterations);
  const int max_iterations = config.iterations >= 0 ? config.iterations : 40;
  if (config.guess_degree > 0) {
    *this = InverseSqrt(config, config.guess_degree, max_iterations);
    require(config.iterations >= 0 || max_error_ <= config.tolerance,
            "inverse sqrt on [{}, {}]: a degree-{} guess does not reach the tolerance {} in {} iterations",
            config.lower, config.upper, config.guess_degree, config.tolerance, max_iterations);
    return;
  }
  std::optional<InverseSqrt> best;
  for (const int degree : {1, 3, 7, 15, 31, 63}) {
    std::optional<InverseSqrt> candidate;
    try {
      candidate = InverseSqrt(config, degree, max_iterations);
    } catch (const InvalidArgument&) {
      continue;  // a guess that is not positive on the range: the next degree
    }
    if (config.iterations >= 0 || candidate->max_error() <= config.tolerance) {
      best = shallowest(std::move(best), std::move(candidate));
    }
  }
  require(best.has_value(), "inverse sqrt on [{}, {}]: no guess degree and iteration count reach the tolerance {}",
          config.lower, config.upper, config.tolerance);
  *this = std::move(*best);
}

// ---- Activations ----

PolynomialActivation::PolynomialActivation(const char* name, double (*exact)(double), Form form,
                                           const ActivationConfig& config)
    : name_(name), exact_(exact), config_(config) {
  require(std::isfinite(config.bound) && config.bound > 0, "{}: the bound {} must be positive (range [-bound, bound])",
          name, config.bound);
  require(config.degree >= 2 && config.degree <= 255, "{}: degree {} must be within [2, 255]", name, config.degree);
  const double bound = config.bound;
  if (form == Form::odd) {
    const int degree = config.degree % 2 == 1 ? config.degree : config.degree - 1;
    polynomial_ = circuits::Polynomial::chebyshev_interpolant([&](long double x) { return exact(static_cast<double>(x)); },
                                                              degree, -bound, bound);
    for (std::size_t k = 0; k < polynomial_.coefficients.size(); k += 2) polynomial_.coefficients[k] = 0;
  } else {
    linear_ = 0.5;
    const int degree = config.degree - config.degree % 2;
    polynomial_ = circuits::Polynomial::chebyshev_interpolant(
        [&](long double x) { return exact(static_cast<double>(x)) - x / 2; }, degree, -bound, bound);
    for (std::size_t k = 1; k < polynomial_.coefficients.size(); k += 2) polynomial_.coefficients[k] = 0;
    // Pinned to 0 at 0 (t = 0 there): a padding slot's 0 stays 0.
    polynomial_.coefficients[0] -= circuits::chebyshev_evaluate(polynomial_.coefficients, 0.0);
  }
  depth_ = depth_of(*this);
  max_error_ = max_absolute_error(*this, error_grid(-bound, bound));
}

namespace {
double gelu_exact(double x) { return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2)); }
double silu_exact(double x) { return x / (1 + std::exp(-x)); }
double tanh_exact(double x) { return std::tanh(x); }
}  // namespace

Gelu::Gelu(const ActivationConfig& config) : PolynomialActivation("gelu", gelu_exact, Form::half_x_plus_even, config) {}
Silu::Silu(const ActivationConfig& config) : PolynomialActivation("silu", silu_exact, Form::half_x_plus_even, config) {}
Tanh::Tanh(const ActivationConfig& config) : PolynomialActivation("tanh", tanh_exact, Form::odd, config) {}

}  // namespace cerium::nn
