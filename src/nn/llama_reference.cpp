// The exact plaintext Llama decoder (nn/llama.hpp), from the pieces of llama_ops and bert_ops.

#include "cerium/core/check.hpp"
#include "cerium/nn/bert_ops.hpp"
#include "cerium/nn/llama.hpp"

namespace cerium::nn {

Matrix llama_layer_reference(const LlamaLayerWeights& weights, const LlamaConfig& config, const Matrix& x,
                             std::size_t first_position) {
  validate(config);
  check_shapes(weights, config);
  require<MismatchError>(x.cols == config.hidden && x.values.size() == x.rows * x.cols,
                         "llama: the input is {} x {} ({} values); the layer takes rows of {}", x.rows, x.cols,
                         x.values.size(), config.hidden);
  require(x.rows >= 1, "llama: an input of no tokens");
  using namespace llama_ops;
  const Matrix n = rms_norm(x, weights.input_norm, config.rms_norm_eps);
  const Matrix q = rope(linear(weights.query, n), config.heads, config.rope_theta, first_position);
  const Matrix k = rope(linear(weights.key, n), config.kv_heads, config.rope_theta, first_position);
  const Matrix context = causal_attention(q, k, linear(weights.value, n), config.heads, config.kv_heads);
  const Matrix h = bert_ops::add(x, linear(weights.output, context));
  const Matrix m = rms_norm(h, weights.post_attention_norm, config.rms_norm_eps);
  Matrix gated = linear(weights.gate, m);
  const Matrix up = linear(weights.up, m);
  for (std::size_t i = 0; i < gated.values.size(); ++i) gated.values[i] = silu(gated.values[i]) * up.values[i];
  return bert_ops::add(h, linear(weights.down, gated));
}

Matrix llama_reference(const LlamaWeights& weights, const Matrix& x, std::size_t first_position) {
  require<MismatchError>(weights.layers.size() == weights.config.layers,
                         "llama: {} layers of weights for a {}-layer configuration", weights.layers.size(),
                         weights.config.layers);
  Matrix y = x;
  for (const LlamaLayerWeights& layer : weights.layers) {
    y = llama_layer_reference(layer, weights.config, y, first_position);
  }
  return y;
}

}  // namespace cerium::nn
