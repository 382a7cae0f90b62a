// Seeded keys' uniform halves expanded on the device: the same words as rlwe::expand_uniform_limb on the CPU.
//
// Why the GPU needs its own loop: the CPU draws one ChaCha20 word after another and rejects those at or above
// math::uniform_acceptance_bound(q), so a value's position in the keystream depends on every rejection before
// it. Here one block owns a limb: in each round every thread computes one 64-byte keystream block (16 words),
// counts its accepted words, and a block-wide exclusive scan (CUB) of the counts gives each thread where its
// accepted words go, in keystream order. Rounds go on until N values are written; a round covers
// 16 x kThreads words, so a limb of 2^16 needs 8 rounds and a little more when words are rejected.

#include <cuda_runtime.h>

#include <cub/block/block_scan.cuh>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/rlwe/uniform_stream.hpp"
#include "cerium/math/chacha20.hpp"
#include "cerium/math/sampler.hpp"

namespace cerium::cuda::detail {
namespace uniform_kernels {

using math::u32;
using math::u64;
constexpr int kThreads = 512;
constexpr int kWordsPerBlock = 16;

__global__ void __launch_bounds__(kThreads) expand_kernel(UniformExpansionLaunch args) {
  using Scan = cub::BlockScan<u32, kThreads>;
  __shared__ typename Scan::TempStorage scan_storage;
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t limb = blockIdx.x;
  const u32 q = args.moduli[limb].value;
  const u64 bound = math::uniform_acceptance_bound(q);
  math::ChaCha20Key key;
  for (int i = 0; i < 8; ++i) key.words[i] = args.seed[i];
  const math::ChaCha20Nonce base =
      math::chacha20_stream_nonce(rlwe::uniform_limb_stream(args.stream, args.first_limb + limb));
  u32* out = args.out + limb * n;
  std::size_t filled = 0;  // the same in every thread: each round's total comes from the scan
  for (u64 round = 0; filled < n; ++round) {
    // Keystream block b of the stream (ChaCha20Stream's layout: the counter's carry goes into nonce word 0).
    const u64 b = round * kThreads + threadIdx.x;
    math::ChaCha20Nonce nonce = base;
    nonce.words[0] += static_cast<u32>(b >> 32);
    const math::ChaCha20Block block = math::chacha20_block(key, static_cast<u32>(b), nonce);
    u32 accepted = 0;
#pragma unroll
    for (int w = 0; w < kWordsPerBlock; ++w) accepted += static_cast<u32>(block.words[w] < bound);
    u32 offset = 0, total = 0;
    Scan(scan_storage).ExclusiveSum(accepted, offset, total);
    std::size_t at = filled + offset;
#pragma unroll
    for (int w = 0; w < kWordsPerBlock; ++w) {
      const u32 word = block.words[w];
      if (word < bound) {
        if (at < n) out[at] = word % q;
        ++at;
      }
    }
    filled += total;
    __syncthreads();  // scan_storage is reused by the next round
  }
}

}  // namespace uniform_kernels

void launch_uniform_expansion(const UniformExpansionLaunch& args) {
  using namespace uniform_kernels;
  if (args.limbs == 0) return;
  if (args.limbs > 65535 || args.first_limb + args.limbs > rlwe::max_uniform_limbs ||
      args.stream >= rlwe::max_uniform_stream)
    CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // the backend checks first
  expand_kernel<<<static_cast<unsigned>(args.limbs), kThreads, 0, static_cast<cudaStream_t>(args.stream_handle)>>>(
      args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cerium::cuda::detail
