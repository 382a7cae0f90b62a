#include "cerium/math/ntt.hpp"

#include <algorithm>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/math/ntt_butterfly.hpp"
#include "cerium/math/primes.hpp"

namespace cerium::math {

NttTables::NttTables(std::uint32_t q, std::size_t n) : n_(n) {
  require(n >= 2 && (n & (n - 1)) == 0 && n <= (std::size_t{1} << max_log_ring_degree),
          "NTT degree {} must be a power of two between 2 and 2^{}", n, max_log_ring_degree);
  require(q < (1u << 31) && is_prime(q), "NTT modulus {} must be a prime below 2^31", q);
  require((q - 1) % (2 * n) == 0, "NTT modulus {} is not 1 mod 2N = {}: no negacyclic NTT of degree {} exists", q,
          2 * n, n);
  while ((std::size_t{1} << log_n_) < n) ++log_n_;
  modulus_ = Modulus(q);
  psi_ = minimal_primitive_root_of_unity(q, 2 * n);
  const auto psi_inv = static_cast<std::uint32_t>(inv_mod(psi_, q));

  forward_.resize(n);
  forward_shoup_.resize(n);
  inverse_.resize(n);
  inverse_shoup_.resize(n);
  std::uint64_t power = 1, inverse_power = 1;
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = bit_reverse(static_cast<u32>(i), log_n_);
    forward_[k] = static_cast<std::uint32_t>(power);
    inverse_[k] = static_cast<std::uint32_t>(inverse_power);
    power = power * psi_ % q;
    inverse_power = inverse_power * psi_inv % q;
  }
  for (std::size_t k = 0; k < n; ++k) {
    forward_shoup_[k] = shoup_quotient(forward_[k], q);
    inverse_shoup_[k] = shoup_quotient(inverse_[k], q);
  }
  n_inv_ = ShoupConstant(static_cast<std::uint32_t>(inv_mod(n, q)), q);
}

void ntt_forward(std::span<std::uint32_t> a, const NttTables& tables) {
  const std::size_t n = tables.degree();
  require(a.size() == n, "NTT input has {} coefficients, the tables are for degree {}", a.size(), n);
  ntt_forward_compressed(a, tables);  // with N values, every stage: the whole transform
}

void ntt_forward_compressed(std::span<std::uint32_t> small, const NttTables& tables) {
  const std::size_t n = tables.degree(), m_end = small.size();
  require(m_end >= 1 && m_end <= n && n % m_end == 0 && (m_end & (m_end - 1)) == 0,
          "compressed NTT: {} values for degree {} (a power of two dividing it)", m_end, n);
  const std::uint32_t q = tables.modulus();
  const auto w = tables.forward_twiddles();
  const auto wq = tables.forward_twiddles_shoup();
  // While the butterflies' distance is a multiple of the gap N / m_end they pair only coefficients at multiples
  // of it: ntt_forward's first log2(m_end) stages on those coefficients, with the same twiddles.
  std::size_t t = m_end;
  for (std::size_t m = 1; m < m_end; m <<= 1) {
    t >>= 1;
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t j1 = 2 * i * t;
      for (std::size_t j = j1; j < j1 + t; ++j) ct_butterfly(small[j], small[j + t], w[m + i], wq[m + i], q);
    }
  }
  for (auto& x : small) x = csub(x, q);
}

void ntt_forward_sparse(std::span<std::uint32_t> a, const NttTables& tables, std::size_t gap) {
  const std::size_t n = tables.degree();
  require(a.size() == n, "NTT input has {} coefficients, the tables are for degree {}", a.size(), n);
  require(gap >= 1 && gap <= n && n % gap == 0 && (gap & (gap - 1)) == 0,
          "sparse NTT: a gap of {} for degree {} (a power of two dividing it)", gap, n);
  if (gap == 1) return ntt_forward(a, tables);
  std::vector<std::uint32_t> small(n / gap);
  for (std::size_t k = 0; k < small.size(); ++k) small[k] = a[k * gap];
  ntt_forward_compressed(small, tables);
  // The later stages pair each value with a zero: x + w 0 and x - w 0, so every value fills its gap slots.
  for (std::size_t k = 0; k < small.size(); ++k) {
    std::fill_n(a.begin() + static_cast<std::ptrdiff_t>(k * gap), gap, small[k]);
  }
}

void ntt_inverse(std::span<std::uint32_t> a, const NttTables& tables) {
  const std::size_t n = tables.degree();
  require(a.size() == n, "inverse NTT input has {} values, the tables are for degree {}", a.size(), n);
  const std::uint32_t q = tables.modulus();
  const auto w = tables.inverse_twiddles();
  const auto wq = tables.inverse_twiddles_shoup();
  std::size_t t = 1;
  for (std::size_t h = n >> 1; h >= 1; h >>= 1) {
    for (std::size_t i = 0; i < h; ++i) {
      const std::size_t j1 = 2 * i * t;
      for (std::size_t j = j1; j < j1 + t; ++j) gs_butterfly(a[j], a[j + t], w[h + i], wq[h + i], q);
    }
    t <<= 1;
  }
  const ShoupConstant n_inv = tables.inverse_degree();
  for (auto& x : a) x = mul_shoup(x, n_inv, q);
}

}  // namespace cerium::math
