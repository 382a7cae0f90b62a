// The row layers of nn/nonlinear.hpp (Softmax, LayerNorm, RmsNorm): construction, exact references, errors
// measured on pseudo-random rows.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "cerium/graph/plain_ops.hpp"
#include "cerium/nn/nonlinear.hpp"
#include "nonlinear_checks.hpp"

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

using nonlinear_checks::require_range;
using nonlinear_checks::require_tolerance;
using nonlinear_detail::depth_of;

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
