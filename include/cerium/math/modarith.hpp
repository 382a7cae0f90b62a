#pragma once
// 32-bit modular arithmetic for primes q < 2^31, usable on host and device.
//
// Residues are uint32_t. Products fit in 64 bits (q^2 < 2^62). Three reductions:
//  - Barrett, when both operands vary: one 64x64 high multiply with floor(2^64 / q).
//  - Shoup, when one operand is fixed (twiddles, constants): a 32-bit high multiply with floor(w 2^32 / q).
//  - Montgomery, for chains of products kept in Montgomery form.
// Conditional subtractions use masks, not branches, so timing does not depend on the values.

#include <cstdint>

#include "cerium/core/config.hpp"

namespace cerium::math {

// Residues are u32; their products u64.
using u32 = std::uint32_t;
using u64 = std::uint64_t;
// 128-bit integers (a GCC/Clang extension, also in nvcc host and device code).
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;

// The high 32 bits of the 64-bit product a b.
CERIUM_HD CERIUM_FORCE_INLINE u32 mulhi32(u32 a, u32 b) {
#if CERIUM_DEVICE_PASS
  return __umulhi(a, b);
#else
  return static_cast<u32>((static_cast<u64>(a) * b) >> 32);
#endif
}

// The high 64 bits of the 128-bit product a b.
CERIUM_HD CERIUM_FORCE_INLINE u64 mulhi64(u64 a, u64 b) {
#if CERIUM_DEVICE_PASS
  return __umul64hi(a, b);
#else
  return static_cast<u64>((static_cast<u128>(a) * b) >> 64);
#endif
}

// x - q if x >= q, else x; valid for x < 2q and q < 2^31. No branch: on the GPU one unsigned min (x - q wraps
// above x exactly when x < q), on the host the borrow's sign bit selects through a mask.
CERIUM_HD CERIUM_FORCE_INLINE constexpr u32 csub(u32 x, u32 q) {
#if CERIUM_DEVICE_PASS
  return min(x, x - q);
#else
  const u32 t = x - q;
  return t + (q & (0u - (t >> 31)));
#endif
}

// (a + b) mod q and (a - b) mod q, for a and b in [0, q).
CERIUM_HD CERIUM_FORCE_INLINE constexpr u32 add_mod(u32 a, u32 b, u32 q) { return csub(a + b, q); }
CERIUM_HD CERIUM_FORCE_INLINE constexpr u32 sub_mod(u32 a, u32 b, u32 q) { return csub(a + q - b, q); }
// -a mod q for a in [0, q): q - a, but 0 for a = 0 (mask instead of branch).
CERIUM_HD CERIUM_FORCE_INLINE constexpr u32 neg_mod(u32 a, u32 q) {
  return (q - a) & (0u - static_cast<u32>(a != 0));
}

// A prime modulus q < 2^31 with its precomputed reduction constants.
struct Modulus {
  u32 value = 0;          // q
  u64 barrett_ratio = 0;  // floor(2^64 / q)
  u32 mont_qinv = 0;      // -q^{-1} mod 2^32
  u32 two64_mod = 0;      // 2^64 mod q: folds a high word; also R^2 mod q for Montgomery (R = 2^32)

