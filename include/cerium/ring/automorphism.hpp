#pragma once
// Ring automorphisms sigma_k: a(X) -> a(X^k) of Z_q[X]/(X^N + 1) for odd k in [1, 2N) (Galois elements).
//
// Coefficient form: coefficient i moves to i k mod 2N, negated when that lands in [N, 2N) (X^N = -1).
// NTT form: a pure permutation. math::NttTables puts a(psi^(2 bitrev(j) + 1)) at index j, and
// sigma_k(a)(psi^e) = a(psi^(k e)), so output j reads input bitrev(((k (2 bitrev(j) + 1) mod 2N) - 1) / 2).
// The permutation depends only on (N, k), not on the prime, so one table serves every limb.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/ring/rns_poly.hpp"

namespace cerium::ring {

// The Galois element 5^steps mod 2N of a rotation of the slots by `steps` (left for positive steps; negative
// steps rotate right). 5 has order N/2 mod 2N, so steps are taken mod N/2.
std::uint32_t rotation_galois_element(std::int64_t steps, std::size_t n);
// 2N - 1: complex conjugation of the slots.
constexpr std::uint32_t conjugation_galois_element(std::size_t n) { return static_cast<std::uint32_t>(2 * n - 1); }
// k1 k2 mod 2N: sigma_{k2} after sigma_{k1}.
constexpr std::uint32_t compose_galois_elements(std::uint32_t k1, std::uint32_t k2, std::size_t n) {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(k1) * k2 % (2 * n));
}

// The precomputed maps of one automorphism at one ring degree. Immutable; share it across threads.
class Automorphism {
 public:
  // Throws InvalidArgument unless N is a power of two in [2, 2^17] and k is odd in [1, 2N).
  Automorphism(std::size_t n, std::uint32_t galois_element);

  std::size_t n() const { return n_; }                 // N
  std::uint32_t galois_element() const { return k_; }  // k, odd in [1, 2N)

  // NTT form: out[j] = in[ntt_permutation()[j]].
  std::span<const std::uint32_t> ntt_permutation() const { return ntt_source_; }
  // Coefficient form: coefficient i goes to index coefficient_target(i) & index_mask, negated when the
  // negate_flag bit is set.
  static constexpr std::uint32_t negate_flag = 1u << 31;
  static constexpr std::uint32_t index_mask = negate_flag - 1;
  std::span<const std::uint32_t> coefficient_targets() const { return coeff_target_; }

  // One limb; out must not overlap in. q is the limb's prime (for the sign flips).
  void apply_coefficient(std::span<const std::uint32_t> in, std::span<std::uint32_t> out, std::uint32_t q) const;
  void apply_ntt(std::span<const std::uint32_t> in, std::span<std::uint32_t> out) const;

  // The whole polynomial, in its own form (coefficient or NTT); the result has the same basis and layout.
  RnsPoly apply(const RnsPoly& in) const;

 private:
  std::size_t n_ = 0;
  std::uint32_t k_ = 1;
  std::vector<std::uint32_t> ntt_source_;
  std::vector<std::uint32_t> coeff_target_;
};

}  // namespace cerium::ring
