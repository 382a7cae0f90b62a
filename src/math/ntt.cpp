#include "cerium/math/ntt.hpp"

#include <algorithm>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/core/simd.hpp"
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

namespace {

// The stage loops, shaped for the vectorizer (built at -O3, src/CMakeLists.txt): a stage whose butterflies lie 16
// or more words apart runs its contiguous inner loop across lanes; the closer stages (t = 8, 4, 2, 1) unroll their
// inner loop at compile time so that the loop over butterfly groups, each with its own twiddle, runs across lanes.
// The butterflies are ntt_butterfly.hpp's: the same words at every SIMD level and on the GPU.
constexpr std::size_t wide_stage = 16;

// The two butterflies as types, so that one stage loop serves both directions.
struct ForwardButterfly {
  CERIUM_FORCE_INLINE static void apply(u32& x, u32& y, u32 w, u32 wq, u32 q) { ct_butterfly(x, y, w, wq, q); }
};
struct InverseButterfly {
  CERIUM_FORCE_INLINE static void apply(u32& x, u32& y, u32 w, u32 wq, u32 q) { gs_butterfly(x, y, w, wq, q); }
};

template <class Butterfly, std::size_t T>
CERIUM_FORCE_INLINE void close_stage(u32* a, std::size_t groups, const u32* w, const u32* wq, u32 q) {
  for (std::size_t i = 0; i < groups; ++i) {
    u32* x = a + 2 * T * i;
    for (std::size_t j = 0; j < T; ++j) Butterfly::apply(x[j], x[j + T], w[i], wq[i], q);
  }
}

// One stage: `groups` groups of butterflies t apart, group i with twiddle w[i].
template <class Butterfly>
CERIUM_FORCE_INLINE void stage(u32* a, std::size_t groups, std::size_t t, const u32* w, const u32* wq, u32 q) {
  if (t >= wide_stage) {
    for (std::size_t i = 0; i < groups; ++i) {
      u32* x = a + 2 * i * t;
      u32* y = x + t;
      const u32 wi = w[i], wqi = wq[i];
      for (std::size_t j = 0; j < t; ++j) Butterfly::apply(x[j], y[j], wi, wqi, q);
    }
  } else if (t == 8) {
    close_stage<Butterfly, 8>(a, groups, w, wq, q);
  } else if (t == 4) {
    close_stage<Butterfly, 4>(a, groups, w, wq, q);
  } else if (t == 2) {
    close_stage<Butterfly, 2>(a, groups, w, wq, q);
  } else {
    close_stage<Butterfly, 1>(a, groups, w, wq, q);
  }
}

// The forward transform's stages on `size` values (m = 1 .. size / 2, twiddles w[m + i]), then every value
// reduced below q.
CERIUM_FORCE_INLINE void forward_stages(u32* a, std::size_t size, const u32* w, const u32* wq, u32 q) {
  std::size_t t = size;
  for (std::size_t m = 1; m < size; m <<= 1) {
    t >>= 1;
    stage<ForwardButterfly>(a, m, t, w + m, wq + m, q);
  }
  for (std::size_t k = 0; k < size; ++k) a[k] = csub(a[k], q);
}

// The inverse transform's stages on n values (h = n / 2 .. 1, twiddles w[h + i]), then the factor N^{-1}.
CERIUM_FORCE_INLINE void inverse_stages(u32* a, std::size_t n, const u32* w, const u32* wq, u32 q, u32 n_inv,
                                        u32 n_inv_quotient) {
  std::size_t t = 1;
  for (std::size_t h = n >> 1; h >= 1; h >>= 1) {
    stage<InverseButterfly>(a, h, t, w + h, wq + h, q);
    t <<= 1;
  }
  for (std::size_t k = 0; k < n; ++k) a[k] = mul_shoup(a[k], n_inv, n_inv_quotient, q);
}

CERIUM_SIMD_VARIANTS(forward_transform, forward_stages,
                     (u32 * a, std::size_t size, const u32* w, const u32* wq, u32 q), (a, size, w, wq, q))
CERIUM_SIMD_VARIANTS(inverse_transform, inverse_stages,
                     (u32 * a, std::size_t n, const u32* w, const u32* wq, u32 q, u32 n_inv, u32 n_inv_quotient),
                     (a, n, w, wq, q, n_inv, n_inv_quotient))

}  // namespace

void ntt_forward(std::span<std::uint32_t> a, const NttTables& tables) {
  const std::size_t n = tables.degree();
  require(a.size() == n, "NTT input has {} coefficients, the tables are for degree {}", a.size(), n);
  ntt_forward_compressed(a, tables);  // with N values, every stage: the whole transform
}

void ntt_forward_compressed(std::span<std::uint32_t> small, const NttTables& tables) {
  const std::size_t n = tables.degree(), m_end = small.size();
  require(m_end >= 1 && m_end <= n && n % m_end == 0 && (m_end & (m_end - 1)) == 0,
          "compressed NTT: {} values for degree {} (a power of two dividing it)", m_end, n);
  // While the butterflies' distance is a multiple of the gap N / m_end they pair only coefficients at multiples
  // of it: ntt_forward's first log2(m_end) stages on those coefficients, with the same twiddles.
  forward_transform(small.data(), m_end, tables.forward_twiddles().data(), tables.forward_twiddles_shoup().data(),
                    tables.modulus());
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
  const ShoupConstant n_inv = tables.inverse_degree();
  inverse_transform(a.data(), n, tables.inverse_twiddles().data(), tables.inverse_twiddles_shoup().data(),
                    tables.modulus(), n_inv.value, n_inv.quotient);
}

}  // namespace cerium::math
