#include "cerium/circuits/minimax.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <string>
#include <utility>

#include <fmt/ranges.h>

#include "cerium/core/check.hpp"

namespace cerium::circuits {
namespace {

// Long double throughout the design: the linear systems and the extremum search lose a few digits each, and the
// coefficients are rounded to double once at the end.
using Real = long double;

struct ValueSlope {
  Real value = 0, slope = 0;
};

// sum c_k T_k(x) and its derivative, by the three-term recurrences T_(k+1) = 2 x T_k - T_(k-1) and
// T_(k+1)' = 2 T_k + 2 x T_k' - T_(k-1)' (stable on [-1, 1]).
ValueSlope evaluate_with_slope(const std::vector<Real>& c, Real x) {
  ValueSlope out;
  if (c.empty()) return out;
  out.value = c[0];
  Real t_prev = 1, t = x, d_prev = 0, d = 1;
  for (std::size_t k = 1; k < c.size(); ++k) {
    if (k > 1) {
      const Real t_next = 2 * x * t - t_prev, d_next = 2 * t + 2 * x * d - d_prev;
      t_prev = std::exchange(t, t_next);
      d_prev = std::exchange(d, d_next);
    }
    out.value += c[k] * t;
    out.slope += c[k] * d;
  }
  return out;
}

struct Point {
  Real x = 0, error = 0;  // error = p(x) - target
};

// Errors below this are rounding (the coefficients are stored as doubles): the exchange stops there, since its
// extrema would be noise.
constexpr Real noise_floor = 1e-14L;
// The smallest gap between the largest and the levelled error that long double resolves near p = 1.
constexpr Real resolution = 64 * std::numeric_limits<Real>::epsilon();

// The ends of [a, b] and every interior local extremum of p - target, in increasing x. A grid uniform in acos(x)
// (where a degree-d polynomial's extrema are about evenly spaced, like T_d's), 64 cells per degree, brackets the
// sign changes of p'; bisection then finds them to the last bit.
std::vector<Point> extrema(const std::vector<Real>& c, Real target, Real a, Real b) {
  const auto error_at = [&](Real x) { return Point{x, evaluate_with_slope(c, x).value - target}; };
  const auto slope_at = [&](Real x) { return evaluate_with_slope(c, x).slope; };
  const int cells = 64 * static_cast<int>(c.size());
  const Real theta_a = std::acos(a), theta_b = std::acos(b);
  std::vector<Point> out{error_at(a)};
  Real x0 = a, s0 = slope_at(a);
  for (int j = 1; j <= cells; ++j) {
    const Real x1 = j == cells ? b : std::cos(theta_a + (theta_b - theta_a) * j / cells);
    const Real s1 = slope_at(x1);
    if ((s0 < 0 && s1 > 0) || (s0 > 0 && s1 < 0)) {
      Real lo = x0, hi = x1;
      for (int step = 0; step < 200; ++step) {
        const Real mid = (lo + hi) / 2;
        if (mid <= lo || mid >= hi) break;
        const Real s = slope_at(mid);
        ((s < 0) == (s0 < 0) && s != 0 ? lo : hi) = mid;
      }
      out.push_back(error_at((lo + hi) / 2));
    } else if (s1 == 0 && j < cells) {
      out.push_back(error_at(x1));
    }
    x0 = x1;
    s0 = s1;
  }
  out.push_back(error_at(b));
  return out;
}

Real largest_error(const std::vector<Point>& points) {
  Real e = 0;
  for (const Point& p : points) e = std::max(e, std::abs(p.error));
  return e;
}

// The next reference: neighbours of the same sign merged (the larger |error| kept), then the smaller end dropped
// until `count` remain. The result alternates in sign and keeps the largest error.
std::vector<Point> exchange(const std::vector<Point>& candidates, std::size_t count) {
  std::vector<Point> merged;
  for (const Point& p : candidates) {
    if (p.error == 0) continue;  // no sign: cannot carry an alternation
    if (!merged.empty() && std::signbit(merged.back().error) == std::signbit(p.error)) {
      if (std::abs(p.error) > std::abs(merged.back().error)) merged.back() = p;
    } else {
      merged.push_back(p);
    }
  }
  std::size_t first = 0, last = merged.size();
  while (last - first > count) {
    if (std::abs(merged[first].error) < std::abs(merged[last - 1].error)) {
      ++first;
    } else {
      --last;
    }
  }
  return {merged.begin() + static_cast<std::ptrdiff_t>(first), merged.begin() + static_cast<std::ptrdiff_t>(last)};
}

// Solves a x = rhs by Gaussian elimination with partial pivoting; an empty result when a is singular.
std::vector<Real> solve(std::vector<std::vector<Real>> a, std::vector<Real> rhs) {
  const std::size_t n = rhs.size();
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    if (a[pivot][col] == 0) return {};
    std::swap(a[pivot], a[col]);
    std::swap(rhs[pivot], rhs[col]);
    for (std::size_t r = col + 1; r < n; ++r) {
      const Real f = a[r][col] / a[col][col];
      for (std::size_t k = col; k < n; ++k) a[r][k] -= f * a[col][k];
      rhs[r] -= f * rhs[col];
    }
  }
  std::vector<Real> x(n);
  for (std::size_t r = n; r-- > 0;) {
    Real sum = rhs[r];
    for (std::size_t k = r + 1; k < n; ++k) sum -= a[r][k] * x[k];
    x[r] = sum / a[r][r];
  }
  return x;
}

// The odd polynomial (T_1, T_3, .., T_degree) with p(x_i) - 1 = -(-1)^i E on the reference: its dense
// coefficients and E.
std::pair<std::vector<Real>, Real> levelled(const std::vector<Real>& reference, int degree) {
  const std::size_t n = reference.size() - 1;
  std::vector<std::vector<Real>> a(n + 1, std::vector<Real>(n + 1));
  for (std::size_t i = 0; i <= n; ++i) {
    const Real x = reference[i];
    Real t_prev = 1, t = x;  // T_k(x) by the recurrence, the odd ones kept
    for (std::size_t k = 1, j = 0; j < n; ++k) {
      if (k > 1) t_prev = std::exchange(t, 2 * x * t - t_prev);
      if (k % 2 == 1) a[i][j++] = t;
    }
    a[i][n] = i % 2 == 0 ? 1 : -1;
  }
  const std::vector<Real> solution = solve(std::move(a), std::vector<Real>(n + 1, 1));
  require<NumericalError>(!solution.empty(), "minimax sign (degree {}): the reference system is singular", degree);
  std::vector<Real> c(static_cast<std::size_t>(degree) + 1, 0);
  for (std::size_t j = 0; j < n; ++j) c[2 * j + 1] = solution[j];
  return {std::move(c), solution[n]};
}

std::vector<Real> widened(const std::vector<double>& c) { return {c.begin(), c.end()}; }

struct Range {
  Real min = 0, max = 0;
};

Range range(const std::vector<double>& c, Real a, Real b) {
  Range r{std::numeric_limits<Real>::infinity(), -std::numeric_limits<Real>::infinity()};
  for (const Point& p : extrema(widened(c), 0, a, b)) {
    r.min = std::min(r.min, p.error);
    r.max = std::max(r.max, p.error);
  }
  return r;
}

}  // namespace

