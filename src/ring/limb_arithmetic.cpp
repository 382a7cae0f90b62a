#include "cerium/ring/limb_arithmetic.hpp"

#include "cerium/core/check.hpp"
#include "cerium/core/simd.hpp"

namespace cerium::ring {

namespace {

using math::u32;

// Products by math::mul_mod_montgomery (it vectorizes), and a Shoup product for a fixed s.
CERIUM_FORCE_INLINE void accumulate_products_body(u32* acc, const u32* x, const u32* y, std::size_t n,
                                                  math::Modulus m) {
  for (std::size_t k = 0; k < n; ++k) acc[k] = math::add_mod(acc[k], math::mul_mod_montgomery(x[k], y[k], m), m.value);
}

CERIUM_FORCE_INLINE void accumulate_scaled_body(u32* acc, const u32* x, u32 s, u32 s_quotient, std::size_t n,
                                                u32 q) {
  for (std::size_t k = 0; k < n; ++k) acc[k] = math::add_mod(acc[k], math::mul_shoup(x[k], s, s_quotient, q), q);
}

CERIUM_SIMD_VARIANTS(accumulate_products, accumulate_products_body,
                     (u32 * acc, const u32* x, const u32* y, std::size_t n, math::Modulus m), (acc, x, y, n, m))
CERIUM_SIMD_VARIANTS(accumulate_scaled, accumulate_scaled_body,
                     (u32 * acc, const u32* x, u32 s, u32 s_quotient, std::size_t n, u32 q),
                     (acc, x, s, s_quotient, n, q))

}  // namespace

void multiply_accumulate_limb(std::span<std::uint32_t> acc, std::span<const std::uint32_t> x,
                              std::span<const std::uint32_t> y, const math::Modulus& m) {
  require(x.size() == acc.size() && y.size() == acc.size(), "multiply-accumulate: limbs of {}, {} and {} words",
          acc.size(), x.size(), y.size());
  accumulate_products(acc.data(), x.data(), y.data(), acc.size(), m);
}

void multiply_accumulate_limb(std::span<std::uint32_t> acc, std::span<const std::uint32_t> x, std::uint32_t s,
                              const math::Modulus& m) {
  require(x.size() == acc.size(), "multiply-accumulate: limbs of {} and {} words", acc.size(), x.size());
  require(s < m.value, "multiply-accumulate: scalar {} is not reduced modulo {}", s, m.value);
  accumulate_scaled(acc.data(), x.data(), s, math::shoup_quotient(s, m.value), acc.size(), m.value);
}

}  // namespace cerium::ring
