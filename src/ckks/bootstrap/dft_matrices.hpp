#pragma once
// The homomorphic DFTs of bootstrapping as slot-linear maps in diagonal form, grouped by level (level
// collapsing), and their baby-step giant-step plans. Plain double-precision math: no ciphertexts. Internal.
//
// A map A on n slots is stored as its nonzero generalized diagonals: (A v)_i = sum_d diag_d[i] v_(i + d mod n),
// i.e. A = sum_d diag(diag_d) R^d with R^d the rotation left by d (what evaluator.rotate(ct, d) does).
//
// The special FFT of math/special_fft.hpp is F = S_(n/2) ... S_2 S_1 BR, with BR the bit-reversal permutation
// and S_h the butterfly stage that merges halves of h values (3 diagonals: 0, +h, -h). CoeffToSlot applies
// S_1^-1 ... S_(n/2)^-1 = BR F^-1 and leaves the coefficients in bit-reversed slot order; EvalMod works slot by
// slot, so SlotToCoeff applies S_(n/2) ... S_1 and the permutation is never evaluated.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "cerium/math/special_fft.hpp"

namespace cerium::ckks::bootstrap_detail {

using Complex = std::complex<double>;

struct DiagonalMatrix {
  std::size_t slots = 0;
  std::map<std::int64_t, std::vector<Complex>> diagonals;  // offset in [0, slots) -> slots values
};

// a after b: (a b) v = a (b v).
DiagonalMatrix compose(const DiagonalMatrix& a, const DiagonalMatrix& b);
// (A v) for a plain vector: the reference the tests compare against.
std::vector<Complex> apply_matrix(const DiagonalMatrix& a, const std::vector<Complex>& v);

// The forward butterfly stage S_h and its inverse.
DiagonalMatrix fft_stage(const math::SpecialFftTables& tables, std::size_t h);
DiagonalMatrix inverse_fft_stage(const math::SpecialFftTables& tables, std::size_t h);

// The stages of CoeffToSlot (S_(n/2)^-1 first) or SlotToCoeff (S_1 first) merged into `levels` groups, in the
// order they are applied, with `scalar` spread evenly over the groups (each gets scalar^(1/levels)). Diagonals
// whose entries are all below 2^-40 of the largest are dropped (cancellations of rounding residue).
std::vector<DiagonalMatrix> coeff_to_slot_matrices(const math::SpecialFftTables& tables, int levels, double scalar);
std::vector<DiagonalMatrix> slot_to_coeff_matrices(const math::SpecialFftTables& tables, int levels, double scalar);

// Baby-step giant-step split of a matrix's offsets: each offset d (taken in (-n/2, n/2]) is g + b with g a
// multiple of the baby stride and 0 <= b < stride. Evaluated as sum_g R^g (sum_b diag'_(g,b) R^b v) with
// diag'_(g,b) = R^-g diag_(g+b): one hoisted ModUp for all babies, one key switch per giant.
struct BsgsPlan {
  std::int64_t stride = 1;
  std::vector<std::int64_t> babies;                           // sorted, distinct
  std::map<std::int64_t, std::vector<std::int64_t>> giants;   // giant -> its babies
  std::size_t rotations() const;                              // key switches: nonzero babies and giants
};
// The stride minimizing the rotations (giants weighted 1.5: they are not hoisted).
BsgsPlan plan_bsgs(const DiagonalMatrix& matrix);
// diag'_(g,b) = R^-g diag_(g+b).
std::vector<Complex> bsgs_diagonal(const DiagonalMatrix& matrix, std::int64_t giant, std::int64_t baby);

}  // namespace cerium::ckks::bootstrap_detail
