// Automorphisms in NTT form: a permutation of every limb's words by one table (it depends on N and the Galois
// element only, not on the prime).
//
// Why the GPU needs its own loop: a thread reads 4 adjacent table entries as one 16-byte vector, gathers the 4
// source words and stores them as one vector, for a run of limbs, so the table is read once per run and the
// stores stay 16 bytes wide. The gathers are scattered but fall inside one 256 KiB limb (L2-resident). The key-switch
// inner product applies the same table as an index map on load (kernels/key_switch.cu), so a rotation after a
// hoisted ModUp costs no pass of its own.

#include <cuda_runtime.h>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"

namespace cerium::cuda::detail {
namespace automorphism_kernels {

using math::u32;
constexpr int kThreads = 256;
constexpr int kLimbsPerBlock = 8;

__global__ void __launch_bounds__(kThreads) automorphism_kernel(AutomorphismLaunch args) {
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (4 * v >= n) return;
  const uint4 p = reinterpret_cast<const uint4*>(args.permutation)[v];
  const std::size_t first = static_cast<std::size_t>(blockIdx.y) * kLimbsPerBlock;
  const std::size_t last = first + kLimbsPerBlock < args.limbs ? first + kLimbsPerBlock : args.limbs;
  for (std::size_t i = first; i < last; ++i) {
    const u32* in = args.in + i * n;
    reinterpret_cast<uint4*>(args.out + i * n)[v] = make_uint4(in[p.x], in[p.y], in[p.z], in[p.w]);
  }
}

}  // namespace automorphism_kernels

void launch_automorphism(const AutomorphismLaunch& args) {
  using namespace automorphism_kernels;
  if (args.limbs == 0) return;
  const std::size_t vectors = (std::size_t{1} << args.log_degree) / 4;
  const dim3 grid(static_cast<unsigned>((vectors + kThreads - 1) / kThreads),
                  static_cast<unsigned>((args.limbs + kLimbsPerBlock - 1) / kLimbsPerBlock));
  automorphism_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cerium::cuda::detail
