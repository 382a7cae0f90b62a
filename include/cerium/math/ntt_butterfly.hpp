#pragma once
// The NTT butterflies shared by the CPU loops and the CUDA kernels, so both compute the same words.
// Values between stages lie in [0, 2q); q < 2^31 keeps every intermediate below 2^32.

#include "cerium/math/modarith.hpp"

namespace cerium::math {

// Cooley-Tukey (forward, decimation in time): (x, y) -> (x + w y, x - w y).
CERIUM_HD CERIUM_FORCE_INLINE void ct_butterfly(u32& x, u32& y, u32 w, u32 w_quotient, u32 q) {
  const u32 u = csub(x, q);
  const u32 v = csub(mul_shoup_lazy(y, w, w_quotient, q), q);
  x = u + v;
  y = u - v + q;
}

// Gentleman-Sande (inverse, decimation in frequency): (x, y) -> (x + y, w (x - y)).
CERIUM_HD CERIUM_FORCE_INLINE void gs_butterfly(u32& x, u32& y, u32 w, u32 w_quotient, u32 q) {
  const u32 u = csub(x, q);
  const u32 v = csub(y, q);
  x = u + v;
  y = mul_shoup_lazy(u - v + q, w, w_quotient, q);
}

// The low `bits` bits of x in reverse order: the index permutation of the NTT's bit-reversed output.
CERIUM_HD CERIUM_FORCE_INLINE constexpr u32 bit_reverse(u32 x, int bits) {
  u32 r = 0;
  for (int i = 0; i < bits; ++i) {
    r = (r << 1) | (x & 1u);
    x >>= 1;
  }
  return r;
}

}  // namespace cerium::math
