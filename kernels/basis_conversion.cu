// Fast basis conversion (and the ModUp / ModDown built on it) over every limb in one launch.
//
// Why the GPU needs its own loop: the CPU converts block by block, staging y_i = [x_i Q_i^{-1}]_{q_i} for 1024
// coefficients and then sweeping the targets. Here a block of 128 threads owns 128 coefficients: each thread
// stages its own y_i in shared memory (a column per thread, so no barrier is needed), then produces a run of
// targets from them; the grid's y dimension splits the targets so that enough blocks run, each recomputing the
// y_i from the few source limbs (L2-resident for ModUp's alpha and ModDown's |P| primes). Sums of products are
// accumulated exactly (64-bit partial sums of 4 products in a 128-bit math::WideAccumulator) and reduced once,
// as the CPU does, so the words are the CPU's. ModUp's copies of the digit limbs and ModDown's subtract-and-scale
// are fused into the same kernel (the source load and the epilogue), so neither costs another pass.

#include <cuda_runtime.h>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"

namespace cerium::cuda::detail {
namespace conversion_kernels {

using math::u32;
using math::u64;
constexpr int kThreads = 128;
constexpr int kTargetsPerBlock = 8;
constexpr int kChunk = 4;  // products per 64-bit partial sum: 4 x 2^62 < 2^64

// The reduced value of target j from the staged y_i and its row of [Q_i]_{p_j} (both in shared memory).
__device__ __forceinline__ math::WideAccumulator accumulate(const u32* staged, const u32* row, std::size_t l) {
  math::WideAccumulator acc;
  for (std::size_t i0 = 0; i0 < l; i0 += kChunk) {
    u64 partial = 0;
    const std::size_t end = i0 + kChunk < l ? i0 + kChunk : l;
    for (std::size_t i = i0; i < end; ++i) partial += static_cast<u64>(staged[i * kThreads]) * row[i];
    acc.add(partial);
  }
  return acc;
}

template <ConversionEpilogue Epilogue>
__device__ __forceinline__ void finish_target(const ConversionLaunch& args, const ConversionTarget& t,
                                              const math::WideAccumulator& acc, std::size_t l, std::size_t n,
                                              std::size_t k) {
  const u32 v = l <= kChunk ? math::barrett_reduce(acc.lo, t.modulus) : acc.reduce(t.modulus);
  const u32 p = t.modulus.value;
  u32 result = v;
  if constexpr (Epilogue == ConversionEpilogue::mod_down) {
    const u32 x = args.in[t.x_limb * n + k];
    result = math::mul_shoup(math::sub_mod(math::add_mod(x, t.shift, p), v, p), t.p_inv, t.p_inv_shoup, p);
  } else if constexpr (Epilogue == ConversionEpilogue::mod_down_shift) {
    result = math::sub_mod(v, t.shift, p);
  }
  args.out[t.out_limb * n + k] = result;
}

template <ConversionEpilogue Epilogue>
__global__ void __launch_bounds__(kThreads) conversion_kernel(ConversionLaunch args) {
  // staged: source_count x kThreads words (a column per thread); rows: the block's targets' [Q_i]_{p_j}, read
  // by every thread (a broadcast from shared memory instead of a dependent global load per product).
  extern __shared__ u32 shared[];
  const std::size_t l = args.source_count;
  u32* staged = shared;
  u32* rows = shared + l * kThreads;
  const std::size_t first = static_cast<std::size_t>(blockIdx.y) * kTargetsPerBlock;
  const std::size_t last = first + kTargetsPerBlock < args.target_count ? first + kTargetsPerBlock : args.target_count;
  for (std::size_t w = threadIdx.x; w < (last - first) * l; w += kThreads) rows[w] = args.q_hat_mod[first * l + w];
  __syncthreads();
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (k >= n) return;
  const bool copy = args.copy_sources && blockIdx.y == 0;
  u32* column = staged + threadIdx.x;
  for (std::size_t i = 0; i < l; ++i) {
    const ConversionSource s = args.sources[i];
    u32 x = args.in[s.in_limb * n + k];
    if (copy && s.copy_to != ~0u) args.out[s.copy_to * n + k] = x;
    if constexpr (Epilogue != ConversionEpilogue::store) x = math::add_mod(x, s.shift, s.modulus);
    column[i * kThreads] = math::mul_shoup(x, s.q_hat_inv, s.q_hat_inv_shoup, s.modulus);
  }
  // Two targets at a time: two independent accumulation chains share each staged load.
  std::size_t j = first;
  for (; j + 1 < last; j += 2) {
    const u32* row0 = rows + (j - first) * l;
    const u32* row1 = row0 + l;
    math::WideAccumulator acc0, acc1;
    for (std::size_t i0 = 0; i0 < l; i0 += kChunk) {
      u64 partial0 = 0, partial1 = 0;
      const std::size_t end = i0 + kChunk < l ? i0 + kChunk : l;
      for (std::size_t i = i0; i < end; ++i) {
        const u64 y = column[i * kThreads];
        partial0 += y * row0[i];
        partial1 += y * row1[i];
      }
      acc0.add(partial0);
      acc1.add(partial1);
    }
    finish_target<Epilogue>(args, args.targets[j], acc0, l, n, k);
    finish_target<Epilogue>(args, args.targets[j + 1], acc1, l, n, k);
  }
  if (j < last) finish_target<Epilogue>(args, args.targets[j], accumulate(column, rows + (j - first) * l, l), l, n, k);
}

template <ConversionEpilogue Epilogue>
void launch(const ConversionLaunch& args) {
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t target_blocks = args.target_count == 0 ? 1 : (args.target_count + kTargetsPerBlock - 1) / kTargetsPerBlock;
  const dim3 grid(static_cast<unsigned>((n + kThreads - 1) / kThreads), static_cast<unsigned>(target_blocks));
  const std::size_t shared = args.source_count * (kThreads + kTargetsPerBlock) * sizeof(u32);
  // Above 48 KiB of shared memory a kernel must opt in (96 sources need 51 KiB).
  static const bool opted_in = [] {
    CERIUM_CUDA_CHECK(cudaFuncSetAttribute(conversion_kernel<Epilogue>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(conversion_max_sources * (kThreads + kTargetsPerBlock) *
                                                            sizeof(u32))));
    return true;
  }();
  (void)opted_in;
  conversion_kernel<Epilogue><<<grid, kThreads, shared, static_cast<cudaStream_t>(args.stream)>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace conversion_kernels

void launch_conversion(const ConversionLaunch& args) {
  using namespace conversion_kernels;
  if (args.source_count == 0 || (args.target_count == 0 && !args.copy_sources)) return;
  if (args.source_count > conversion_max_sources) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // plans check first
  switch (args.epilogue) {
    case ConversionEpilogue::store: launch<ConversionEpilogue::store>(args); break;
    case ConversionEpilogue::mod_down: launch<ConversionEpilogue::mod_down>(args); break;
    case ConversionEpilogue::mod_down_shift: launch<ConversionEpilogue::mod_down_shift>(args); break;
    default: CERIUM_CUDA_CHECK(cudaErrorInvalidValue);
  }
}

}  // namespace cerium::cuda::detail