MinimaxSign minimax_sign(int degree, double lower, double upper, const RemezOptions& options) {
  require(degree >= 3 && degree % 2 == 1, "minimax sign: degree {} must be odd and at least 3", degree);
  require(std::isfinite(lower) && std::isfinite(upper) && 0 < lower && lower < upper && upper <= 1,
          "minimax sign: the interval [{}, {}] must satisfy 0 < lower < upper <= 1", lower, upper);
  require(options.max_iterations >= 1 && options.tolerance > 0,
          "minimax sign: max_iterations {} and tolerance {} must be positive", options.max_iterations,
          options.tolerance);
  // In u = x / upper on [a, 1]: T_k(u) stays bounded there (on [lower, upper] < 1 the T_k(x) are nearly
  // dependent and the best coefficients explode).
  const std::size_t n = static_cast<std::size_t>(degree + 1) / 2;  // coefficients; the reference has n + 1 points
  const Real a = static_cast<Real>(lower) / upper;
  // The first reference: evenly spaced in acos(u), like the extrema of T_degree (a Chebyshev-like polynomial).
  std::vector<Real> reference(n + 1);
  const Real theta_a = std::acos(a);
  for (std::size_t i = 0; i <= n; ++i) reference[i] = i == 0 ? a : std::cos(theta_a * static_cast<Real>(n - i) / n);
  for (int iteration = 1; iteration <= options.max_iterations; ++iteration) {
    const auto [c, levelled_error] = levelled(reference, degree);
    const std::vector<Point> candidates = extrema(c, 1, a, 1);
    const Real worst = largest_error(candidates);
    if (worst > noise_floor) {
      const std::vector<Point> next = exchange(candidates, n + 1);
      if (next.size() < n + 1 && std::abs(levelled_error) < noise_floor && degree > 3) {
        // The levelled error is rounding: this degree is more than the interval needs (its optimum lies below what
        // doubles hold) and the system is too ill-conditioned to find it. A lower degree reaches the floor.
        return minimax_sign(degree - 2, lower, upper, options);
      }
      require<NumericalError>(next.size() == n + 1,
                              "minimax sign (degree {}, [{}, {}]): iteration {} found {} alternating extrema, not {}",
                              degree, lower, upper, iteration, next.size(), n + 1);
      for (std::size_t i = 0; i <= n; ++i) reference[i] = next[i].x;
      const Real gap = worst - std::abs(levelled_error);
      if (gap > static_cast<Real>(options.tolerance) * worst && gap > resolution) continue;
    }

    MinimaxSign out;
    out.iterations = iteration;
    out.polynomial.basis = PolynomialBasis::chebyshev;
    out.polynomial.lower = -upper;
    out.polynomial.upper = upper;
    out.polynomial.coefficients.assign(c.begin(), c.end());  // rounded to double once
    // The error and alternation of the polynomial as stored.
    const std::vector<Point> stored = extrema(widened(out.polynomial.coefficients), 1, a, 1);
    out.error = static_cast<double>(largest_error(stored));
    for (const Point& p : exchange(stored, n + 1)) out.alternation.push_back(static_cast<double>(p.x * upper));
    return out;
  }
  throw NumericalError(fmt::format("minimax sign (degree {}, [{}, {}]): the Remez exchange did not converge to a "
                                   "relative tolerance of {} in {} iterations",
                                   degree, lower, upper, options.tolerance, options.max_iterations));
}

