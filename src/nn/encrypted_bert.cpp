#include "cerium/nn/encrypted_bert.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "cerium/core/check.hpp"
#include "cerium/nn/calibrated_softmax.hpp"
#include "cerium/nn/row_blocks.hpp"

namespace cerium::nn {

namespace {

std::vector<double> scaled(std::vector<double> v, double factor) {
  for (double& x : v) x *= factor;
  return v;
}

RowLinear row_linear(const LinearWeights& w, const RowLayout& in, const RowLayout& out, double factor = 1) {
  return RowLinear(in, out, scaled(w.weight.values, factor), scaled(w.bias, factor));
}

// Rows [first, first + count) of W (out x in) and their biases: an FFN block's intermediate map.
LinearWeights ffn_rows(const LinearWeights& w, std::size_t first, std::size_t count) {
  LinearWeights out{Matrix::zeros(count, w.weight.cols), {}};
  for (std::size_t r = 0; r < count; ++r) {
    for (std::size_t c = 0; c < w.weight.cols; ++c) out.weight.at(r, c) = w.weight.at(first + r, c);
    out.bias.push_back(w.bias.at(first + r));
  }
  return out;
}

// Columns [first, first + count) of W: an FFN block's share of the output map (the bias with one block only).
LinearWeights ffn_columns(const LinearWeights& w, std::size_t first, std::size_t count, bool with_bias) {
  LinearWeights out{Matrix::zeros(w.weight.rows, count), with_bias ? w.bias : std::vector<double>{}};
  for (std::size_t r = 0; r < w.weight.rows; ++r) {
    for (std::size_t c = 0; c < count; ++c) out.weight.at(r, c) = w.weight.at(r, first + c);
  }
  return out;
}

LayerNorm layer_norm(const RowLayout& layout, const NormWeights& w, double eps, double lower, double upper,
                     double tolerance) {
  return LayerNorm(layout, {.gamma = w.gamma, .beta = w.beta, .eps = eps, .variance_lower = lower,
                            .variance_upper = upper, .tolerance = tolerance});
}

}  // namespace

EncryptedBert::EncryptedBert(const BertWeights& weights, const std::vector<BertLayerRanges>& ranges,
                             const EncryptedBertOptions& options)
    : config_(weights.config) {
  validate(config_);
  require(ranges.size() == weights.layers.size(), "encrypted bert: {} ranges for {} layers", ranges.size(),
          weights.layers.size());
  require(options.blocks >= 1 && options.valid_tokens <= options.rows * options.blocks,
          "encrypted bert: {} valid tokens of {} blocks of {} rows", options.valid_tokens, options.blocks,
          options.rows);
  blocks_ = options.blocks;
  require(options.ffn_blocks >= 1 && config_.ffn % options.ffn_blocks == 0,
          "encrypted bert: an FFN of {} in {} blocks (the blocks must divide it)", config_.ffn, options.ffn_blocks);
  const std::size_t block = config_.ffn / options.ffn_blocks;
  const std::size_t stride = std::bit_ceil(std::max(config_.hidden, block));
  layout_ = {.rows = options.rows, .features = config_.hidden, .stride = stride};
  layout_.validate();
  const RowLayout wide{.rows = options.rows, .features = block, .stride = stride};
  const std::size_t valid = options.valid_tokens == 0 ? tokens() : options.valid_tokens;
  const AttentionShape shape{.layout = layout_, .heads = config_.heads, .valid_rows = valid, .blocks = blocks_};
  shape.validate();
  const double query_factor = 1 / std::sqrt(static_cast<double>(shape.head_width()));

  for (std::size_t l = 0; l < weights.layers.size(); ++l) {
    const BertLayerWeights& w = weights.layers[l];
    check_shapes(w, config_);
    const BertLayerRanges r = ranges[l].widened(options.margin);
    ranges_.push_back(r);
    AttentionSoftmax<Exp, Reciprocal> softmax = calibrated_softmax(
        {.lower = r.score_lower, .upper = r.score_upper, .lowest_row_max = r.lowest_row_max}, valid,
        {.exp = options.exp_tolerance, .reciprocal = options.reciprocal_tolerance, .spread = options.softmax_spread,
         .precise_bootstraps = options.precise_softmax});
    typename Layer::Functions functions{
        .softmax = std::move(softmax),
        .attention_norm = layer_norm(layout_, w.attention_norm, config_.layer_norm_eps, r.attention_variance_lower,
                                     r.attention_variance_upper, options.norm_tolerance),
        .output_norm = layer_norm(layout_, w.output_norm, config_.layer_norm_eps, r.output_variance_lower,
                                  r.output_variance_upper, options.norm_tolerance),
        .activation = Gelu({.bound = r.activation_bound, .degree = activation_degree(options.activation_degree, r.activation_bound)})};
    typename Layer::Linears linears{.query = row_linear(w.query, layout_, layout_, query_factor),
                                    .key = row_linear(w.key, layout_, layout_),
                                    .value = row_linear(w.value, layout_, layout_),
                                    .attention_output = row_linear(w.attention_output, layout_, layout_),
                                    .intermediate = {},
                                    .output = {}};
    for (std::size_t b = 0; b < options.ffn_blocks; ++b) {
      linears.intermediate.push_back(row_linear(ffn_rows(w.intermediate, b * block, block), layout_, wide));
      linears.output.push_back(
          row_linear(ffn_columns(w.output, b * block, block, b == 0), wide, layout_));
    }
    layers_.emplace_back(shape, std::move(linears), std::move(functions));
  }
}

std::vector<std::vector<double>> EncryptedBert::pack_blocks(const Matrix& x) const {
  return pack_row_blocks(layout_, blocks_, x);
}

Matrix EncryptedBert::unpack_blocks(const std::vector<std::vector<std::complex<double>>>& blocks) const {
  require(blocks.size() == blocks_, "encrypted bert: {} blocks of slots for a model of {}", blocks.size(), blocks_);
  return unpack_row_blocks(layout_, blocks);
}

std::vector<double> EncryptedBert::pack(const Matrix& x) const {
  require(blocks_ == 1, "encrypted bert: pack() is for one block of rows; this model has {} (use pack_blocks)",
          blocks_);
  return std::move(pack_blocks(x).front());
}

Matrix EncryptedBert::unpack(std::span<const std::complex<double>> slots) const {
  require(blocks_ == 1, "encrypted bert: unpack() is for one block of rows; this model has {} (use unpack_blocks)",
          blocks_);
  return unpack_blocks({std::vector<std::complex<double>>(slots.begin(), slots.end())});
}

}  // namespace cerium::nn
