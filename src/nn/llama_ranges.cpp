#include "cerium/nn/llama_ranges.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cerium/core/check.hpp"

namespace cerium::nn {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

LlamaLayerRanges empty_ranges() {
  return {.scores = {.lower = kInfinity, .upper = -kInfinity, .lowest_row_max = kInfinity},
          .input_mean_square_lower = kInfinity, .input_mean_square_upper = -kInfinity,
          .attention_mean_square_lower = kInfinity, .attention_mean_square_upper = -kInfinity,
          .activation_bound = 0};
}

void row_mean_squares(const Matrix& x, double& lower, double& upper) {
  for (std::size_t r = 0; r < x.rows; ++r) {
    double sum = 0;
    for (const double v : x.row(r)) sum += v * v;
    lower = std::min(lower, sum / static_cast<double>(x.cols));
    upper = std::max(upper, sum / static_cast<double>(x.cols));
  }
}

// Causal scores of every query head against its key-value head: q and k after RoPE.
void causal_scores(const Matrix& q, const Matrix& k, const LlamaConfig& config, ScoreRange& range) {
  const std::size_t d = config.head_dim(), group = config.heads / config.kv_heads;
  const double norm = 1 / std::sqrt(static_cast<double>(d));
  for (std::size_t h = 0; h < config.heads; ++h) {
    const std::size_t g = h / group;
    for (std::size_t t = 0; t < q.rows; ++t) {
      double row_max = -kInfinity;
      for (std::size_t u = 0; u <= t; ++u) {
        double s = 0;
        for (std::size_t f = 0; f < d; ++f) s += q.at(t, h * d + f) * k.at(u, g * d + f);
        s *= norm;
        range.lower = std::min(range.lower, s);
        range.upper = std::max(range.upper, s);
        row_max = std::max(row_max, s);
      }
      range.lowest_row_max = std::min(range.lowest_row_max, row_max);
    }
  }
}

}  // namespace

void LlamaLayerRanges::cover(const LlamaLayerRanges& o) {
  scores.lower = std::min(scores.lower, o.scores.lower);
  scores.upper = std::max(scores.upper, o.scores.upper);
  scores.lowest_row_max = std::min(scores.lowest_row_max, o.scores.lowest_row_max);
  input_mean_square_lower = std::min(input_mean_square_lower, o.input_mean_square_lower);
  input_mean_square_upper = std::max(input_mean_square_upper, o.input_mean_square_upper);
  attention_mean_square_lower = std::min(attention_mean_square_lower, o.attention_mean_square_lower);
  attention_mean_square_upper = std::max(attention_mean_square_upper, o.attention_mean_square_upper);
  activation_bound = std::max(activation_bound, o.activation_bound);
}

LlamaLayerRanges LlamaLayerRanges::widened(double margin) const {
  require(margin >= 1, "llama ranges: a margin of {} (at least 1)", margin);
  LlamaLayerRanges r = *this;
  const double half = (scores.upper - scores.lower) / 2, extra = (margin - 1) * std::max(half, 1e-3);
  r.scores.lower -= extra;
  r.scores.upper += extra;
  r.scores.lowest_row_max -= extra;
  r.input_mean_square_lower /= margin * margin;
  r.input_mean_square_upper *= margin * margin;
  r.attention_mean_square_lower /= margin * margin;
  r.attention_mean_square_upper *= margin * margin;
  r.activation_bound *= margin;
  return r;
}

LlamaLayerRanges llama_layer_ranges(const LlamaLayerWeights& w, const LlamaConfig& config,
                                    const std::vector<Matrix>& inputs, std::size_t first_position,
                                    std::vector<Matrix>* outputs) {
  require(!inputs.empty(), "llama ranges: no calibration inputs");
  using namespace llama_ops;
  LlamaLayerRanges ranges = empty_ranges();
  if (outputs != nullptr) outputs->clear();
  for (const Matrix& x : inputs) {
    row_mean_squares(x, ranges.input_mean_square_lower, ranges.input_mean_square_upper);
    const Matrix n = rms_norm(x, w.input_norm, config.rms_norm_eps);
    const Matrix q = rope(linear(w.query, n), config.heads, config.rope_theta, first_position);
    const Matrix k = rope(linear(w.key, n), config.kv_heads, config.rope_theta, first_position);
    causal_scores(q, k, config, ranges.scores);
    Matrix h = linear(w.output, causal_attention(q, k, linear(w.value, n), config.heads, config.kv_heads));
    for (std::size_t i = 0; i < h.values.size(); ++i) h.values[i] += x.values[i];
    row_mean_squares(h, ranges.attention_mean_square_lower, ranges.attention_mean_square_upper);
    const Matrix gate = linear(w.gate, rms_norm(h, w.post_attention_norm, config.rms_norm_eps));
    for (const double v : gate.values) ranges.activation_bound = std::max(ranges.activation_bound, std::abs(v));
    if (outputs != nullptr) outputs->push_back(llama_layer_reference(w, config, x, first_position));
  }
  return ranges;
}

std::vector<LlamaLayerRanges> llama_ranges(const LlamaWeights& weights, const std::vector<Matrix>& inputs,
                                           std::size_t first_position) {
  std::vector<LlamaLayerRanges> ranges;
  std::vector<Matrix> x = inputs, next;
  for (const LlamaLayerWeights& layer : weights.layers) {
    ranges.push_back(llama_layer_ranges(layer, weights.config, x, first_position, &next));
    x.swap(next);
  }
  return ranges;
}

}  // namespace cerium::nn
