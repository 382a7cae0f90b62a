#include "cerium/nn/bert_ranges.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cerium/core/check.hpp"
#include "cerium/nn/bert_ops.hpp"

namespace cerium::nn {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

BertLayerRanges empty_ranges() {
  return {.score_lower = kInfinity, .score_upper = -kInfinity, .lowest_row_max = kInfinity,
          .attention_variance_lower = kInfinity, .attention_variance_upper = -kInfinity,
          .activation_bound = 0, .output_variance_lower = kInfinity, .output_variance_upper = -kInfinity};
}

// The biased variance of each row, into [lower, upper].
void row_variances(const Matrix& x, double& lower, double& upper) {
  for (std::size_t r = 0; r < x.rows; ++r) {
    double mean = 0, var = 0;
    for (const double v : x.row(r)) mean += v / static_cast<double>(x.cols);
    for (const double v : x.row(r)) var += (v - mean) * (v - mean) / static_cast<double>(x.cols);
    lower = std::min(lower, var);
    upper = std::max(upper, var);
  }
}

// One layer on x, its ranges measured into `ranges`; returns the layer's output.
Matrix measure_layer(const BertLayerWeights& w, const BertConfig& config, const Matrix& x, std::size_t valid,
                     BertLayerRanges& ranges) {
  using namespace bert_ops;
  const Matrix q = linear(w.query, x), k = linear(w.key, x), v = linear(w.value, x);
  const std::size_t width = config.hidden / config.heads;
  const double norm = 1 / std::sqrt(static_cast<double>(width));
  for (std::size_t h = 0; h < config.heads; ++h) {
    for (std::size_t r = 0; r < x.rows; ++r) {
      double row_max = -kInfinity;
      for (std::size_t u = 0; u < valid; ++u) {
        double s = 0;
        for (std::size_t f = 0; f < width; ++f) s += q.at(r, h * width + f) * k.at(u, h * width + f);
        s *= norm;
        ranges.score_lower = std::min(ranges.score_lower, s);
        ranges.score_upper = std::max(ranges.score_upper, s);
        row_max = std::max(row_max, s);
      }
      ranges.lowest_row_max = std::min(ranges.lowest_row_max, row_max);
    }
  }
  const Matrix residual = add(x, linear(w.attention_output, attention(q, k, v, config.heads, valid)));
  row_variances(residual, ranges.attention_variance_lower, ranges.attention_variance_upper);
  const Matrix a = layer_norm(residual, w.attention_norm, config.layer_norm_eps);
  Matrix h = linear(w.intermediate, a);
  for (double& value : h.values) {
    ranges.activation_bound = std::max(ranges.activation_bound, std::abs(value));
    value = gelu(value);
  }
  const Matrix out = add(a, linear(w.output, h));
  row_variances(out, ranges.output_variance_lower, ranges.output_variance_upper);
  return layer_norm(out, w.output_norm, config.layer_norm_eps);
}

}  // namespace

void BertLayerRanges::cover(const BertLayerRanges& o) {
  score_lower = std::min(score_lower, o.score_lower);
  score_upper = std::max(score_upper, o.score_upper);
  lowest_row_max = std::min(lowest_row_max, o.lowest_row_max);
  attention_variance_lower = std::min(attention_variance_lower, o.attention_variance_lower);
  attention_variance_upper = std::max(attention_variance_upper, o.attention_variance_upper);
  activation_bound = std::max(activation_bound, o.activation_bound);
  output_variance_lower = std::min(output_variance_lower, o.output_variance_lower);
  output_variance_upper = std::max(output_variance_upper, o.output_variance_upper);
}

BertLayerRanges BertLayerRanges::widened(double margin) const {
  require(margin >= 1, "bert ranges: a margin of {} (at least 1)", margin);
  BertLayerRanges r = *this;
  const double half = (score_upper - score_lower) / 2, extra = (margin - 1) * std::max(half, 1e-3);
  r.score_lower -= extra;
  r.score_upper += extra;
  r.lowest_row_max -= extra;
  r.attention_variance_lower /= margin * margin;
  r.attention_variance_upper *= margin * margin;
  r.activation_bound *= margin;
  r.output_variance_lower /= margin * margin;
  r.output_variance_upper *= margin * margin;
  return r;
}

std::vector<BertLayerRanges> bert_ranges(const BertWeights& weights, const std::vector<Matrix>& inputs,
                                         std::size_t valid_tokens) {
  require(!inputs.empty(), "bert ranges: no calibration inputs");
  std::vector<BertLayerRanges> ranges(weights.layers.size(), empty_ranges());
  for (const Matrix& input : inputs) {
    require(valid_tokens <= input.rows, "bert ranges: {} valid tokens of {} rows", valid_tokens, input.rows);
    const std::size_t valid = valid_tokens == 0 ? input.rows : valid_tokens;
    Matrix x = input;
    for (std::size_t l = 0; l < weights.layers.size(); ++l) {
      x = measure_layer(weights.layers[l], weights.config, x, valid, ranges[l]);
    }
  }
  return ranges;
}

}  // namespace cerium::nn
