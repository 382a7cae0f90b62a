#pragma once
// Multi-head self-attention on token-major ciphertexts (nn/row_layout.hpp), every head at once.
//
// With Q, K, V packed as rows of one ciphertext, turning K by s whole rows puts key (r + s) mod T beside query r,
// so Q * R^(s stride) K summed over each head's features is the score of query r with key r + s, for all r and
// all heads in one product. A segment sum (rotate-and-add over the head's width, a mask at each head's first
// slot, rotate-and-add back) gives that score to every slot of its head. The T shifts give T score ciphertexts;
// softmax runs across them (their sum is the denominator), and the output is sum_s A_s * R^(s stride) V, whose
// slot (r, head h, feature k) is sum_s A(r, r + s, h) V(r + s, h, k).
//
// Cost: 2T ciphertext products, T (2 log2(head width) + 1) rotations, T exponentials and one reciprocal; the T
// score ciphertexts are sparse (one value per head, repeated), so a long sequence wants denser score packing.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/node.hpp"
#include "cerium/nn/row_layout.hpp"

namespace cerium::nn {

// Each aligned segment of `width` slots (a power of two) gets its sum in every slot, for the segments that
// `starts` (1 at a segment's first slot, 0 elsewhere) keeps; the rest become 0. One level (the mask).
template <class Ops>
typename Ops::Value segment_sum(Ops& ops, typename Ops::Value x, std::size_t width, const graph::PlainVector& starts) {
  for (std::size_t k = 1; k < width; k *= 2) x = ops.add(x, ops.rotate(x, static_cast<std::int64_t>(k)));
  x = ops.multiply(x, starts);  // slot i held x_i + ... + x_(i + width - 1): keep the segments' first slots
  for (std::size_t k = 1; k < width; k *= 2) x = ops.add(x, ops.rotate(x, -static_cast<std::int64_t>(k)));
  return x;
}

// Which keys a query may attend to: the first `valid` rows (the rest is padding).
struct AttentionShape {
  RowLayout layout;        // of Q, K, V and the output: features = heads x head width
  std::size_t heads = 1;
  std::size_t valid_rows = 0;  // 0: all rows

  std::size_t head_width() const { return layout.features / heads; }
  std::size_t valid() const { return valid_rows == 0 ? layout.rows : valid_rows; }
  void validate() const {
    layout.validate();
    require(heads >= 1 && layout.features % heads == 0, "attention: {} features in {} heads", layout.features,
            heads);
    const std::size_t w = head_width();
    require((w & (w - 1)) == 0, "attention: a head width of {} (a power of two is needed for the segment sums)", w);
    require(valid() <= layout.rows, "attention: {} valid rows of {}", valid(), layout.rows);
  }
  // 1 at the first slot of every head of every row.
  graph::PlainVector head_starts() const {
    std::vector<double> m(layout.stride, 0.0);
    for (std::size_t h = 0; h < heads; ++h) m[h * head_width()] = 1;
    return graph::PlainVector(m);
  }
  // For shift s: 1 in the valid features of row r when key (r + s) mod rows is valid.
  graph::PlainVector key_mask(std::size_t shift) const {
    std::vector<double> m(layout.slots(), 0.0);
    for (std::size_t r = 0; r < layout.rows; ++r) {
      if ((r + shift) % layout.rows >= valid()) continue;
      for (std::size_t f = 0; f < layout.features; ++f) m[layout.slot(r, f)] = 1;
    }
    return graph::PlainVector(m);
  }
};

// The score bound and the two functions softmax needs, any types with forward(ops, x): exp on
// [lower - upper, 0] and the reciprocal on [valid exp(lower - upper), valid].
template <class Exp, class Reciprocal>
struct AttentionSoftmax {
  double upper = 0;  // scores are at most this (calibrated on plaintext data)
  Exp exp;
  Reciprocal reciprocal;
};

// softmax_s over the T shifts of each query and head, then the weighted sum of the turned values. q carries the
// 1 / sqrt(head width) already (fold it into the query weights).
template <class Ops, class Exp, class Reciprocal>
typename Ops::Value self_attention(Ops& ops, const typename Ops::Value& q, const typename Ops::Value& k,
                                   const typename Ops::Value& v, const AttentionShape& shape,
                                   const AttentionSoftmax<Exp, Reciprocal>& softmax) {
  using Value = typename Ops::Value;
  shape.validate();
  const std::size_t rows = shape.layout.rows;
  const auto row_steps = [&](std::size_t s) { return static_cast<std::int64_t>(s * shape.layout.stride); };
  const graph::PlainVector starts = shape.head_starts();
  std::vector<Value> weights;  // exp(score_s - upper), masked to the valid keys and features
  std::optional<Value> denominator;
  for (std::size_t s = 0; s < rows; ++s) {
    Value turned = s == 0 ? graph::duplicate(k) : ops.rotate(k, row_steps(s));
    Value score = segment_sum(ops, ops.multiply(q, turned), shape.head_width(), starts);
    Value e = ops.multiply(softmax.exp.forward(ops, ops.sub(score, softmax.upper)), shape.key_mask(s));
    denominator = denominator ? ops.add(*denominator, e) : graph::duplicate(e);
    weights.push_back(std::move(e));
  }
  ops.label(*denominator, "softmax denominator");
  const Value inverse = softmax.reciprocal.forward(ops, *denominator);
  std::optional<Value> out;
  for (std::size_t s = 0; s < rows; ++s) {
    Value turned = s == 0 ? graph::duplicate(v) : ops.rotate(v, row_steps(s));
    Value term = ops.multiply(ops.multiply(weights[s], inverse), turned);
    out = out ? ops.add(*out, term) : std::move(term);
  }
  ops.label(*out, "attention");
  return std::move(*out);
}

}  // namespace cerium::nn
