#pragma once
// An RNS basis: an ordered list of distinct NTT-friendly primes q_0 .. q_{L-1} for one ring degree N, with
// the per-prime reduction constants and NTT tables, and the CRT constants that basis conversion needs.
//
// The per-prime data (Modulus + NttTables, about 16 N bytes per prime) is immutable and shared through
// std::shared_ptr, so sub-bases and concatenations cost O(L^2) word operations for their CRT constants and no
// table rebuilds. A basis is itself immutable; polynomials hold it as RnsBasisPtr.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cerium/math/modarith.hpp"
#include "cerium/math/ntt.hpp"

namespace cerium::ring {

// One prime of a basis with everything derived from it alone.
struct RnsPrime {
  math::Modulus modulus;  // q with its reduction constants
  math::NttTables ntt;    // q's NTT tables at degree N
  // Precomputes both for the prime q and ring degree N.
  RnsPrime(std::uint32_t q, std::size_t n) : modulus(q), ntt(q, n) {}
};

// An immutable RNS basis (see the file comment): distinct NTT-friendly primes for one ring degree N.
class RnsBasis {
 public:
  // Throws ParameterError naming the offending value when N is not a power of two in [2, 2^17], the list is
  // empty, or a prime is repeated, not prime, not below 2^31, or not 1 mod 2N.
  RnsBasis(std::size_t ring_degree, std::span<const std::uint32_t> primes);

  std::size_t ring_degree() const { return n_; }                                     // N
  std::size_t size() const { return primes_.size(); }                                // L, the number of primes
  std::span<const std::uint32_t> primes() const { return values_; }                  // q_0 .. q_{L-1}
  std::uint32_t prime(std::size_t i) const { return values_[i]; }                    // q_i
  const math::Modulus& modulus(std::size_t i) const { return primes_[i]->modulus; }  // q_i with its reduction constants
  const math::NttTables& ntt(std::size_t i) const { return primes_[i]->ntt; }        // q_i's NTT tables
  // The shared data of q_i: for bases that reuse it without rebuilding its tables.
  const std::shared_ptr<const RnsPrime>& prime_data(std::size_t i) const { return primes_[i]; }

  // Position of prime q in this basis, if present.
  std::optional<std::size_t> index_of(std::uint32_t q) const;
  bool contains(std::uint32_t q) const { return index_of(q).has_value(); }  // q is one of its primes

  // Primes [first, first + count) in order. Throws InvalidArgument for an empty or out-of-range selection.
  RnsBasis sub_basis(std::size_t first, std::size_t count) const;
  // This basis followed by other's primes. Throws MismatchError for different ring degrees and ParameterError
  // when a prime appears in both.
  RnsBasis concat(const RnsBasis& other) const;
  // The primes of this basis that are not in other, in this basis's order (empty optional when none are left).
  std::optional<RnsBasis> without(const RnsBasis& other) const;

  // --- CRT constants, Q = q_0 ... q_{L-1}, Q_i = Q / q_i ---
  // [Q_i^{-1}]_{q_i} with its Shoup quotient.
  math::ShoupConstant q_hat_inverse(std::size_t i) const { return q_hat_inv_[i]; }
  // [Q_i]_p for every i, for a modulus p (typically a prime of another basis).
  std::vector<std::uint32_t> q_hat_mod(const math::Modulus& p) const;
  // [Q]_p.
  std::uint32_t product_mod(const math::Modulus& p) const;
  // log2(Q), for messages and parameter checks.
  double log2_product() const;

  // Same ring degree and the same primes in the same order.
  friend bool operator==(const RnsBasis& a, const RnsBasis& b) { return a.n_ == b.n_ && a.values_ == b.values_; }

 private:
  RnsBasis(std::size_t ring_degree, std::vector<std::shared_ptr<const RnsPrime>> primes);
  void validate_and_precompute();

  std::size_t n_ = 0;
  std::vector<std::shared_ptr<const RnsPrime>> primes_;
  std::vector<std::uint32_t> values_;
  std::vector<math::ShoupConstant> q_hat_inv_;
};

// How polynomials, converters and contexts hold a basis: shared and immutable.
using RnsBasisPtr = std::shared_ptr<const RnsBasis>;

// A shared basis of ring degree N over these primes (checked as by RnsBasis's constructor).
inline RnsBasisPtr make_basis(std::size_t ring_degree, std::span<const std::uint32_t> primes) {
  return std::make_shared<const RnsBasis>(ring_degree, primes);
}
// A shared basis from a basis value (sub_basis, concat, without).
inline RnsBasisPtr make_basis(RnsBasis basis) { return std::make_shared<const RnsBasis>(std::move(basis)); }

// "N = 1024, 3 primes [1032193, 786433, 737281]" (long lists are abbreviated), for error messages.
std::string describe(const RnsBasis& basis);

}  // namespace cerium::ring
