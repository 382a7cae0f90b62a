#pragma once
// Linear layers as slot-linear maps: an entry (output slot, input slot, weight) per product of the layer, gathered
// into the diagonals of a circuits::DiagonalMatrix (entry (i, j) lies on diagonal (j - i) mod n), which
// graph::multiply applies by baby-step giant-step in one level. Convolutions (any stride, zero padding), average
// pooling and dense layers are such maps between two packings, so their strides and reshapes cost nothing extra.

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "cerium/circuits/diagonal_matrix.hpp"
#include "cerium/nn/tensor.hpp"

namespace cerium::nn {

// Entries are kept sparse, grouped by diagonal (a convolution's map has about C_out H W C_in k^2 entries where
// its dense diagonals would hold slots values each): diagonal(offset) makes one dense diagonal on demand
// (graph::DiagonalSource), matrix() all of them (small maps, tests).
class SlotMap {
 public:
  // An empty map over `slots` slots.
  explicit SlotMap(std::size_t slots);
  // out[out_slot] += weight * in[in_slot]. InvalidArgument for a slot outside the map.
  void add(std::size_t out_slot, std::size_t in_slot, double weight);
  // Between packings: every copy of output index `out_index` reads input index `in_index` from the copy at or
  // after it (a rotation by (in_index - out slot) mod the input's block), so offsets stay below the input block.
  void add(const Packing& out, std::size_t out_index, const Packing& in, std::size_t in_index, double weight);
  // The slot count, the diagonals that hold entries, the entries added, and those diagonals' offsets.
  std::size_t slots() const { return slots_; }
  std::size_t diagonals() const { return entries_.size(); }
  std::size_t entries() const { return count_; }
  std::vector<std::int64_t> offsets() const;
  // Diagonal `offset` (in [0, slots)): slots values, zero where the map has no entry. InvalidArgument for an
  // offset the map does not have.
  std::vector<circuits::Complex> diagonal(std::int64_t offset) const;
  // Every diagonal, as one matrix.
  circuits::DiagonalMatrix matrix() const;

 private:
  std::size_t slots_;
  std::size_t count_ = 0;
  std::map<std::int64_t, std::vector<std::pair<std::uint32_t, double>>> entries_;  // offset -> (out slot, weight)
};

// A 2-D convolution's shape.
struct Conv2dSpec {
  // Input channels C_in.
  std::size_t in_channels = 1, out_channels = 1;  // output channels C_out
  std::size_t kernel = 3;   // square kernels
  std::size_t stride = 1;   // in both directions
  std::size_t padding = 1;  // zeros around the input
  Shape output_shape(const Shape& input) const;  // InvalidArgument for a shape the kernel does not fit
};

// weights[((o C_in + c) k + ky) k + kx]; the map from `in`'s packing to the packing of the output shape.
SlotMap conv2d_map(const Conv2dSpec& spec, const std::vector<double>& weights, const Packing& in, const Packing& out);
// The mean of each channel's plane, into a channels x 1 x 1 packing.
SlotMap global_average_pool_map(const Packing& in, const Packing& out);
// out[k] = sum_i weights[k * in_size + i] in[i] over the input tensor's values in packing order.
SlotMap dense_map(const std::vector<double>& weights, const Packing& in, const Packing& out);

}  // namespace cerium::nn
