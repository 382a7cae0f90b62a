// Rescale by the last one or two primes, rounding to nearest (or floor), in coefficient form.
//
// Why the GPU needs its own loop: the CPU computes the remainder r = x mod P block by block into scratch and
// then sweeps each kept limb. Here a thread computes r for 4 adjacent coefficients (Garner for two primes) in
// registers and applies it to a run of kept limbs, so r never touches memory; the grid's y dimension splits the
// kept limbs into runs so that small N still fills the device (each run recomputes r from the 1-2 dropped limbs,
// which stay in L2). The arithmetic mirrors ring::Rescaler step for step: centered remainder flagged by bit 63,
// remainder_mod, sub_mod, mul_shoup by [P^{-1}]_{q_i}.

#include <cuda_runtime.h>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"

namespace cerium::cuda::detail {
namespace rescale_kernels {

using math::u32;
using math::u64;
constexpr int kThreads = 128;
constexpr int kLimbsPerBlock = 4;
constexpr u64 kNegative = u64{1} << 63;

__device__ __forceinline__ u64 remainder(const RescaleLaunch& args, u32 xb, u32 xa) {
  u64 r = xb;
  if (args.dropped_count == 2) {
    const u32 a = args.second_last.value;
    const u32 digit = math::mul_shoup(math::sub_mod(xa, math::barrett_reduce(xb, args.second_last), a),
                                      args.last_inv, args.last_inv_shoup, a);
    r = xb + static_cast<u64>(args.last) * digit;
  }
  return r | (kNegative & (0 - static_cast<u64>(r > args.half)));
}

// [r]_q, or [r - P]_q when flagged: ring::Rescaler's remainder_mod.
__device__ __forceinline__ u32 remainder_mod(u64 r, const math::Modulus& m, u32 p_mod) {
  const u32 negative_mask = 0u - static_cast<u32>(r >> 63);
  return math::sub_mod(math::barrett_reduce(r & ~kNegative, m), p_mod & negative_mask, m.value);
}

// Dropped limb j's 4 words at vector v of polynomial p: read, or summed from the terms (RescaleLaunch).
__device__ __forceinline__ uint4 dropped_vector(const RescaleLaunch& args, int j, std::size_t v, std::size_t p,
                                                std::size_t n) {
  if (args.term_count == 0) return reinterpret_cast<const uint4*>(args.dropped)[j * (n / 4) + v];
  const u32 q = args.dropped_count == 2 && j == 0 ? args.second_last.value : args.last;
  uint4 sum = make_uint4(0, 0, 0, 0);
  for (int u = 0; u < args.term_count; ++u) {
    const uint4 t = reinterpret_cast<const uint4*>(args.terms[u] + p * args.term_stride[u])[j * (n / 4) + v];
    const ShoupPair s = args.term_scales[u][j];
    sum.x = math::add_mod(sum.x, math::mul_shoup(t.x, s.value, s.quotient, q), q);
    sum.y = math::add_mod(sum.y, math::mul_shoup(t.y, s.value, s.quotient, q), q);
    sum.z = math::add_mod(sum.z, math::mul_shoup(t.z, s.value, s.quotient, q), q);
    sum.w = math::add_mod(sum.w, math::mul_shoup(t.w, s.value, s.quotient, q), q);
  }
  return sum;
}

__global__ void __launch_bounds__(kThreads) rescale_kernel(RescaleLaunch args) {
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;  // vector of 4 words
  if (4 * v >= n) return;
  const std::size_t p = blockIdx.z;
  const uint4 xb4 = dropped_vector(args, args.dropped_count - 1, v, p, n);
  uint4 xa4 = make_uint4(0, 0, 0, 0);
  if (args.dropped_count == 2) xa4 = dropped_vector(args, 0, v, p, n);
  const u64 r[4] = {remainder(args, xb4.x, xa4.x), remainder(args, xb4.y, xa4.y), remainder(args, xb4.z, xa4.z),
                    remainder(args, xb4.w, xa4.w)};
  const std::size_t first = static_cast<std::size_t>(blockIdx.y) * kLimbsPerBlock;
  const std::size_t last = first + kLimbsPerBlock < args.kept ? first + kLimbsPerBlock : args.kept;
  for (std::size_t i = first; i < last; ++i) {
    const RescaleLimbConstants c = args.constants[i];
    const u32 q = c.modulus.value;
    uint4 t;
    t.x = remainder_mod(r[0], c.modulus, c.p_mod);
    t.y = remainder_mod(r[1], c.modulus, c.p_mod);
    t.z = remainder_mod(r[2], c.modulus, c.p_mod);
    t.w = remainder_mod(r[3], c.modulus, c.p_mod);
    uint4* out = reinterpret_cast<uint4*>(args.out + p * args.out_stride) + i * (n / 4) + v;
    if (args.correction_only) {
      if (args.accumulate_factor != nullptr) {
        const uint2 f = reinterpret_cast<const uint2*>(args.accumulate_factor)[i];
        const uint4 acc = *out;
        t.x = math::add_mod(acc.x, math::mul_shoup(t.x, f.x, f.y, q), q);
        t.y = math::add_mod(acc.y, math::mul_shoup(t.y, f.x, f.y, q), q);
        t.z = math::add_mod(acc.z, math::mul_shoup(t.z, f.x, f.y, q), q);
        t.w = math::add_mod(acc.w, math::mul_shoup(t.w, f.x, f.y, q), q);
      }
      *out = t;
      continue;
    }
    const uint4 x = reinterpret_cast<const uint4*>(args.in)[i * (n / 4) + v];
    uint4 o;
    o.x = math::mul_shoup(math::sub_mod(x.x, t.x, q), c.p_inv, c.p_inv_shoup, q);
    o.y = math::mul_shoup(math::sub_mod(x.y, t.y, q), c.p_inv, c.p_inv_shoup, q);
    o.z = math::mul_shoup(math::sub_mod(x.z, t.z, q), c.p_inv, c.p_inv_shoup, q);
    o.w = math::mul_shoup(math::sub_mod(x.w, t.w, q), c.p_inv, c.p_inv_shoup, q);
    *out = o;
  }
}

}  // namespace rescale_kernels

void launch_rescale(const RescaleLaunch& args) {
  using namespace rescale_kernels;
  if (args.kept == 0) return;
  const std::size_t vectors = (std::size_t{1} << args.log_degree) / 4;
  const dim3 grid(static_cast<unsigned>((vectors + kThreads - 1) / kThreads),
                  static_cast<unsigned>((args.kept + kLimbsPerBlock - 1) / kLimbsPerBlock),
                  static_cast<unsigned>(args.batch));
  rescale_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cerium::cuda::detail
