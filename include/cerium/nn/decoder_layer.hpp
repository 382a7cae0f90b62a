#pragma once
// A transformer decoder layer (Llama's pre-norm block) over token-major rows in one or several ciphertexts,
// written once over any ops object:
//   h = x + O(attention(rope(Q n), rope(K n), V n))      n = Norm1(x), attention causal
//   y = h + sum_f Down_f(act(Gate_f m) * Up_f m)         m = Norm2(h), the FFN in column blocks f
// Grouped-query attention arrives here as plain multi-head attention: K and V's weights carry each key-value head
// repeated over its query heads (nn::repeat_kv_heads), so the rows line up with the queries'. The linear maps are
// token-wise (nn/row_linear.hpp), RoPE is nn/rotary_embedding.hpp, and the non-linear pieces are any objects with
// forward(ops, x): RMSNorm and SiLU polynomials for ciphertexts, exact ones to check the data movement.

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/nn/attention.hpp"
#include "cerium/nn/rotary_embedding.hpp"
#include "cerium/nn/row_layout.hpp"
#include "cerium/nn/row_linear.hpp"

namespace cerium::nn {

// A DecoderLayer's non-linear pieces: any types with forward(ops, x).
template <class Exp, class Reciprocal, class Norm, class Activation>
struct DecoderFunctions {
  AttentionSoftmax<Exp, Reciprocal> softmax;  // attention's exp and reciprocals
  // The norm before attention (post_attention_norm: the one before the FFN).
  Norm input_norm, post_attention_norm;  // RMSNorm with the layer's gammas
  Activation activation;                 // SiLU
};

// query carries 1 / sqrt(head width); key and value have the query's heads (repeated key-value heads).
struct DecoderLinears {
  // Attention's maps (query, key, value, output) and the FFN column blocks (gate, up, down).
  RowLinear query, key, value, output;
  std::vector<RowLinear> gate, up, down;
};

// The decoder layer of the header comment, its pieces fixed at construction.
template <class Exp, class Reciprocal, class Norm, class Activation>
class DecoderLayer {
 public:
  // Its non-linear pieces, and its token-wise maps.
  using Functions = DecoderFunctions<Exp, Reciprocal, Norm, Activation>;
  using Linears = DecoderLinears;

  // InvalidArgument for a shape that is not causal, a RoPE of other rows or blocks, or FFN blocks that differ in
  // number.
  DecoderLayer(AttentionShape shape, RotaryEmbedding rope, Linears linears, Functions functions)
      : shape_(std::move(shape)), rope_(std::move(rope)), linears_(std::move(linears)),
        functions_(std::move(functions)) {
    shape_.validate();
    require(shape_.causal, "decoder layer: attention must be causal");
    // The rows and their stride, not just the slot count: a RoPE of 8 rows of 128 would turn 16 rows of 64 at the
    // wrong positions.
    require(rope_.config().blocks == shape_.blocks && rope_.layout().rows == shape_.layout.rows &&
                rope_.layout().stride == shape_.layout.stride && rope_.config().heads == shape_.heads,
            "decoder layer: a RoPE for {} blocks of {} rows x {} slots in {} heads, attention of {} blocks of {} rows "
            "x {} slots in {} heads",
            rope_.config().blocks, rope_.layout().rows, rope_.layout().stride, rope_.config().heads, shape_.blocks,
            shape_.layout.rows, shape_.layout.stride, shape_.heads);
    require(!linears_.gate.empty() && linears_.gate.size() == linears_.up.size() &&
                linears_.gate.size() == linears_.down.size(),
            "decoder layer: {} gate, {} up and {} down blocks", linears_.gate.size(), linears_.up.size(),
            linears_.down.size());
  }

  // What it was built from.
  const AttentionShape& shape() const { return shape_; }
  const RotaryEmbedding& rope() const { return rope_; }
  const Linears& linears() const { return linears_; }
  const Functions& functions() const { return functions_; }

  // x: one value per block of rows (shape().blocks); the result likewise.
  template <class Ops>
  std::vector<typename Ops::Value> forward(Ops& ops, std::span<const typename Ops::Value> x) const {
    const std::vector<typename Ops::Value> h = forward_attention(ops, x);
    return forward_feed_forward<Ops>(ops, h);
  }
  // The layer's two halves, each with its residual: h = x + attention(norm(x)), then y = h + FFN(norm(h)) (to
  // run, time or check one alone).
  template <class Ops>
  std::vector<typename Ops::Value> forward_attention(Ops& ops, std::span<const typename Ops::Value> x) const {
    using Value = typename Ops::Value;
    const auto& l = linears_;
    require_blocks(x.size());
    std::vector<std::vector<Value>> q(x.size());
    std::vector<Value> k, v;
    for (std::size_t b = 0; b < x.size(); ++b) {
      const Value n = functions_.input_norm.forward(ops, x[b]);
      // Folded attention reads the queries by head parts: RoPE's masks make them (no level).
      const Value query = l.query.forward(ops, n);
      for (std::size_t c = 0; c < shape_.folds(); ++c) {
        q[b].push_back(shape_.folds() == 1 ? rope_.forward(ops, query, b)
                                           : rope_.forward(ops, query, b, shape_.part_features(c)));
      }
      k.push_back(rope_.forward(ops, l.key.forward(ops, n), b));
      v.push_back(l.value.forward(ops, n));
    }
    const std::vector<Value> attended =
        self_attention<Ops>(ops, std::span<const std::vector<Value>>(q), k, v, shape_, functions_.softmax);
    std::vector<Value> out;
    for (std::size_t b = 0; b < x.size(); ++b) {
      Value h = ops.add(x[b], l.output.forward(ops, attended[b]));
      ops.label(h, "attention block");
      out.push_back(std::move(h));
    }
    return out;
  }
  template <class Ops>
  std::vector<typename Ops::Value> forward_feed_forward(Ops& ops, std::span<const typename Ops::Value> h) const {
    using Value = typename Ops::Value;
    const auto& l = linears_;
    require_blocks(h.size());
    std::vector<Value> out;
    for (const Value& hb : h) {
      const Value m = functions_.post_attention_norm.forward(ops, hb);
      std::vector<Value> gated;
      std::vector<const RowLinear*> down;
      for (std::size_t f = 0; f < l.gate.size(); ++f) {
        gated.push_back(ops.multiply(functions_.activation.forward(ops, l.gate[f].forward(ops, m)),
                                     l.up[f].forward(ops, m)));
        down.push_back(&l.down[f]);
      }
      Value y = ops.add(hb, RowLinear::forward_sum(ops, std::span<const RowLinear* const>(down),
                                                   std::span<const Value>(gated)));
      ops.label(y, "decoder layer");
      out.push_back(std::move(y));
    }
    return out;
  }

 private:
  void require_blocks(std::size_t given) const {
    require(given == shape_.blocks, "decoder layer: {} blocks of rows for a layer of {}", given, shape_.blocks);
  }

  AttentionShape shape_;
  RotaryEmbedding rope_;
  Linears linears_;
  Functions functions_;
};

}  // namespace cerium::nn
