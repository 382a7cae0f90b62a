#pragma once
// The homomorphic DFTs of bootstrapping as slot-linear maps in diagonal form (circuits::DiagonalMatrix), grouped
// by level (level collapsing). Plain double-precision math: no ciphertexts. Internal.
//
// The special FFT of math/special_fft.hpp is F = S_(n/2) ... S_2 S_1 BR, with BR the bit-reversal permutation
// and S_h the butterfly stage that merges halves of h values (3 diagonals: 0, +h, -h). CoeffToSlot applies
// S_1^-1 ... S_(n/2)^-1 = BR F^-1 and leaves the coefficients in bit-reversed slot order; EvalMod works slot by
// slot, so SlotToCoeff applies S_(n/2) ... S_1 and the permutation is never evaluated.

#include <cstddef>
#include <vector>

#include "cerium/circuits/diagonal_matrix.hpp"
#include "cerium/math/special_fft.hpp"

namespace cerium::boot::dft {

// The forward butterfly stage S_h and its inverse.
circuits::DiagonalMatrix fft_stage(const math::SpecialFftTables& tables, std::size_t h);
circuits::DiagonalMatrix inverse_fft_stage(const math::SpecialFftTables& tables, std::size_t h);

// The stages of CoeffToSlot (S_(n/2)^-1 first) or SlotToCoeff (S_1 first) merged into `levels` groups, in the
// order they are applied, with `scalar` spread evenly over the groups (each gets scalar^(1/levels)). Diagonals
// whose entries are all below 2^-40 of the largest are dropped (cancellations of rounding residue).
std::vector<circuits::DiagonalMatrix> coeff_to_slot_matrices(const math::SpecialFftTables& tables, int levels,
                                                             double scalar);
std::vector<circuits::DiagonalMatrix> slot_to_coeff_matrices(const math::SpecialFftTables& tables, int levels,
                                                             double scalar);

// The joined-halves forms (BootstrapConfig::join_halves), on 2n slots for a matrix m on n: lower_half_output(m)
// maps a vector of period n, [x, x], to [m x, 0] (m's diagonals, zero on the upper rows: the same rotations);
// joined_input(m) maps [r, s] to [m (r + i s), m (r + i s)] (each of m's diagonals becomes two).
circuits::DiagonalMatrix lower_half_output(const circuits::DiagonalMatrix& m);
circuits::DiagonalMatrix joined_input(const circuits::DiagonalMatrix& m);

}  // namespace cerium::boot::dft
