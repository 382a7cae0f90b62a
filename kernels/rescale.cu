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
#include "rescale_remainder.cuh"

namespace cerium::cuda::detail {
namespace rescale_kernels {

using math::u32;
using math::u64;
constexpr int kThreads = 128;
constexpr int kLimbsPerBlock = 4;
using rescale_remainder::remainder_mod;

__device__ __forceinline__ u64 remainder(const RescaleLaunch& args, u32 xb, u32 xa) {
  return rescale_remainder::remainder(args.remainder, xb, xa);
}

__global__ void __launch_bounds__(kThreads) rescale_kernel(RescaleLaunch args) {
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;  // vector of 4 words
  if (4 * v >= n) return;
  const uint4* dropped = reinterpret_cast<const uint4*>(args.dropped);
  const int count = args.remainder.dropped_count;
  const uint4 xb4 = dropped[(count - 1) * (n / 4) + v];
  const uint4 xa4 = count == 2 ? dropped[v] : make_uint4(0, 0, 0, 0);
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
    uint4* out = reinterpret_cast<uint4*>(args.out) + i * (n / 4) + v;
    if (args.correction_only) {
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

// The corrections of several terms summed (correction_only, terms > 1): each term's remainder is computed from
// its own dropped limbs and reduced per kept limb as above, then added into a running residue, so the sum's
// words equal those of the terms' rescales added one by one.
__global__ void __launch_bounds__(kThreads) corrections_sum_kernel(RescaleLaunch args) {
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (4 * v >= n) return;
  const int count = args.remainder.dropped_count;
  const std::size_t first = static_cast<std::size_t>(blockIdx.y) * kLimbsPerBlock;
  const std::size_t limbs = first + kLimbsPerBlock < args.kept ? kLimbsPerBlock : args.kept - first;
  uint4 acc[kLimbsPerBlock];
  for (int j = 0; j < kLimbsPerBlock; ++j) acc[j] = make_uint4(0, 0, 0, 0);
  // Terms kTermsAhead at a time, every load of the group issued before the first remainder: a sum of hundreds
  // of terms at a low level is a short grid, so each thread's walk over the terms is its time (latency, not
  // bandwidth).
  constexpr std::size_t kTermsAhead = 4;
  for (std::size_t group = 0; group < args.terms; group += kTermsAhead) {
    uint4 xb4[kTermsAhead], xa4[kTermsAhead];
#pragma unroll
    for (std::size_t k = 0; k < kTermsAhead; ++k) {
      if (group + k >= args.terms) break;
      const uint4* dropped = reinterpret_cast<const uint4*>(args.dropped + (group + k) * args.term_stride);
      xb4[k] = dropped[(count - 1) * (n / 4) + v];
      xa4[k] = count == 2 ? dropped[v] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (std::size_t k = 0; k < kTermsAhead; ++k) {
      if (group + k >= args.terms) break;
      const u64 r[4] = {remainder(args, xb4[k].x, xa4[k].x), remainder(args, xb4[k].y, xa4[k].y),
                        remainder(args, xb4[k].z, xa4[k].z), remainder(args, xb4[k].w, xa4[k].w)};
#pragma unroll
      for (int j = 0; j < kLimbsPerBlock; ++j) {
        if (static_cast<std::size_t>(j) >= limbs) break;
        const RescaleLimbConstants c = args.constants[first + j];
        const u32 q = c.modulus.value;
        acc[j].x = math::add_mod(acc[j].x, remainder_mod(r[0], c.modulus, c.p_mod), q);
        acc[j].y = math::add_mod(acc[j].y, remainder_mod(r[1], c.modulus, c.p_mod), q);
        acc[j].z = math::add_mod(acc[j].z, remainder_mod(r[2], c.modulus, c.p_mod), q);
        acc[j].w = math::add_mod(acc[j].w, remainder_mod(r[3], c.modulus, c.p_mod), q);
      }
    }
  }
  for (std::size_t j = 0; j < limbs; ++j) reinterpret_cast<uint4*>(args.out)[(first + j) * (n / 4) + v] = acc[j];
}

}  // namespace rescale_kernels

void launch_rescale(const RescaleLaunch& args) {
  using namespace rescale_kernels;
  if (args.kept == 0) return;
  const std::size_t vectors = (std::size_t{1} << args.log_degree) / 4;
  const dim3 grid(static_cast<unsigned>((vectors + kThreads - 1) / kThreads),
                  static_cast<unsigned>((args.kept + kLimbsPerBlock - 1) / kLimbsPerBlock));
  if (args.correction_only && args.terms > 1) {
    corrections_sum_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args);
    CERIUM_CUDA_CHECK(cudaGetLastError());
    return;
  }
  rescale_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cerium::cuda::detail
