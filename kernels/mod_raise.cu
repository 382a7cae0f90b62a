// ModRaise for bootstrapping: each coefficient of a polynomial over Q = q0 (or q0 q1) is lifted to its centered
// representative v in (-Q/2, Q/2] and reduced modulo every target prime, the words of RnsPoly::to_signed then
// RnsPoly::from_signed. One thread per coefficient; the source residues are read once, every target written once.

#include <cuda_runtime.h>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"

namespace cerium::cuda::detail {
namespace mod_raise_kernels {

using math::u32;
using math::u64;
constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) mod_raise_kernel(ModRaiseLaunch args) {
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (k >= n) return;
  // Garner: x = r0 + q0 ((r1 - r0) q0^{-1} mod q1) in [0, Q), Q < 2^63.
  const u64 r0 = args.in[k];
  u64 x = r0;
  u64 big_q = args.q0;
  if (args.source_count == 2) {
    const u32 q1 = args.q1;
    const u32 r1 = args.in[n + k];
    const u32 diff = math::sub_mod(r1, static_cast<u32>(r0 % q1), q1);
    const u64 t = static_cast<u64>(diff) * args.q0_inv_mod_q1 % q1;
    x = r0 + t * args.q0;
    big_q = static_cast<u64>(args.q0) * q1;
  }
  const bool negative = x > big_q / 2;  // centered: v = x - Q
  const u64 magnitude = negative ? big_q - x : x;
  for (std::size_t j = 0; j < args.target_count; ++j) {
    const math::Modulus m = args.targets[j];
    const u32 r = math::barrett_reduce(magnitude, m);
    args.out[j * n + k] = negative ? math::neg_mod(r, m.value) : r;
  }
}

}  // namespace mod_raise_kernels

void launch_mod_raise(const ModRaiseLaunch& args) {
  using namespace mod_raise_kernels;
  if (args.target_count == 0) return;
  const std::size_t n = std::size_t{1} << args.log_degree;
  const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  mod_raise_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cerium::cuda::detail
