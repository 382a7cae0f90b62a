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
  // hi 2^64 + lo = hi 2^64 + a 2^32 + b is congruent to hi [2^64]_p + a [2^32]_p + b < 2^6 2^31 + 2^63 + 2^32 (hi
  // stays below 2^6 for the at most 96 sources), so one Barrett step instead of WideAccumulator::reduce's three.
  const u64 folded = static_cast<u64>(static_cast<u32>(acc.hi)) * t.modulus.two64_mod +
                     static_cast<u64>(static_cast<u32>(acc.lo >> 32)) * t.two32_mod + static_cast<u32>(acc.lo);
  const u32 v = math::barrett_reduce(l <= kChunk ? acc.lo : folded, t.modulus);
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
    if (copy && s.copy_to != ~0u) args.out[s.copy_to * n + k] = args.copy_in ? args.copy_in[s.in_limb * n + k] : x;
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

// The register-blocked form for up to 32 sources (every ModUp digit and ModDown of the parameter sets in use):
// each thread keeps its y_i in registers (MaxSources of them, the unused ones zero) and the block's targets'
// rows of [Q_i]_{p_j} sit in shared memory, padded to MaxSources, so that one 16-byte broadcast load feeds four
// products of each of two independent accumulation chains. The loops are unrolled at compile time: per product
// one multiply-add into a 64-bit partial sum, per four products one 128-bit add. Exactly the same sums as the
// staged form, hence the same words.
constexpr int kRegisterTargets = 16;  // targets per block (grid.y splits the rest)

template <int MaxSources, ConversionEpilogue Epilogue>
__global__ void __launch_bounds__(kThreads) register_conversion_kernel(ConversionLaunch args) {
  static_assert(MaxSources % kChunk == 0);
  __shared__ __align__(16) u32 rows[kRegisterTargets * MaxSources];
  const unsigned l = static_cast<unsigned>(args.source_count);
  const unsigned first = blockIdx.y * kRegisterTargets;
  const unsigned remaining = static_cast<unsigned>(args.target_count) - first;
  const unsigned count = remaining < kRegisterTargets ? remaining : kRegisterTargets;
  for (unsigned w = threadIdx.x; w < count * MaxSources; w += kThreads) {
    const unsigned j = w / MaxSources, i = w % MaxSources;
    rows[w] = i < l ? args.q_hat_mod[(first + j) * l + i] : 0u;
  }
  __syncthreads();
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (k >= n) return;
  const bool copy = args.copy_sources && blockIdx.y == 0;
  u32 y[MaxSources];
#pragma unroll
  for (int i = 0; i < MaxSources; ++i) {
    y[i] = 0;
    if (i < static_cast<int>(l)) {
      const ConversionSource s = args.sources[i];
      u32 x = args.in[s.in_limb * n + k];
      if (copy && s.copy_to != ~0u) args.out[s.copy_to * n + k] = args.copy_in ? args.copy_in[s.in_limb * n + k] : x;
      if constexpr (Epilogue != ConversionEpilogue::store) x = math::add_mod(x, s.shift, s.modulus);
      y[i] = math::mul_shoup(x, s.q_hat_inv, s.q_hat_inv_shoup, s.modulus);
    }
  }
  const auto chunk_sum = [&](const uint4 r, int c) {
    u64 sum = static_cast<u64>(y[4 * c]) * r.x;
    sum += static_cast<u64>(y[4 * c + 1]) * r.y;
    sum += static_cast<u64>(y[4 * c + 2]) * r.z;
    sum += static_cast<u64>(y[4 * c + 3]) * r.w;
    return sum;
  };
  unsigned j = 0;
  for (; j + 1 < count; j += 2) {
    const uint4* row0 = reinterpret_cast<const uint4*>(rows + j * MaxSources);
    const uint4* row1 = row0 + MaxSources / 4;
    math::WideAccumulator acc0, acc1;
#pragma unroll
    for (int c = 0; c < MaxSources / 4; ++c) {
      acc0.add(chunk_sum(row0[c], c));
      acc1.add(chunk_sum(row1[c], c));
    }
    finish_target<Epilogue>(args, args.targets[first + j], acc0, l, n, k);
    finish_target<Epilogue>(args, args.targets[first + j + 1], acc1, l, n, k);
  }
  if (j < count) {
    const uint4* row = reinterpret_cast<const uint4*>(rows + j * MaxSources);
    math::WideAccumulator acc;
#pragma unroll
    for (int c = 0; c < MaxSources / 4; ++c) acc.add(chunk_sum(row[c], c));
    finish_target<Epilogue>(args, args.targets[first + j], acc, l, n, k);
  }
}

template <int MaxSources, ConversionEpilogue Epilogue>
void launch_registers(const ConversionLaunch& args) {
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t target_blocks =
      args.target_count == 0 ? 1 : (args.target_count + kRegisterTargets - 1) / kRegisterTargets;
  const dim3 grid(static_cast<unsigned>((n + kThreads - 1) / kThreads), static_cast<unsigned>(target_blocks));
  register_conversion_kernel<MaxSources, Epilogue><<<grid, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

// The smallest multiple of 4 that holds the sources: at most 3 padded products per target.
template <ConversionEpilogue Epilogue>
bool launch_in_registers(const ConversionLaunch& args) {
  switch ((args.source_count + 3) / 4) {
    case 1: launch_registers<4, Epilogue>(args); return true;
    case 2: launch_registers<8, Epilogue>(args); return true;
    case 3: launch_registers<12, Epilogue>(args); return true;
    case 4: launch_registers<16, Epilogue>(args); return true;
    case 5: launch_registers<20, Epilogue>(args); return true;
    case 6: launch_registers<24, Epilogue>(args); return true;
    case 7: launch_registers<28, Epilogue>(args); return true;
    case 8: launch_registers<32, Epilogue>(args); return true;
    default: return false;
  }
}

template <ConversionEpilogue Epilogue>
void launch(const ConversionLaunch& args) {
  if (launch_in_registers<Epilogue>(args)) return;
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
