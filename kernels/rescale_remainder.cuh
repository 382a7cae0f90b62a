#pragma once
// The rescale's remainder on the device, shared by the rescale kernel and the ModDown conversion that also
// rescales: the arithmetic of ring::Rescaler step for step (centered remainder flagged by bit 63, Garner for two
// dropped primes, remainder_mod), so both kernels give its words.

#include "cerium/backend/cuda/primitives_launch.hpp"

namespace cerium::cuda::detail::rescale_remainder {

inline constexpr math::u64 kNegative = math::u64{1} << 63;

// r = x mod P from the last dropped limb's word xb and (two dropped primes) the second last's xa, flagged in
// bit 63 when r > (P - 1) / 2 (nearest rounding takes r - P then).
__device__ __forceinline__ math::u64 remainder(const RescaleRemainder& c, math::u32 xb, math::u32 xa) {
  math::u64 r = xb;
  if (c.dropped_count == 2) {
    const math::u32 a = c.second_last.value;
    const math::u32 digit = math::mul_shoup(math::sub_mod(xa, math::barrett_reduce(xb, c.second_last), a),
                                            c.last_inv, c.last_inv_shoup, a);
    r = xb + static_cast<math::u64>(c.last) * digit;
  }
  return r | (kNegative & (0 - static_cast<math::u64>(r > c.half)));
}

// [r]_q, or [r - P]_q when flagged: ring::Rescaler's remainder_mod.
__device__ __forceinline__ math::u32 remainder_mod(math::u64 r, const math::Modulus& m, math::u32 p_mod) {
  const math::u32 negative_mask = 0u - static_cast<math::u32>(r >> 63);
  return math::sub_mod(math::barrett_reduce(r & ~kNegative, m), p_mod & negative_mask, m.value);
}

}  // namespace cerium::cuda::detail::rescale_remainder
