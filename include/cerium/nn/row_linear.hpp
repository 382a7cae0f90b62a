#pragma once
// A token-wise linear layer on a RowLayout, y(r, :) = W x(r, :) + b for every row r, as one slot-linear map: the
// entry W[j][i] takes slot r s + i to slot r s + j, on the diagonal of offset i - j whatever the row, so the
// map has at most in + out - 1 diagonals and each repeats with period s (the stride): it is stored and encoded
// as s values (graph::DiagonalSource with a period), and graph::multiply applies it by baby-step giant-step in
// one level.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cerium/circuits/diagonal_matrix.hpp"
#include "cerium/core/check.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/node.hpp"
#include "cerium/nn/row_layout.hpp"

namespace cerium::nn {

// A token-wise layer's slot-linear map (the header comment): the weights kept diagonal by diagonal, each diagonal's
// period made on demand. Diagonal-major because a plan and its run make every diagonal once per ciphertext of
// rows (16 times for a Llama block): read from a row-major matrix, each of its values is a cache miss.
class RowLinearMap {
 public:
  // weights: out.features x in.features, row-major (PyTorch's out x in). InvalidArgument for another size or
  // layouts of other rows or strides.
  RowLinearMap(const RowLayout& in, const RowLayout& out, std::vector<double> weights);

  // The slot count, the diagonals' period (the stride), and the offsets of the diagonals it has.
  std::size_t slots() const { return in_.slots(); }
  std::size_t period() const { return in_.stride; }
  std::vector<std::int64_t> offsets() const;
  // The diagonal at `offset` (in [0, slots)): period() values.
  std::vector<circuits::Complex> diagonal(std::int64_t offset) const;
  // The map applied to one row's features (the plaintext reference of a row).
  std::vector<double> apply_row(const std::vector<double>& x) const;
  // The map with output feature j times mask[j] (out.features values): a mask applied to its outputs for free.
  RowLinearMap masked_outputs(const std::vector<double>& mask) const;

 private:
  // Diagonal d = i - j (in [-(out - 1), in)) of W: W[j][j + d] for j from first_row(d), contiguous from
  // start_[d + out - 1].
  std::size_t first_row(std::int64_t d) const;
  RowLayout in_, out_;
  std::vector<double> diagonals_;
  std::vector<std::size_t> start_;  // in + out entries: the last is diagonals_.size()
};

// A token-wise linear layer: its map by graph::multiply, then its bias. Its diagonals' plaintexts are made once
// (graph::BsgsProduct), so every ciphertext of rows it multiplies shares them: a program holds each once.
class RowLinear {
 public:
  // bias: out.features values, or empty for none.
  RowLinear(const RowLayout& in, const RowLayout& out, std::vector<double> weights, std::vector<double> bias);

  // The layouts in and out, and the map.
  const RowLayout& input_layout() const { return in_; }
  const RowLayout& output_layout() const { return out_; }
  const RowLinearMap& map() const { return *map_; }

  // y = W x + b on every row, on any ops: one level.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    typename Ops::Value y = graph::multiply(ops, x, product_);
    if (!bias_.empty()) y = ops.add(y, bias_);
    ops.label(y, "linear");  // a profile's matrix-product share
    return y;
  }
  // sum_f layers[f] x[f] with every layer's bias, on any ops: the layers (of one output layout) share their giant
  // steps (graph::multiply_sum), so a projection split over several input ciphertexts (an FFN's down projection
  // over its blocks) turns its partial sums once. One level. InvalidArgument for counts that differ or none.
  template <class Ops>
  static typename Ops::Value forward_sum(Ops& ops, std::span<const RowLinear* const> layers,
                                         std::span<const typename Ops::Value> x) {
    require(!layers.empty() && layers.size() == x.size(), "row linear sum: {} layers for {} inputs", layers.size(),
            x.size());
    std::vector<const graph::BsgsProduct*> products;
    for (const RowLinear* layer : layers) products.push_back(&layer->product_);
    typename Ops::Value y = graph::multiply_sum(ops, x, std::span<const graph::BsgsProduct* const>(products));
    for (const RowLinear* layer : layers) {
      if (!layer->bias_.empty()) y = ops.add(y, layer->bias_);
    }
    ops.label(y, "linear");
    return y;
  }
  // Every row of a tokens x in.features matrix (row-major) through the layer, exactly.
  std::vector<double> reference(const std::vector<double>& x) const;
  // The layer with output feature j (weights and bias) times mask[j]: its outputs masked without a level
  // (attention's query parts). It shares no plaintexts with this one.
  RowLinear masked_outputs(const std::vector<double>& mask) const;

 private:
  RowLinear(const RowLayout& in, const RowLayout& out, std::shared_ptr<const RowLinearMap> map,
            std::vector<double> bias);
  RowLayout in_, out_;
  std::shared_ptr<const RowLinearMap> map_;
  graph::BsgsProduct product_;  // the map's plan and plaintexts, shared by every product
  std::vector<double> bias_values_;
  graph::PlainVector bias_;
};

}  // namespace cerium::nn
