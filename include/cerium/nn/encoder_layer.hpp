#pragma once
// A transformer encoder layer (BERT's post-norm block) over token-major rows, written once over any ops object:
//   h = Norm1(x + O(attention(Q x, K x, V x)))      y = Norm2(h + W2 gelu(W1 h))
// The linear maps are token-wise (nn/row_linear.hpp: compressed diagonals), attention packs its scores
// (nn/attention.hpp), and the non-linear pieces are any objects with forward(ops, x): the polynomial ones of
// nn/nonlinear.hpp for ciphertexts, exact ones to check the data movement. Every tensor of the layer keeps one
// RowLayout stride (the widest of hidden and FFN), so the layer's maps stay inside rows.

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/nn/attention.hpp"
#include "cerium/nn/row_layout.hpp"
#include "cerium/nn/row_linear.hpp"

namespace cerium::nn {

// An EncoderLayer's non-linear pieces: any types with forward(ops, x).
template <class Exp, class Reciprocal, class Norm, class Activation>
struct EncoderFunctions {
  AttentionSoftmax<Exp, Reciprocal> softmax;  // attention's exp and reciprocals
  // Norm1 after attention (output_norm: Norm2, after the FFN).
  Norm attention_norm, output_norm;  // LayerNorm with the layer's gamma and beta
  Activation activation;             // GELU
};

// The layer's token-wise maps (the same whatever the non-linear pieces). The FFN may come in column blocks
// (intermediate[b] then output[b], summed; the output bias in block 0 only), so that a narrower stride fits more
// rows in a ciphertext: all-MiniLM-L6-v2's FFN of 1536 in two blocks of 768 takes a stride of 1024, 32 rows.
struct EncoderLinears {
  // Attention's maps (query, key, value, attention_output: O), and the FFN's blocks (intermediate: W1, output: W2).
  RowLinear query, key, value, attention_output;
  std::vector<RowLinear> intermediate, output;
};

// The encoder layer of the header comment, its pieces fixed at construction.
template <class Exp, class Reciprocal, class Norm, class Activation>
class EncoderLayer {
 public:
  // Its non-linear pieces, and its token-wise maps.
  using Functions = EncoderFunctions<Exp, Reciprocal, Norm, Activation>;
  using Linears = EncoderLinears;

  // query must carry 1 / sqrt(head width) (folded into its weights and bias).
  EncoderLayer(AttentionShape shape, Linears linears, Functions functions)
      : shape_(std::move(shape)), linears_(std::move(linears)), functions_(std::move(functions)) {
    shape_.validate();
    require(!linears_.intermediate.empty() && linears_.intermediate.size() == linears_.output.size(),
            "encoder layer: {} intermediate and {} output blocks", linears_.intermediate.size(),
            linears_.output.size());
    // Folded attention reads the queries by head parts: made by the query weights masked (no level).
    if (shape_.folds() > 1) {
      for (std::size_t c = 0; c < shape_.folds(); ++c) {
        query_parts_.push_back(linears_.query.masked_outputs(shape_.part_features(c)));
      }
    }
  }

  // What it was built from.
  const AttentionShape& shape() const { return shape_; }
  const Linears& linears() const { return linears_; }
  const Functions& functions() const { return functions_; }

  // x: one value per block of rows (shape().blocks); the result likewise.
  template <class Ops>
  std::vector<typename Ops::Value> forward(Ops& ops, std::span<const typename Ops::Value> x) const {
    using Value = typename Ops::Value;
    const auto& l = linears_;
    require(x.size() == shape_.blocks, "encoder layer: {} blocks of rows for a layer of {}", x.size(),
            shape_.blocks);
    std::vector<std::vector<Value>> q;
    std::vector<Value> k, v;
    for (const Value& block : x) {
      q.emplace_back();
      if (query_parts_.empty()) q.back().push_back(l.query.forward(ops, block));
      for (const RowLinear& part : query_parts_) q.back().push_back(part.forward(ops, block));
      k.push_back(l.key.forward(ops, block));
      v.push_back(l.value.forward(ops, block));
    }
    const std::vector<Value> attended =
        self_attention<Ops>(ops, std::span<const std::vector<Value>>(q), k, v, shape_, functions_.softmax);
    std::vector<Value> out;
    for (std::size_t b = 0; b < x.size(); ++b) {
      const Value h =
          functions_.attention_norm.forward(ops, ops.add(x[b], l.attention_output.forward(ops, attended[b])));
      ops.label(h, "attention block");
      std::vector<Value> inner;
      std::vector<const RowLinear*> down;
      for (std::size_t f = 0; f < l.intermediate.size(); ++f) {
        inner.push_back(functions_.activation.forward(ops, l.intermediate[f].forward(ops, h)));
        down.push_back(&l.output[f]);
      }
      Value y = ops.add(h, RowLinear::forward_sum(ops, std::span<const RowLinear* const>(down),
                                                  std::span<const Value>(inner)));
      y = functions_.output_norm.forward(ops, y);
      ops.label(y, "encoder layer");
      out.push_back(std::move(y));
    }
    return out;
  }
  // One ciphertext of rows.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    auto out = forward(ops, std::span<const typename Ops::Value>(&x, 1));
    return std::move(out.front());
  }

 private:
  AttentionShape shape_;
  Linears linears_;
  Functions functions_;
  std::vector<RowLinear> query_parts_;  // the query masked to each head part (a fold of more than one)
};

}  // namespace cerium::nn
