#pragma once
// Shared helpers of the ring tests: prime sets of mixed sizes, random polynomials, and GMP references for CRT.

#include <gmpxx.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/math/primes.hpp"
#include "cerium/ring/rns_basis.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "support/random.hpp"

namespace ring_test {

using cerium::ring::RnsBasis;
using cerium::ring::RnsBasisPtr;
using cerium::ring::RnsPoly;

// `count` distinct NTT-friendly primes for degree n, cycling through 28, 29, 30, 31 bits (starting at
// first_bits), none of them in `exclude`, in a random order.
inline std::vector<std::uint32_t> mixed_primes(std::size_t n, std::size_t count, std::mt19937_64& rng,
                                               std::vector<std::uint32_t> exclude = {}, int first_bits = 28) {
  std::vector<std::uint32_t> result;
  for (std::size_t i = 0; i < count; ++i) {
    const int bits = 28 + static_cast<int>((static_cast<std::size_t>(first_bits - 28) + i) % 4);
    const auto q = cerium::math::generate_ntt_primes({.bits = bits, .count = 1, .ring_degree = n, .exclude = exclude})[0];
    exclude.push_back(q);
    result.push_back(q);
  }
  std::shuffle(result.begin(), result.end(), rng);
  return result;
}

inline RnsBasisPtr random_basis(std::size_t n, std::size_t count, std::mt19937_64& rng,
                                const std::vector<std::uint32_t>& exclude = {}) {
  return cerium::ring::make_basis(n, mixed_primes(n, count, rng, exclude));
}

// Uniform residues in every limb (the form label is left as it is).
inline void fill_uniform(RnsPoly& poly, std::mt19937_64& rng) {
  for (std::size_t i = 0; i < poly.limb_count(); ++i) {
    const auto values = cerium_test::random_residues(rng, poly.n(), poly.basis().prime(i));
    std::copy(values.begin(), values.end(), poly.limb(i).begin());
  }
}

inline RnsPoly random_poly(const RnsBasisPtr& basis, std::mt19937_64& rng,
                           cerium::ring::PolyForm form = cerium::ring::PolyForm::coefficient) {
  RnsPoly poly(basis, form);
  fill_uniform(poly, rng);
  return poly;
}

inline std::uint32_t mod(const mpz_class& x, std::uint32_t q) {
  return static_cast<std::uint32_t>(mpz_fdiv_ui(x.get_mpz_t(), q));
}

// Big-integer CRT over a basis, computed independently of the library: x = sum_i x_i e_i mod Q with
// e_i = Q_i [Q_i^{-1}]_{q_i}.
class CrtReference {
 public:
  explicit CrtReference(std::span<const std::uint32_t> primes) : primes_(primes.begin(), primes.end()) {
    product_ = 1;
    for (auto q : primes_) product_ *= q;
    for (auto q : primes_) {
      const mpz_class q_hat = product_ / q;
      mpz_class inverse;
      const mpz_class qq = q;
      mpz_invert(inverse.get_mpz_t(), q_hat.get_mpz_t(), qq.get_mpz_t());
      idempotents_.push_back(q_hat * inverse);
    }
  }
  const mpz_class& product() const { return product_; }
  // x in [0, Q) from residues[i][k] of coefficient k.
  template <class Limbs>
  mpz_class reconstruct(const Limbs& residues, std::size_t k) const {
    mpz_class x = 0;
    for (std::size_t i = 0; i < primes_.size(); ++i) x += idempotents_[i] * residues[i][k];
    mpz_class r;
    mpz_fdiv_r(r.get_mpz_t(), x.get_mpz_t(), product_.get_mpz_t());
    return r;
  }

 private:
  std::vector<std::uint32_t> primes_;
  mpz_class product_;
  std::vector<mpz_class> idempotents_;
};

inline mpz_class floor_div(const mpz_class& a, const mpz_class& b) {
  mpz_class q;
  mpz_fdiv_q(q.get_mpz_t(), a.get_mpz_t(), b.get_mpz_t());
  return q;
}

// The message of the cerium::Error that f throws, "" when it throws none.
template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const cerium::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace ring_test
