#pragma once
// Llama 3's decoder block (Hugging Face's LlamaDecoderLayer): its configuration, its weights in PyTorch's layout,
// and an exact plaintext reference in double precision (RMSNorm, RoPE, causal softmax and SiLU as defined, no
// approximation) that the encrypted decoder is measured against.
//
// One layer, on x (tokens x hidden), token t at position p = first_position + t:
//   n = RMSNorm(x) = x / sqrt(mean(x^2) + eps) * input_norm                      per row
//   q, k, v = n Wq^T, n Wk^T, n Wv^T   (q: heads blocks of head_dim; k, v: kv_heads blocks; no biases)
//   q, k = RoPE(q), RoPE(k)            (rotate-half: feature i < d/2 pairs with i + d/2, angle p theta^(-2i/d))
//   context = per query head h: softmax(q_h k_g^T / sqrt(head_dim), causal) v_g, g = h / (heads / kv_heads)
//   h = x + context Wo^T
//   m = RMSNorm(h) with post_attention_norm
//   y = h + (SiLU(m Wg^T) * (m Wu^T)) Wd^T
// Causal: row t attends to rows 0..t of the same input only (no cache of earlier tokens).
//
// Not modelled: Llama 3.1's "llama3" rope_scaling (a per-frequency rescaling of theta^(-2i/d) for long contexts),
// the final norm and the LM head. The default configuration is Llama-3-8B's (and 3.1-8B's, scaling aside); its
// layers hold 218M parameters (1.7 GB of doubles) each, so seeded_layer draws one at a time.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/nn/bert.hpp"  // Matrix, LinearWeights

namespace cerium::nn {

// A Llama decoder's shape; Llama-3-8B's by default.
struct LlamaConfig {
  // The layer count, the hidden width, the query and key-value heads, the FFN's width, RMSNorm's epsilon and
  // RoPE's base theta.
  std::size_t layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn = 14336;
  double rms_norm_eps = 1e-5;
  double rope_theta = 500000;

  // hidden / heads (0 without heads).
  std::size_t head_dim() const { return heads == 0 ? 0 : hidden / heads; }
};

// InvalidArgument for a configuration that cannot be a Llama: zero sizes, hidden not divisible by heads, heads not
// divisible by kv_heads, an odd head_dim (RoPE turns pairs), an epsilon or theta that is not positive and finite.
void validate(const LlamaConfig& config);

// One decoder layer's parameters, named as in the header comment's formulas.
struct LlamaLayerWeights {
  // Attention's Wq, Wk, Wv (hidden, kv_heads x head_dim, the same outputs) and the FFN's Wg, Wu, Wd (gate, up,
  // down: ffn, ffn, hidden outputs), each out x in.
  std::vector<double> input_norm;            // RMSNorm gamma, hidden
  LinearWeights query, key, value, output;   // hidden, kv_heads x head_dim, same, hidden outputs (out x in)
  std::vector<double> post_attention_norm;   // hidden
  LinearWeights gate, up, down;
};

// A whole decoder's parameters.
struct LlamaWeights {
  // Its configuration, and one entry per layer.
  LlamaConfig config;
  std::vector<LlamaLayerWeights> layers;

  // Drawn from a seed at the configuration's shapes, scaled like Llama's initializer: weights N(0, 0.02), RMSNorm
  // gammas N(1, 0.02), no biases. Layer i is seeded_layer(config, seed, i).
  static LlamaWeights seeded(const LlamaConfig& config, std::uint64_t seed);
  // One layer alone, from its own stream (seed and layer index), without drawing the others. InvalidArgument for a
  // layer index past the configuration's layers.
  static LlamaLayerWeights seeded_layer(const LlamaConfig& config, std::uint64_t seed, std::size_t layer);
};

// MismatchError naming the first tensor whose shape is not the configuration's. A bias may be empty (Llama's: none)
// or hold one value per output.
void check_shapes(const LlamaLayerWeights& weights, const LlamaConfig& config);

// The key or value projection (kv_heads x head_dim outputs) with each key-value head's rows repeated over the
// heads / kv_heads query heads that share it (hidden outputs): multi-head attention over the repeated keys and
// values is grouped-query attention. MismatchError when kv is not kv_heads x head_dim by hidden.
LinearWeights repeat_kv_heads(const LinearWeights& kv, const LlamaConfig& config);

namespace llama_ops {

// x W^T (+ b when the bias is not empty) per row. MismatchError when x's columns are not W's inputs or the bias is
// neither empty nor one per output.
Matrix linear(const LinearWeights& weights, const Matrix& x);
// Per row: x / sqrt(mean(x^2) + eps) * gamma. MismatchError when gamma is not one per column, InvalidArgument for
// eps <= 0.
Matrix rms_norm(const Matrix& x, std::span<const double> gamma, double eps);
// Rotary position embedding, Hugging Face's rotate-half convention (see the top of this file), on `heads` column
// blocks of x; row t is at position first_position + t. InvalidArgument for columns that do not split into heads
// of even width, or theta <= 0.
Matrix rope(const Matrix& x, std::size_t heads, double theta, std::size_t first_position = 0);
// x sigmoid(x), without overflow for large |x|.
double silu(double x);
// Causal grouped-query attention: q tokens x (heads x d), k and v tokens x (kv_heads x d); query head h reads
// key-value head h / (heads / kv_heads); row t attends to rows 0..t with scores q.k / sqrt(d). kv_heads == heads
// is plain multi-head attention. MismatchError / InvalidArgument for shapes or head counts that do not fit.
Matrix causal_attention(const Matrix& q, const Matrix& k, const Matrix& v, std::size_t heads, std::size_t kv_heads);

}  // namespace llama_ops

// x: tokens x hidden, token t at position first_position + t. Attention sees only these rows and RoPE's scores
// depend on position differences only, so the output equals first_position 0's up to rounding; it is there so that
// an encrypted layer rotating at the same positions can be checked value for value. MismatchError when x or the
// weights do not have the configuration's sizes, InvalidArgument for no rows or a bad configuration.
Matrix llama_layer_reference(const LlamaLayerWeights& weights, const LlamaConfig& config, const Matrix& x,
                             std::size_t first_position = 0);
// All layers one after the other (no final norm, no head). MismatchError when the layer count is not the
// configuration's.
Matrix llama_reference(const LlamaWeights& weights, const Matrix& x, std::size_t first_position = 0);

}  // namespace cerium::nn
