// The key-switch inner product: for each limb j of Q_l u P, sum_d digit_d[j] * (b_d[j], a_d[j]), both key halves
// at once, accumulated exactly in 128 bits and reduced once per coefficient (as ckks::key_switch_apply does).
//
// Why the GPU needs its own loop: the CPU keeps N accumulators per limb in memory and sweeps the digits; here
// a thread holds the accumulators of 4 adjacent coefficients of one limb in registers and walks the digits, so
// each digit word and key word is read exactly once and each output written once, with 16-byte key loads and
// stores. An automorphism (hoisted rotation) is applied to the digits as an index map on load.
//
// Up to 4 digits (dnum <= 4, every parameter set in use) the digit count is a template argument: all the
// digits' and keys' loads are issued before the first product (the runtime loop left one digit's loads in flight
// at a time, at 73% of DRAM peak), and the sum fits 64 bits (4 products below 2^62), so each coefficient costs one
// Barrett reduction instead of the 128-bit accumulator's three. Both forms give the reduced sum, the same words.

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

// The fixed-count form (Digits <= 4).
template <bool Permuted, int Digits>
__global__ void __launch_bounds__(kThreads) inner_product_fixed_kernel(InnerProductLaunch args) {
  static_assert(Digits >= 1 && Digits <= 4, "four products below 2^62 each fit 64 bits");
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (4 * v >= n) return;
  const std::size_t j = blockIdx.y;
  const std::size_t key_offset = (j < args.q_limbs ? j : j + args.key_p_shift) * n;
  uint4 p = make_uint4(0, 0, 0, 0);
  if constexpr (Permuted) p = reinterpret_cast<const uint4*>(args.permutation)[v];
  uint4 x[Digits], b[Digits], a[Digits];
#pragma unroll
  for (int d = 0; d < Digits; ++d) {
    const u32* digit = args.digits[d] + j * n;
    if constexpr (Permuted) x[d] = make_uint4(digit[p.x], digit[p.y], digit[p.z], digit[p.w]);
    else x[d] = reinterpret_cast<const uint4*>(digit)[v];
    b[d] = reinterpret_cast<const uint4*>(args.key_b[d] + key_offset)[v];
    a[d] = reinterpret_cast<const uint4*>(args.key_a[d] + key_offset)[v];
  }
  math::u64 s0[4] = {}, s1[4] = {};
#pragma unroll
  for (int d = 0; d < Digits; ++d) {
    s0[0] += static_cast<math::u64>(x[d].x) * b[d].x, s1[0] += static_cast<math::u64>(x[d].x) * a[d].x;
    s0[1] += static_cast<math::u64>(x[d].y) * b[d].y, s1[1] += static_cast<math::u64>(x[d].y) * a[d].y;
    s0[2] += static_cast<math::u64>(x[d].z) * b[d].z, s1[2] += static_cast<math::u64>(x[d].z) * a[d].z;
    s0[3] += static_cast<math::u64>(x[d].w) * b[d].w, s1[3] += static_cast<math::u64>(x[d].w) * a[d].w;
  }
  const math::Modulus m = args.moduli[j];
  reinterpret_cast<uint4*>(args.out0 + j * n)[v] =
      make_uint4(math::barrett_reduce(s0[0], m), math::barrett_reduce(s0[1], m), math::barrett_reduce(s0[2], m),
                 math::barrett_reduce(s0[3], m));
  reinterpret_cast<uint4*>(args.out1 + j * n)[v] =
      make_uint4(math::barrett_reduce(s1[0], m), math::barrett_reduce(s1[1], m), math::barrett_reduce(s1[2], m),
                 math::barrett_reduce(s1[3], m));
}

template <bool Permuted>
void launch_kernel(const InnerProductLaunch& args, dim3 grid, cudaStream_t stream) {
  switch (args.digit_count) {
    case 1: inner_product_fixed_kernel<Permuted, 1><<<grid, kThreads, 0, stream>>>(args); break;
    case 2: inner_product_fixed_kernel<Permuted, 2><<<grid, kThreads, 0, stream>>>(args); break;
    case 3: inner_product_fixed_kernel<Permuted, 3><<<grid, kThreads, 0, stream>>>(args); break;
    case 4: inner_product_fixed_kernel<Permuted, 4><<<grid, kThreads, 0, stream>>>(args); break;
    default: inner_product_kernel<Permuted><<<grid, kThreads, 0, stream>>>(args); break;
  }
}

}  // namespace key_switch_kernels

void launch_inner_product(const InnerProductLaunch& args) {
  using namespace key_switch_kernels;
  if (args.limbs == 0) return;
  const std::size_t vectors = (std::size_t{1} << args.log_degree) / 4;
  const dim3 grid(static_cast<unsigned>((vectors + kThreads - 1) / kThreads), static_cast<unsigned>(args.limbs));
  const auto stream = static_cast<cudaStream_t>(args.stream);
  if (args.permutation != nullptr) launch_kernel<true>(args, grid, stream);
  else launch_kernel<false>(args, grid, stream);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cerium::cuda::detail
