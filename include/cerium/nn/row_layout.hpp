#pragma once
// Token-major packing of a matrix (rows = tokens, features per row) into the slots of one ciphertext: slot(r, f) =
// r * stride + f, with stride a power of two at least features and rows * stride the whole slot vector. The
// padding slots (f >= features) hold zero; layers that would make them nonzero mask them.
//
// A token-wise linear layer is then the same small map in every row, so its diagonals repeat with period stride
// (compressed plaintexts), and a rotation by whole rows (a multiple of stride) turns the tokens cyclically.

#include <cstddef>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/graph/node.hpp"

namespace cerium::nn {

struct RowLayout {
  std::size_t rows = 1, features = 1, stride = 1;

  std::size_t slots() const { return rows * stride; }
  std::size_t slot(std::size_t r, std::size_t f) const { return r * stride + f; }
  // InvalidArgument naming the values unless stride is a power of two with features <= stride and slots a
  // power of two.
  void validate() const {
    const auto pow2 = [](std::size_t v) { return v != 0 && (v & (v - 1)) == 0; };
    require(pow2(stride) && features >= 1 && features <= stride && pow2(rows),
            "row layout: {} rows x {} features in a stride of {} (the stride must be a power of two holding the "
            "features, and the rows a power of two)",
            rows, features, stride);
  }
  // 1 in every valid slot, 0 in the padding: one period of stride values.
  graph::PlainVector valid_mask() const {
    std::vector<double> m(stride, 0.0);
    for (std::size_t f = 0; f < features; ++f) m[f] = 1;
    return graph::PlainVector(m);
  }
  friend bool operator==(const RowLayout&, const RowLayout&) = default;
};

}  // namespace cerium::nn
