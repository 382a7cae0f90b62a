#pragma once
// BERT's encoder (Devlin et al.; the post-LayerNorm layer of BertModel): its configuration, its weights in
// PyTorch's layout, and an exact plaintext reference in double precision (erf GELU, softmax and LayerNorm as
// defined, no approximation) that the encrypted encoder is measured against.
//
// One layer, on x (tokens x hidden):
//   q, k, v = x Wq^T + bq, x Wk^T + bk, x Wv^T + bv, each split into `heads` blocks of hidden / heads columns
//   context = per head softmax(q k^T / sqrt(hidden / heads)) v, the heads side by side
//   a = LayerNorm(x + context Wo^T + bo)                                   (attention_norm)
//   y = LayerNorm(a + GELU(a W1^T + b1) W2^T + b2)                        (output_norm)
// With valid_tokens = n < tokens, the keys and values of the rows from n on are masked out (BertModel's attention
// mask: padding): every row attends to the first n rows only, so those rows' outputs do not depend on the padding.
//
// The pretrained all-MiniLM-L6-v2 (6 layers, hidden 384, 12 heads, FFN 1536; scripts/export_minilm.py writes it)
// loads through from_weights; seeded() gives weights at any published shape (BERT-Base: 12 layers, 768, 12, 3072)
// for timings.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/io/weights.hpp"

namespace cerium::nn {

// A BERT encoder's shape; all-MiniLM-L6-v2's by default.
struct BertConfig {
  // The layer count, the hidden width, the attention heads, the FFN's width, and LayerNorm's epsilon.
  std::size_t layers = 6, hidden = 384, heads = 12, ffn = 1536;
  double layer_norm_eps = 1e-12;
};

// InvalidArgument for a configuration that cannot be a BERT: no layers, zero sizes, hidden not divisible by heads,
// an epsilon that is not positive.
void validate(const BertConfig& config);

// A dense matrix of doubles (one row a token in the models).
struct Matrix {
  // The dimensions: rows x cols.
  std::size_t rows = 0, cols = 0;
  std::vector<double> values;  // row-major

  // rows x cols zeros.
  static Matrix zeros(std::size_t rows, std::size_t cols) { return {rows, cols, std::vector<double>(rows * cols)}; }
  // Unchecked, as std::vector's operator[].
  double& at(std::size_t r, std::size_t c) { return values[r * cols + c]; }
  double at(std::size_t r, std::size_t c) const { return values[r * cols + c]; }
  std::span<const double> row(std::size_t r) const { return {values.data() + r * cols, cols}; }
};

// A linear layer's parameters: y = x weight^T + bias.
struct LinearWeights {
  Matrix weight;             // out x in, as PyTorch
  std::vector<double> bias;  // one per output; empty: none
};

// A LayerNorm's parameters: the scale gamma and the shift beta.
struct NormWeights {
  // The scale, one per feature.
  std::vector<double> gamma, beta;  // the shift, one per feature
};

// One encoder layer's parameters, named as in the header comment's formulas.
struct BertLayerWeights {
  // Wq, Wk, Wv, Wo with their biases; attention_norm; W1 (intermediate) and W2 (output); output_norm.
  LinearWeights query, key, value, attention_output;
  NormWeights attention_norm;
  LinearWeights intermediate, output;
  NormWeights output_norm;
};

// A whole encoder's parameters.
struct BertWeights {
  // Its configuration, and one entry per layer.
  BertConfig config;
  std::vector<BertLayerWeights> layers;

  // From a weight file with scripts/export_minilm.py's names, per layer i: "layers.{i}.attention.{query,key,value,
  // output}.{weight,bias}", "layers.{i}.attention.norm.{gamma,beta}", "layers.{i}.intermediate.{weight,bias}",
  // "layers.{i}.output.{weight,bias}", "layers.{i}.output.norm.{gamma,beta}"; weights out x in. MismatchError
  // naming a tensor that is absent or has other dimensions.
  static BertWeights from_weights(const io::WeightFile& weights, const BertConfig& config);
  // Drawn from a seed at the configuration's shapes, scaled like a trained BERT: weights and biases N(0, 0.02)
  // (BERT's initializer range), LayerNorm gamma N(1, 0.02) and beta N(0, 0.02).
  static BertWeights seeded(const BertConfig& config, std::uint64_t seed);
  // The same tensors under from_weights' names (f32 storage: the 6-layer MiniLM encoder in 42 MB).
  io::WeightFile to_weights(io::Precision precision = io::Precision::f32) const;
};

// MismatchError naming the first tensor whose shape is not the configuration's.
void check_shapes(const BertLayerWeights& weights, const BertConfig& config);

// x: tokens x hidden. valid_tokens 0 means all; InvalidArgument when it exceeds the rows, MismatchError when x or
// the weights do not have the configuration's sizes.
Matrix bert_layer_reference(const BertLayerWeights& weights, const BertConfig& config, const Matrix& x,
                            std::size_t valid_tokens = 0);
Matrix bert_reference(const BertWeights& weights, const Matrix& x, std::size_t valid_tokens = 0);

// The mean of the first valid_tokens rows (0: all): sentence-transformers' mean pooling, before normalization.
std::vector<double> mean_pool(const Matrix& hidden, std::size_t valid_tokens = 0);
// MismatchError for different lengths, InvalidArgument for a zero vector.
double cosine_similarity(std::span<const double> a, std::span<const double> b);

}  // namespace cerium::nn
