// The exact plaintext BERT encoder (nn/bert.hpp), from the pieces of nn/bert_ops.hpp.

#include <cmath>

#include "cerium/core/check.hpp"
#include "cerium/nn/bert.hpp"
#include "cerium/nn/bert_ops.hpp"

namespace cerium::nn {

Matrix bert_layer_reference(const BertLayerWeights& weights, const BertConfig& config, const Matrix& x,
                            std::size_t valid_tokens) {
  validate(config);
  check_shapes(weights, config);
  require<MismatchError>(x.cols == config.hidden && x.values.size() == x.rows * x.cols,
                         "bert: the input is {} x {} ({} values); the layer takes rows of {}", x.rows, x.cols,
                         x.values.size(), config.hidden);
  require(x.rows >= 1 && valid_tokens <= x.rows, "bert: {} valid tokens of {} rows", valid_tokens, x.rows);
  using namespace bert_ops;
  const Matrix context = attention(linear(weights.query, x), linear(weights.key, x), linear(weights.value, x),
                                   config.heads, valid_tokens);
  const Matrix a = layer_norm(add(x, linear(weights.attention_output, context)), weights.attention_norm,
                              config.layer_norm_eps);
  Matrix h = linear(weights.intermediate, a);
  for (double& v : h.values) v = gelu(v);
  return layer_norm(add(a, linear(weights.output, h)), weights.output_norm, config.layer_norm_eps);
}

Matrix bert_reference(const BertWeights& weights, const Matrix& x, std::size_t valid_tokens) {
  require<MismatchError>(weights.layers.size() == weights.config.layers, "bert: {} layers of weights for a {}-layer "
                         "configuration", weights.layers.size(), weights.config.layers);
  Matrix y = x;
  for (const BertLayerWeights& layer : weights.layers) y = bert_layer_reference(layer, weights.config, y, valid_tokens);
  return y;
}

std::vector<double> mean_pool(const Matrix& hidden, std::size_t valid_tokens) {
  require(hidden.rows >= 1 && valid_tokens <= hidden.rows && hidden.values.size() == hidden.rows * hidden.cols,
          "bert: pooling {} valid tokens of a {} x {} matrix", valid_tokens, hidden.rows, hidden.cols);
  const std::size_t n = valid_tokens == 0 ? hidden.rows : valid_tokens;
  std::vector<double> mean(hidden.cols, 0.0);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t c = 0; c < hidden.cols; ++c) mean[c] += hidden.at(t, c);
  }
  for (double& v : mean) v /= static_cast<double>(n);
  return mean;
}

double cosine_similarity(std::span<const double> a, std::span<const double> b) {
  require<MismatchError>(a.size() == b.size(), "cosine similarity of vectors of {} and {}", a.size(), b.size());
  double dot = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  require(aa > 0 && bb > 0, "cosine similarity of a zero vector");
  return dot / std::sqrt(aa * bb);
}

}  // namespace cerium::nn