  Modulus() = default;
  // q's constants; q must be an odd prime below 2^31 (not checked here).
  constexpr explicit Modulus(u32 q) : value(q) {
    barrett_ratio = ~u64{0} / q;  // floor((2^64 - 1) / q) == floor(2^64 / q) for q not a power of two
    u32 inv = q;                  // Newton iteration for q^{-1} mod 2^32 (q odd)
    for (int i = 0; i < 5; ++i) inv *= 2u - q * inv;
    mont_qinv = 0u - inv;
    const u64 two32 = (u64{1} << 32) % q;
    two64_mod = static_cast<u32>((two32 * two32) % q);
  }
  CERIUM_HD constexpr operator u32() const { return value; }  // q
};

// x mod q for any 64-bit x.
CERIUM_HD CERIUM_FORCE_INLINE u32 barrett_reduce(u64 x, const Modulus& m) {
  const u64 quotient = mulhi64(x, m.barrett_ratio);  // floor(x/q) or one less
  return csub(static_cast<u32>(x - quotient * m.value), m.value);
}

// a b mod q for any a and b (Barrett).
CERIUM_HD CERIUM_FORCE_INLINE u32 mul_mod(u32 a, u32 b, const Modulus& m) {
  return barrett_reduce(static_cast<u64>(a) * b, m);
}

// A fixed multiplicand w < q with its Shoup quotient floor(w 2^32 / q).
struct ShoupConstant {
  u32 value = 0;     // w, in [0, q)
  u32 quotient = 0;  // floor(w 2^32 / q)
  ShoupConstant() = default;
  // w with its quotient for the modulus q.
  constexpr ShoupConstant(u32 w, u32 q)
      : value(w), quotient(static_cast<u32>((static_cast<u64>(w) << 32) / q)) {}
};

// floor(w 2^32 / q): the Shoup quotient of a fixed multiplicand w < q.
CERIUM_HD CERIUM_FORCE_INLINE constexpr u32 shoup_quotient(u32 w, u32 q) {
  return static_cast<u32>((static_cast<u64>(w) << 32) / q);
}

// a * w mod q in [0, 2q), for any a < 2^32 (Harvey's lazy form).
CERIUM_HD CERIUM_FORCE_INLINE u32 mul_shoup_lazy(u32 a, u32 w, u32 w_quotient, u32 q) {
  return a * w - mulhi32(a, w_quotient) * q;
}
// a w mod q in [0, q), for any a < 2^32, given w's Shoup quotient.
CERIUM_HD CERIUM_FORCE_INLINE u32 mul_shoup(u32 a, u32 w, u32 w_quotient, u32 q) {
  return csub(mul_shoup_lazy(a, w, w_quotient, q), q);
}
// The same with w and its quotient as one ShoupConstant.
CERIUM_HD CERIUM_FORCE_INLINE u32 mul_shoup(u32 a, const ShoupConstant& w, u32 q) {
  return mul_shoup(a, w.value, w.quotient, q);
}

// Montgomery reduction: t 2^{-32} mod q for t < q 2^32.
CERIUM_HD CERIUM_FORCE_INLINE u32 montgomery_reduce(u64 t, const Modulus& m) {
  const u32 k = static_cast<u32>(t) * m.mont_qinv;
  return csub(static_cast<u32>((t + static_cast<u64>(k) * m.value) >> 32), m.value);
}
// a R mod q (R = 2^32): a into Montgomery form.
CERIUM_HD CERIUM_FORCE_INLINE u32 to_montgomery(u32 a, const Modulus& m) {
  return montgomery_reduce(static_cast<u64>(a) * m.two64_mod, m);
}
// a R^{-1} mod q: a back out of Montgomery form.
CERIUM_HD CERIUM_FORCE_INLINE u32 from_montgomery(u32 a, const Modulus& m) { return montgomery_reduce(a, m); }
// (a R)(b R) R^{-1} = ab R: the product of two Montgomery-form residues, in Montgomery form.
CERIUM_HD CERIUM_FORCE_INLINE u32 mul_montgomery(u32 a, u32 b, const Modulus& m) {
  return montgomery_reduce(static_cast<u64>(a) * b, m);
}

// a b mod q for a, b < q: mul_mod's words from two Montgomery reductions, (a b R^{-1}) R. Only 32 x 32-bit
// products, so CPU loops vectorize it where mul_mod's 128-bit Barrett product does not.
CERIUM_HD CERIUM_FORCE_INLINE u32 mul_mod_montgomery(u32 a, u32 b, const Modulus& m) {
  return to_montgomery(mul_montgomery(a, b, m), m);
}

// Lazy accumulation of many 64-bit products: a 128-bit running sum as two words, reduced once at the end.
// Any number of terms below 2^64 is exact.
struct WideAccumulator {
  u64 lo = 0;  // low word of the sum
  u64 hi = 0;  // high word: the carries out of lo
  // Adds one 64-bit term.
  CERIUM_HD CERIUM_FORCE_INLINE void add(u64 x) {
    lo += x;
    hi += static_cast<u64>(lo < x);
  }
  // Adds the product a b of two words.
  CERIUM_HD CERIUM_FORCE_INLINE void add_product(u32 a, u32 b) { add(static_cast<u64>(a) * b); }
  // (hi 2^64 + lo) mod q.
  CERIUM_HD CERIUM_FORCE_INLINE u32 reduce(const Modulus& m) const {
    const u32 high = mul_mod(barrett_reduce(hi, m), m.two64_mod, m);
    return add_mod(high, barrett_reduce(lo, m), m.value);
  }
};

// Host-side helpers on 64-bit arithmetic (precomputation, not hot paths).
constexpr u32 pow_mod(u32 base, u64 exponent, u32 q) {
  u64 result = 1 % q;
  u64 b = base % q;
  while (exponent != 0) {
    if (exponent & 1) result = (result * b) % q;
    b = (b * b) % q;
    exponent >>= 1;
  }
  return static_cast<u32>(result);
}

// a^{-1} mod m for gcd(a, m) = 1 (extended Euclid); 0 when no inverse exists.
constexpr u64 inv_mod(u64 a, u64 m) {
  if (m == 1) return 0;
  i128 t = 0, new_t = 1;
  i128 r = static_cast<i128>(m), new_r = static_cast<i128>(a % m);
  while (new_r != 0) {
    const i128 quotient = r / new_r;
    const i128 tmp_t = t - quotient * new_t;
    t = new_t;
    new_t = tmp_t;
    const i128 tmp_r = r - quotient * new_r;
    r = new_r;
    new_r = tmp_r;
  }
  if (r != 1) return 0;
  if (t < 0) t += m;
  return static_cast<u64>(t);
}

}  // namespace cerium::math
