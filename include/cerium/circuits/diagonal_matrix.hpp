#pragma once
// A slot-linear map on n slots in diagonal form, the shape every homomorphic linear transform takes: a
// ciphertext can be rotated and multiplied slot by slot, so A v = sum_d diag_d * R^d v, where R^d rotates left by
// d (what evaluator.rotate(ct, d) does) and (A v)_i = sum_d diag_d[i] v_(i + d mod n).
//
// A diagonal may be stored compressed: p values with p dividing n, slot i holding values[i mod p] (a diagonal
// whose slots repeat, as the weights of a convolution or a replicated vector do). It stays p values until it is
// encoded. Plain double-precision math, no ciphertexts: the plaintext reference of LinearTransform.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

namespace cerium::circuits {

// A slot value (CKKS slots hold complex numbers).
using Complex = std::complex<double>;

// A slot-linear map on `slots` slots, as its nonzero diagonals (see the file comment).
struct DiagonalMatrix {
  std::size_t slots = 0;  // n, a power of two
  // Offset in [0, slots) -> its values: slots of them, or a period p dividing slots.
  std::map<std::int64_t, std::vector<Complex>> diagonals;

  // The n x n matrix rows[i][j] in diagonal form (diag_d[i] = rows[i][(i + d) mod n]); diagonals that are zero
  // everywhere are left out. InvalidArgument unless rows is square with a power-of-two side.
  static DiagonalMatrix from_dense(const std::vector<std::vector<Complex>>& rows);
  static DiagonalMatrix from_dense(const std::vector<std::vector<double>>& rows);
  // The identity on `slots` slots: one diagonal of ones at offset 0.
  static DiagonalMatrix identity(std::size_t slots);

  // Adds values (slots of them, or a period dividing slots) onto the diagonal at `offset` (any integer, taken
  // mod slots). InvalidArgument for a length that does not divide slots.
  void add_diagonal(std::int64_t offset, std::vector<Complex> values);
  // Entry i of the diagonal at offset (any integer, taken mod slots). InvalidArgument when it has no diagonal.
  Complex at(std::int64_t offset, std::size_t i) const;
  // The diagonal at offset with all slots values (InvalidArgument as at()).
  std::vector<Complex> expanded(std::int64_t offset) const;
  // Values stored over all diagonals (compressed ones count their period).
  std::size_t stored_values() const;
  // The offsets in [0, slots), increasing.
  std::vector<std::int64_t> offsets() const;
};

// values repeated to fill `slots` (a compressed diagonal expanded; values.size() must divide slots).
std::vector<Complex> tile(std::span<const Complex> values, std::size_t slots);
// (R^k v)_i = v_(i + k mod n): the plaintext rotation matching evaluator.rotate(ct, k).
std::vector<Complex> rotate_values(std::span<const Complex> v, std::int64_t k);
// k mod n in [0, n).
std::int64_t wrap_offset(std::int64_t k, std::size_t n);

// a after b: (a b) v = a (b v). Compressed diagonals are expanded.
DiagonalMatrix compose(const DiagonalMatrix& a, const DiagonalMatrix& b);
// A v for a plain vector of a.slots values: the reference the tests compare against.
std::vector<Complex> apply(const DiagonalMatrix& a, std::span<const Complex> v);
// Every entry times factor.
void scale_by(DiagonalMatrix& m, double factor);
// Drops the diagonals whose entries are all at most `relative` times the largest entry of the matrix
// (cancellations of rounding residue in composed matrices).
void drop_negligible(DiagonalMatrix& m, double relative);

}  // namespace cerium::circuits
