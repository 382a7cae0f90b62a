// The key-switch inner product: for each limb j of Q_l u P, sum_d digit_d[j] * (b_d[j], a_d[j]), both key halves
// at once, accumulated exactly in 128 bits and reduced once per coefficient (as ckks::key_switch_apply does).
//
// Why the GPU needs its own loop: the CPU keeps N accumulators per limb in memory and sweeps the digits; here
// a thread holds the accumulators of 4 adjacent coefficients of one limb in registers and walks the digits, so
// each digit word and key word is read exactly once and each output written once, with 16-byte key loads and
// stores. An automorphism (hoisted rotation) is applied to the digits as an index map on load.

#include <cuda_runtime.h>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"

namespace cerium::cuda::detail {
namespace key_switch_kernels {

using math::u32;
constexpr int kThreads = 256;

template <bool Permuted>
__global__ void __launch_bounds__(kThreads) inner_product_kernel(InnerProductLaunch args) {
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (4 * v >= n) return;
  const std::size_t j = blockIdx.y;
  const std::size_t key_limb = j < args.q_limbs ? j : j + args.key_p_shift;
  uint4 p = make_uint4(0, 0, 0, 0);
  if constexpr (Permuted) p = reinterpret_cast<const uint4*>(args.permutation)[v];
  math::WideAccumulator acc0[4], acc1[4];
  for (std::size_t d = 0; d < args.digit_count; ++d) {
    const u32* digit = args.digits[d] + j * n;
    uint4 x;
    if constexpr (Permuted) x = make_uint4(digit[p.x], digit[p.y], digit[p.z], digit[p.w]);
    else x = reinterpret_cast<const uint4*>(digit)[v];
    const std::size_t key_offset = key_limb * n;
    const uint4 b = reinterpret_cast<const uint4*>(args.key_b[d] + key_offset)[v];
    const uint4 a = reinterpret_cast<const uint4*>(args.key_a[d] + key_offset)[v];
    acc0[0].add_product(x.x, b.x), acc1[0].add_product(x.x, a.x);
    acc0[1].add_product(x.y, b.y), acc1[1].add_product(x.y, a.y);
    acc0[2].add_product(x.z, b.z), acc1[2].add_product(x.z, a.z);
    acc0[3].add_product(x.w, b.w), acc1[3].add_product(x.w, a.w);
  }
  const math::Modulus m = args.moduli[j];
  reinterpret_cast<uint4*>(args.out0 + j * n)[v] =
      make_uint4(acc0[0].reduce(m), acc0[1].reduce(m), acc0[2].reduce(m), acc0[3].reduce(m));
  reinterpret_cast<uint4*>(args.out1 + j * n)[v] =
      make_uint4(acc1[0].reduce(m), acc1[1].reduce(m), acc1[2].reduce(m), acc1[3].reduce(m));
}

}  // namespace key_switch_kernels

void launch_inner_product(const InnerProductLaunch& args) {
  using namespace key_switch_kernels;
  if (args.limbs == 0) return;
  const std::size_t vectors = (std::size_t{1} << args.log_degree) / 4;
  const dim3 grid(static_cast<unsigned>((vectors + kThreads - 1) / kThreads), static_cast<unsigned>(args.limbs));
  const auto stream = static_cast<cudaStream_t>(args.stream);
  if (args.permutation != nullptr) inner_product_kernel<true><<<grid, kThreads, 0, stream>>>(args);
  else inner_product_kernel<false><<<grid, kThreads, 0, stream>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cerium::cuda::detail