namespace {

// Whether a stage keeps the inputs below its interval in hand: p >= 0 on [0, 1] (x near 0 keeps its sign) and p no
// larger there than on [design, 1] (after the division by the maximum, the next stage's inputs stay in [-1, 1]).
bool keeps_gap(const std::vector<double>& c, double design) {
  const Range whole = range(c, 0, 1), domain = range(c, design, 1);
  return whole.min >= 0 && whole.max <= domain.max + 1e-15L;
}

// The next, wider design interval's lower end: halved, or its distance to 1 multiplied by 4 near 1.
double widen(double design) { return std::max(design / 2, 1 - 4 * (1 - design)); }

// A stage of `degree` for inputs in [lower, 1]: the minimax sign there, unless that polynomial misbehaves below
// `lower` (an image so narrow, typically after a stage that is already accurate, that the optimum ignores the gap)
// or cannot be found (a system too ill-conditioned); then the minimax on a wider interval, which bounds the error on
// [lower, 1] as well.
std::vector<double> design_stage(int degree, double lower, const RemezOptions& options, std::size_t stage) {
  constexpr int max_widenings = 64;
  double design = lower;
  std::string last_problem;
  for (int attempt = 0; attempt <= max_widenings; ++attempt, design = widen(design)) {
    try {
      MinimaxSign m = minimax_sign(degree, design, 1, options);
      if (keeps_gap(m.polynomial.coefficients, design)) return std::move(m.polynomial.coefficients);
      last_problem = fmt::format("on [{}, 1] it leaves [0, 1] below {}", design, design);
    } catch (const NumericalError& e) {
      last_problem = e.what();
    }
  }
  throw NumericalError(fmt::format("composite sign: stage {} (degree {}) for inputs in [{}, 1]: no design down to [{}, "
                                   "1] keeps the inputs near 0 in hand ({})",
                                   stage, degree, lower, design, last_problem));
}

}  // namespace

double CompositeSign::evaluate(double x) const {
  for (const SignStage& s : stages) x = s.polynomial.evaluate(x);
  return x;
}

CompositeSign composite_sign(const std::vector<int>& degrees, double eps, const RemezOptions& options) {
  require(!degrees.empty(), "composite sign: no stage degrees");
  for (const int d : degrees) require(d >= 3 && d % 2 == 1, "composite sign: stage degree {} must be odd and at least 3", d);
  require(std::isfinite(eps) && eps > 0 && eps < 1, "composite sign: eps {} must be in (0, 1)", eps);
  CompositeSign out;
  out.eps = eps;
  double lower = eps;  // the image of [eps, 1] under the stages so far is [lower, 1]
  for (std::size_t i = 0; i < degrees.size(); ++i) {
    std::vector<double> c = design_stage(degrees[i], lower, options, i + 1);
    const Range whole = range(c, 0, 1), image = range(c, lower, 1);
    SignStage stage;
    stage.lower = lower;
    stage.error = static_cast<double>(std::max(1 - image.min, image.max - 1));
    if (i + 1 == degrees.size()) {
      out.error = stage.error;
      out.peak = static_cast<double>(whole.max);  // the stages before map [0, 1] into [0, 1]
    } else {
      // Divided by its maximum, so that the next stage's inputs stay in [-1, 1]; it then maps [eps, 1] to
      // [lo, hi] with hi <= 1, and the next stage is designed on [lo, 1], which holds it.
      const long double scale = 1 / whole.max;
      for (double& v : c) v = static_cast<double>(v * scale);
      const Range scaled = range(c, lower, 1);  // of the scaled, stored coefficients
      // Below 1 - 2^-40 even when this stage is exact to the last bit: a later stage needs an interval.
      lower = std::min(static_cast<double>(scaled.min), 1 - std::exp2(-40));
    }
    stage.polynomial.coefficients = std::move(c);
    out.stages.push_back(std::move(stage));
  }
  return out;
}

}  // namespace cerium::circuits
