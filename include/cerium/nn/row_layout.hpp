#pragma once
// The token-major packing of a transformer's activations: a `rows` x `features` matrix in one ciphertext, row r
// at slots r * stride .. r * stride + features - 1. `stride` is a power of two >= features and rows * stride is
// the whole slot vector, so rotations, which are cyclic over the slot vector, carry every row onto another row
// in the same position. Padding slots (f >= features) hold 0; layers keep them 0.

#include <bit>
#include <cstddef>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/graph/node.hpp"

namespace cerium::nn {

// The packing above: rows x features in rows x stride slots.
struct RowLayout {
  std::size_t rows = 1;      // tokens per ciphertext, a power of two
  std::size_t features = 1;  // valid slots per row
  std::size_t stride = 1;    // slots per row, a power of two >= features

  // The slot count (rows x stride), and the slot of (row, feature).
  std::size_t slots() const { return rows * stride; }
  std::size_t slot(std::size_t row, std::size_t feature) const { return row * stride + feature; }

  // 1 in the valid slots, 0 in the padding: one period of `stride` values (the vector repeats per row).
  graph::PlainVector mask() const {
    std::vector<double> period(stride, 0.0);
    for (std::size_t f = 0; f < features && f < stride; ++f) period[f] = 1.0;
    return graph::PlainVector(period);
  }

  // InvalidArgument unless 1 <= features <= stride, stride and rows are powers of two (slots then is one too).
  void validate() const {
    require(features >= 1 && stride >= features && std::has_single_bit(stride) && std::has_single_bit(rows),
            "row layout: {} rows of {} features in a stride of {}: need 1 <= features <= stride, stride and rows "
            "powers of two",
            rows, features, stride);
  }
};

}  // namespace cerium::nn
