#include "cerium/nn/encrypted_llama.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "cerium/core/check.hpp"
#include "cerium/nn/row_blocks.hpp"

namespace cerium::nn {

namespace {

RowLinear row_linear(const LinearWeights& w, const RowLayout& in, const RowLayout& out, double factor = 1) {
  std::vector<double> weights = w.weight.values, bias = w.bias;
  for (double& v : weights) v *= factor;
  for (double& v : bias) v *= factor;
  return RowLinear(in, out, std::move(weights), std::move(bias));
}

// Rows [first, first + count) of W (out x in): a gate or up block.
LinearWeights rows_of(const LinearWeights& w, std::size_t first, std::size_t count) {
  LinearWeights out{Matrix::zeros(count, w.weight.cols), {}};
  std::copy_n(w.weight.values.begin() + static_cast<std::ptrdiff_t>(first * w.weight.cols), count * w.weight.cols,
              out.weight.values.begin());
  return out;
}

// Columns [first, first + count) of W: a down block.
LinearWeights columns_of(const LinearWeights& w, std::size_t first, std::size_t count) {
  LinearWeights out{Matrix::zeros(w.weight.rows, count), {}};
  for (std::size_t r = 0; r < w.weight.rows; ++r) {
    for (std::size_t c = 0; c < count; ++c) out.weight.at(r, c) = w.weight.at(r, first + c);
  }
  return out;
}

RmsNorm rms_norm(const RowLayout& layout, const std::vector<double>& gamma, double eps, double lower, double upper,
                 double tolerance) {
  return RmsNorm(layout, {.gamma = gamma, .eps = eps, .mean_square_lower = lower, .mean_square_upper = upper,
                          .tolerance = tolerance});
}

}  // namespace

RowLayout llama_layout(const LlamaConfig& config, const EncryptedLlamaOptions& options) {
  validate(config);
  require(options.ffn_blocks >= 1 && config.ffn % options.ffn_blocks == 0,
          "encrypted llama: an FFN of {} in {} blocks (the blocks must divide it)", config.ffn, options.ffn_blocks);
  const RowLayout layout{.rows = options.rows, .features = config.hidden,
                         .stride = std::bit_ceil(std::max(config.hidden, config.ffn / options.ffn_blocks))};
  layout.validate();
  return layout;
}

LlamaDecoderLayer encrypted_llama_layer(const LlamaLayerWeights& w, const LlamaConfig& config,
                                        const LlamaLayerRanges& calibrated, const EncryptedLlamaOptions& options) {
  check_shapes(w, config);
  require(options.blocks >= 1, "encrypted llama: {} blocks of rows", options.blocks);
  const RowLayout layout = llama_layout(config, options);
  const std::size_t block = config.ffn / options.ffn_blocks;
  const RowLayout wide{.rows = layout.rows, .features = block, .stride = layout.stride};
  const AttentionShape shape{.layout = layout,
                             .heads = config.heads,
                             .causal = true,
                             .blocks = options.blocks,
                             .turn_split = options.turn_split};
  shape.validate();
  const LlamaLayerRanges r = calibrated.widened(options.margin);

  typename LlamaDecoderLayer::Functions functions{
      .softmax = calibrated_softmax(r.scores, shape.tokens(), options.softmax),
      .input_norm = rms_norm(layout, w.input_norm, config.rms_norm_eps, r.input_mean_square_lower,
                             r.input_mean_square_upper, options.norm_tolerance),
      .post_attention_norm = rms_norm(layout, w.post_attention_norm, config.rms_norm_eps,
                                      r.attention_mean_square_lower, r.attention_mean_square_upper,
                                      options.norm_tolerance),
      .activation = Silu({.bound = r.activation_bound,
                          .degree = activation_degree(options.activation_degree, r.activation_bound)})};
  const double query_factor = 1 / std::sqrt(static_cast<double>(config.head_dim()));
  typename LlamaDecoderLayer::Linears linears{
      .query = row_linear(w.query, layout, layout, query_factor),
      .key = row_linear(repeat_kv_heads(w.key, config), layout, layout),
      .value = row_linear(repeat_kv_heads(w.value, config), layout, layout),
      .output = row_linear(w.output, layout, layout),
      .gate = {}, .up = {}, .down = {}};
  for (std::size_t b = 0; b < options.ffn_blocks; ++b) {
    linears.gate.push_back(row_linear(rows_of(w.gate, b * block, block), layout, wide));
    linears.up.push_back(row_linear(rows_of(w.up, b * block, block), layout, wide));
    linears.down.push_back(row_linear(columns_of(w.down, b * block, block), wide, layout));
  }
  RotaryEmbedding rope(layout, {.heads = config.heads, .theta = config.rope_theta, .blocks = options.blocks,
                                .first_position = options.first_position});
  return LlamaDecoderLayer(shape, std::move(rope), std::move(linears), std::move(functions));
}

EncryptedLlama::EncryptedLlama(const LlamaWeights& weights, const std::vector<LlamaLayerRanges>& ranges,
                               const EncryptedLlamaOptions& options)
    : config_(weights.config), layout_(llama_layout(weights.config, options)), blocks_(options.blocks) {
  require(ranges.size() == weights.layers.size(), "encrypted llama: {} ranges for {} layers", ranges.size(),
          weights.layers.size());
  for (std::size_t l = 0; l < weights.layers.size(); ++l) {
    layers_.push_back(encrypted_llama_layer(weights.layers[l], config_, ranges[l], options));
  }
}

std::vector<std::vector<double>> EncryptedLlama::pack_blocks(const Matrix& x) const {
  return pack_row_blocks(layout_, blocks_, x);
}

Matrix EncryptedLlama::unpack_blocks(const std::vector<std::vector<std::complex<double>>>& blocks) const {
  require(blocks.size() == blocks_, "encrypted llama: {} blocks of slots for a model of {}", blocks.size(), blocks_);
  return unpack_row_blocks(layout_, blocks);
}

}  // namespace cerium::nn
