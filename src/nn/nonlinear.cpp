#include "cerium/nn/nonlinear.hpp"

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <random>

#include "cerium/graph/plain_ops.hpp"

namespace cerium::nn {
namespace nonlinear_detail {

graph::PlainVector row_pattern(const RowLayout& layout, double valid, double padding) {
  std::vector<double> period(layout.stride, padding);
  for (std::size_t f = 0; f < layout.features; ++f) period[f] = valid;
  return graph::PlainVector(period);
}

graph::PlainVector first_feature(const RowLayout& layout, double value) {
  std::vector<double> period(layout.stride, 0.0);
  period[0] = value;
  return graph::PlainVector(period);
}

}  // namespace nonlinear_detail

namespace {

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

void require_range(const char* layer, double lower, double upper, bool positive) {
  require(std::isfinite(lower) && std::isfinite(upper) && lower < upper,
          "{}: the range [{}, {}] is empty or not finite; need lower < upper", layer, lower, upper);
  if (positive) require(lower > 0, "{}: the range [{}, {}] must lie above 0 (lower > 0)", layer, lower, upper);
}

void require_tolerance(const char* layer, double tolerance) {
  require(std::isfinite(tolerance) && tolerance > 0, "{}: the tolerance {} must be positive", layer, tolerance);
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

// ---- Row layers ----

namespace {

std::vector<double> real_parts(const graph::PlainOps::Value& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i].real();
  return out;
}

// forward on doubles, on any whole number of rows (the layers depend on the stride and features only).
template <class Layer>
std::vector<double> plain_forward(const Layer& layer, const std::vector<double>& slots) {
  graph::PlainOps ops;
  return real_parts(layer.forward(ops, graph::PlainOps::Value(slots.begin(), slots.end())));
}

void require_rows(const char* layer, const RowLayout& layout, const std::vector<double>& slots) {
  require(!slots.empty() && slots.size() % layout.stride == 0, "{}: {} values are not whole rows of stride {}", layer,
          slots.size(), layout.stride);
}

// Rows to measure errors on: enough to fill about 4096 slots (at least one row).
std::size_t measurement_rows(const RowLayout& layout) { return std::max<std::size_t>(1, 4096 / layout.stride); }

template <class Layer, class MakeRow>
double measured_error(const Layer& layer, const RowLayout& layout, MakeRow make_row, int batches) {
  const std::size_t rows = measurement_rows(layout);
  const RowLayout measured{rows, layout.features, layout.stride};
  double worst = 0;
  std::size_t row_index = 0;
  for (int batch = 0; batch < batches; ++batch) {
    std::vector<double> slots(measured.slots(), 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
      const std::vector<double> row = make_row(row_index++);
      for (std::size_t f = 0; f < layout.features; ++f) slots[measured.slot(r, f)] = row[f];
    }
    const std::vector<double> got = plain_forward(layer, slots), want = layer.exact(slots);
    for (std::size_t i = 0; i < slots.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  }
  return std::isfinite(worst) ? worst : std::numeric_limits<double>::infinity();
}

const RowLayout& validated(const RowLayout& layout) {
  layout.validate();
  return layout;
}

const SoftmaxConfig& validated(const SoftmaxConfig& config) {
  require_range("softmax", config.lower, config.upper, false);
  require_tolerance("softmax", config.tolerance);
  return config;
}

graph::PlainVector feature_values(const RowLayout& layout, const std::vector<double>& values, double factor) {
  std::vector<double> period(layout.stride, 0.0);
  for (std::size_t f = 0; f < layout.features; ++f) period[f] = values.empty() ? factor : values[f] * factor;
  return graph::PlainVector(period);
}

}  // namespace

Softmax::Softmax(const RowLayout& layout, const SoftmaxConfig& config)
    : layout_(validated(layout)),
      config_(validated(config)),
      // Output error from exp's: about 2 delta / (features total) with total >= exp(lower - upper); exp's
      // tolerance is relative to its largest value 1 / features.
      exp_(ExpConfig{.lower = config.lower - config.upper,
                     .upper = 0,
                     .tolerance = std::max(1e-12, config.tolerance * static_cast<double>(layout.features) *
                                                      std::exp(config.lower - config.upper) / 4),
                     .scale = 1 / static_cast<double>(layout.features)}),
      reciprocal_(ReciprocalConfig{.lower = std::exp(config.lower - config.upper),
                                   .upper = 1,
                                   .tolerance = config.tolerance / 2,
                                   .scale = std::exp(config.lower - config.upper)}),
      padding_to_upper_(nonlinear_detail::row_pattern(layout, 0.0, config.upper)),
      cancel_padding_(nonlinear_detail::row_pattern(layout, 0.0, -exp_.approximate(0.0))) {
  depth_ = depth_of(*this);
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> uniform(config.lower, config.upper);
  const std::size_t n = layout.features;
  max_error_ = measured_error(
      *this, layout,
      [&](std::size_t index) {
        std::vector<double> row(n);
        switch (index) {  // the extremes first: all at one end, one at the top over the rest at the bottom
          case 0: std::fill(row.begin(), row.end(), config.lower); break;
          case 1: std::fill(row.begin(), row.end(), config.upper); break;
          case 2: std::fill(row.begin(), row.end(), config.lower); row[0] = config.upper; break;
          default: for (double& v : row) v = uniform(rng);
        }
        return row;
      },
      4);
}

std::vector<double> Softmax::exact(const std::vector<double>& slots) const {
  require_rows("softmax", layout_, slots);
  std::vector<double> out(slots.size(), 0.0);
  for (std::size_t start = 0; start < slots.size(); start += layout_.stride) {
    double top = -std::numeric_limits<double>::infinity(), total = 0;
    for (std::size_t f = 0; f < layout_.features; ++f) top = std::max(top, slots[start + f]);
    for (std::size_t f = 0; f < layout_.features; ++f) total += std::exp(slots[start + f] - top);
    for (std::size_t f = 0; f < layout_.features; ++f) out[start + f] = std::exp(slots[start + f] - top) / total;
  }
  return out;
}

std::vector<double> Softmax::approximate(const std::vector<double>& slots) const {
  require_rows("softmax", layout_, slots);
  return plain_forward(*this, slots);
}

namespace {

void require_statistic_range(const char* layer, double lower, double upper, double eps) {
  require(std::isfinite(eps) && eps >= 0, "{}: eps {} must be at least 0", layer, eps);
  require_range(layer, lower, upper, false);
  require(lower >= 0 && lower + eps > 0, "{}: the range [{}, {}] with eps {} must lie above 0", layer, lower, upper,
          eps);
}

void require_per_feature(const char* layer, const char* what, const std::vector<double>& values, std::size_t features) {
  require(values.empty() || values.size() == features, "{}: {} {} values for {} features", layer, values.size(), what,
          features);
}

// A row of `n` normal values with the given mean and (population) variance.
std::vector<double> row_with(std::mt19937_64& rng, std::size_t n, double mean, double variance) {
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> row(n);
  double sum = 0, squares = 0;
  for (double& v : row) sum += (v = normal(rng));
  for (double& v : row) squares += (v - sum / n) * (v - sum / n);
  const double factor = std::sqrt(variance / (squares / n));
  for (double& v : row) v = mean + (v - sum / n) * factor;
  return row;
}

// The row statistics' range, from the lower end up (geometric), the ends included.
double spread_over(std::size_t index, std::size_t count, double lower, double upper) {
  const double t = static_cast<double>(index % count) / static_cast<double>(count - 1);
  return lower > 0 ? lower * std::pow(upper / lower, t) : lower + (upper - lower) * t;
}

}  // namespace

LayerNorm::LayerNorm(const RowLayout& layout, const LayerNormConfig& config)
    : layout_(validated(layout)),
      config_(config),
      statistic_scale_(1 / (static_cast<double>(layout.features) * (config.variance_upper + config.eps))),
      inverse_sqrt_([&] {
        require(layout.features >= 2, "layer norm: {} feature: a row needs at least 2 to have a variance",
                layout.features);
        require_statistic_range("layer norm", config.variance_lower, config.variance_upper, config.eps);
        require_per_feature("layer norm", "gamma", config.gamma, layout.features);
        require_per_feature("layer norm", "beta", config.beta, layout.features);
        const double top = config.variance_upper + config.eps, bottom = (config.variance_lower + config.eps) / top;
        return InverseSqrt(InverseSqrtConfig{.lower = bottom, .upper = 1, .tolerance = config.tolerance,
                                             .scale = std::sqrt(bottom)});
      }()),
      eps_and_padding_(nonlinear_detail::row_pattern(layout, config.eps / (config.variance_upper + config.eps), 1.0)),
      gamma_(feature_values(layout, config.gamma, 1 / std::sqrt(config.variance_lower + config.eps))) {
  if (!config.beta.empty()) beta_ = feature_values(layout, config.beta, 1.0);
  depth_ = depth_of(*this);
  std::mt19937_64 rng(20240602);
  std::uniform_real_distribution<double> offset(-1, 1);
  max_error_ = measured_error(
      *this, layout,
      [&](std::size_t index) {
        return row_with(rng, layout.features, offset(rng),
                        spread_over(index, 33, config.variance_lower, config.variance_upper));
      },
      4);
}

std::vector<double> LayerNorm::exact(const std::vector<double>& slots) const {
  require_rows("layer norm", layout_, slots);
  std::vector<double> out(slots.size(), 0.0);
  const std::size_t n = layout_.features;
  for (std::size_t start = 0; start < slots.size(); start += layout_.stride) {
    double mean = 0, variance = 0;
    for (std::size_t f = 0; f < n; ++f) mean += slots[start + f] / static_cast<double>(n);
    for (std::size_t f = 0; f < n; ++f) variance += std::pow(slots[start + f] - mean, 2) / static_cast<double>(n);
    for (std::size_t f = 0; f < n; ++f) {
      const double gamma = config_.gamma.empty() ? 1.0 : config_.gamma[f];
      const double beta = config_.beta.empty() ? 0.0 : config_.beta[f];
      out[start + f] = gamma * (slots[start + f] - mean) / std::sqrt(variance + config_.eps) + beta;
    }
  }
  return out;
}

std::vector<double> LayerNorm::approximate(const std::vector<double>& slots) const {
  require_rows("layer norm", layout_, slots);
  return plain_forward(*this, slots);
}

RmsNorm::RmsNorm(const RowLayout& layout, const RmsNormConfig& config)
    : layout_(validated(layout)),
      config_(config),
      statistic_scale_(1 / (static_cast<double>(layout.features) * (config.mean_square_upper + config.eps))),
      inverse_sqrt_([&] {
        require_statistic_range("rms norm", config.mean_square_lower, config.mean_square_upper, config.eps);
        require_per_feature("rms norm", "gamma", config.gamma, layout.features);
        const double top = config.mean_square_upper + config.eps;
        const double bottom = (config.mean_square_lower + config.eps) / top;
        return InverseSqrt(InverseSqrtConfig{.lower = bottom, .upper = 1, .tolerance = config.tolerance,
                                             .scale = std::sqrt(bottom)});
      }()),
      eps_and_padding_(
          nonlinear_detail::row_pattern(layout, config.eps / (config.mean_square_upper + config.eps), 1.0)),
      gamma_(feature_values(layout, config.gamma, 1 / std::sqrt(config.mean_square_lower + config.eps))) {
  depth_ = depth_of(*this);
  std::mt19937_64 rng(20240603);
  max_error_ = measured_error(
      *this, layout,
      [&](std::size_t index) {
        // Mean square m: a zero-mean row of variance m (its mean square is its variance).
        return row_with(rng, layout.features, 0.0,
                        spread_over(index, 33, config.mean_square_lower, config.mean_square_upper));
      },
      4);
}

std::vector<double> RmsNorm::exact(const std::vector<double>& slots) const {
  require_rows("rms norm", layout_, slots);
  std::vector<double> out(slots.size(), 0.0);
  const std::size_t n = layout_.features;
  for (std::size_t start = 0; start < slots.size(); start += layout_.stride) {
    double mean_square = 0;
    for (std::size_t f = 0; f < n; ++f) mean_square += slots[start + f] * slots[start + f] / static_cast<double>(n);
    for (std::size_t f = 0; f < n; ++f) {
      const double gamma = config_.gamma.empty() ? 1.0 : config_.gamma[f];
      out[start + f] = gamma * slots[start + f] / std::sqrt(mean_square + config_.eps);
    }
  }
  return out;
}

std::vector<double> RmsNorm::approximate(const std::vector<double>& slots) const {
  require_rows("rms norm", layout_, slots);
  return plain_forward(*this, slots);
}

}  // namespace cerium::nn
