#pragma once
// Baby-step giant-step form of a diagonal matrix (Halevi-Shoup): each offset d, taken in (-n/2, n/2], is split
// as g + b with g a multiple of the stride and 0 <= b < stride, and
//   A v = sum_g R^g ( sum_b diag'_(g,b) * R^b v ),   diag'_(g,b) = R^-g diag_(g+b),
// so that all baby rotations R^b v share one ModUp (hoisting) and each giant costs one key switch. The stride that
// minimizes rotations is searched over powers of two, giants weighted above babies since they are not hoisted.

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "cerium/circuits/diagonal_matrix.hpp"

namespace cerium::circuits {

// How plan_bsgs picks the stride.
struct BsgsOptions {
  // A power of two, or 0 to search for the cheapest. A stride of at least the slot count puts every offset in
  // the giant 0: all rotations are hoisted babies and no diagonal is pre-rotated (plaintext diagonals given by
  // offset need this).
  std::int64_t stride = 0;
  double giant_cost = 1.5;  // a giant rotation's cost in baby rotations (a baby shares its ModUp)
};

// The baby-step giant-step form of one set of diagonal offsets (see the file comment): which rotations it runs.
struct BsgsPlan {
  std::size_t slots = 0;                                     // n, a power of two; offsets are taken mod n
  std::int64_t stride = 1;                                   // the giant step: a power of two
  std::vector<std::int64_t> babies;                          // sorted, distinct, 0 included when used
  std::map<std::int64_t, std::vector<std::int64_t>> giants;  // giant -> its babies, in offset order
  // Key switches: nonzero babies (sharing one ModUp) and nonzero giants (one each). A step that is both a baby and
  // a giant counts twice: it is switched twice.
  std::size_t baby_rotations() const;
  std::size_t giant_rotations() const;
  std::size_t rotations() const { return baby_rotations() + giant_rotations(); }
  // The rotation steps the plan needs keys for (nonzero babies and giants), sorted.
  std::vector<std::int64_t> rotation_steps() const;
};

// The plan for these offsets (any integers, taken mod slots; each at most once). InvalidArgument for a stride
// that is not a power of two, or slots that are not a power of two.
BsgsPlan plan_bsgs(std::span<const std::int64_t> offsets, std::size_t slots, const BsgsOptions& options = {});
BsgsPlan plan_bsgs(const DiagonalMatrix& matrix, const BsgsOptions& options = {});

// diag'_(g,b) = R^-g diag_(g+b), kept at the diagonal's period (compressed stays compressed).
std::vector<Complex> bsgs_diagonal(const DiagonalMatrix& matrix, std::int64_t giant, std::int64_t baby);

}  // namespace cerium::circuits
