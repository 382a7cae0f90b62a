#pragma once
// Negacyclic number-theoretic transform over Z_q[X]/(X^N + 1) for N = 2 .. 2^17.
//
// Forward: coefficients in natural order -> evaluations at the odd powers psi^(2 bitrev(k) + 1) of a primitive
// 2N-th root psi, in bit-reversed order (Cooley-Tukey with merged psi powers, Longa-Naehrig). Inverse:
// Gentleman-Sande back to natural order, including the factor N^{-1}. Inputs below 2q, outputs fully reduced.
// Products in the NTT domain are pointwise, so a * b mod (X^N + 1) = inverse(forward(a) . forward(b)).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/math/modarith.hpp"

namespace cerium::math {

// The ring degrees the NTT supports: N = 2^log for log in [1, 17].
inline constexpr int min_log_ring_degree = 1;
inline constexpr int max_log_ring_degree = 17;

// The twiddles of the negacyclic NTT for one prime q and one ring degree N, with q's reduction constants.
class NttTables {
 public:
  // q prime, q < 2^31, q = 1 mod 2N, N a power of two in [2, 2^17]; throws InvalidArgument otherwise.
  NttTables(std::uint32_t q, std::size_t n);

  std::uint32_t modulus() const { return modulus_.value; }  // q
  const Modulus& reduction() const { return modulus_; }     // q with its reduction constants
  std::size_t degree() const { return n_; }                 // N
  int log_degree() const { return log_n_; }                 // log2(N)
  std::uint32_t psi() const { return psi_; }                // the primitive 2N-th root used

  // psi^bitrev(k) and Shoup quotients, k in [0, N): stage m of the forward transform uses entries [m, 2m).
  std::span<const std::uint32_t> forward_twiddles() const { return forward_; }
  std::span<const std::uint32_t> forward_twiddles_shoup() const { return forward_shoup_; }
  // psi^-bitrev(k) and Shoup quotients: stage h of the inverse uses entries [h, 2h).
  std::span<const std::uint32_t> inverse_twiddles() const { return inverse_; }
  std::span<const std::uint32_t> inverse_twiddles_shoup() const { return inverse_shoup_; }
  ShoupConstant inverse_degree() const { return n_inv_; }  // N^{-1} mod q

 private:
  Modulus modulus_;
  std::size_t n_ = 0;
  int log_n_ = 0;
  std::uint32_t psi_ = 0;
  std::vector<std::uint32_t> forward_, forward_shoup_, inverse_, inverse_shoup_;
  ShoupConstant n_inv_;
};

// In place, a.size() == tables.degree().
void ntt_forward(std::span<std::uint32_t> a, const NttTables& tables);
void ntt_inverse(std::span<std::uint32_t> a, const NttTables& tables);
// ntt_forward's words for a polynomial whose nonzero coefficients all sit at multiples of `gap` (a power of two
// dividing N): the first log2(N / gap) stages on those coefficients alone, each result then filling `gap`
// consecutive outputs (bit-reversed order puts the evaluations that coincide side by side). A sparse CKKS
// encoding (slots below N/2, a periodic slot vector) costs N / gap times fewer butterflies. Coefficients elsewhere
// must be zero (they are not read).
void ntt_forward_sparse(std::span<std::uint32_t> a, const NttTables& tables, std::size_t gap);
// The same kept compressed: `small` holds the coefficients at multiples of gap = N / small.size() and becomes the
// transform's distinct values, output block k (gap words from k gap) all small[k].
void ntt_forward_compressed(std::span<std::uint32_t> small, const NttTables& tables);

}  // namespace cerium::math
