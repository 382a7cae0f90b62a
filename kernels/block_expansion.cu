// A compressed periodic plaintext expanded on the device: word k of a limb fills the gap words from k gap
// (ckks::PeriodicPlaintext's NTT blocks). Why the GPU needs its own loop: it is a plain gather, but done here the
// host sends N / gap words a limb instead of N (a transformer's weight of one row's period: 16 to 64 times less).

#include <cuda_runtime.h>

#include <algorithm>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"

namespace cerium::cuda::detail {
namespace block_expansion_kernels {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) expand_kernel(BlockExpansionLaunch args) {
  const std::size_t total = args.limbs << args.log_degree;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::size_t limb = i >> args.log_degree, j = i & ((std::size_t{1} << args.log_degree) - 1);
    args.out[i] = args.in[(limb << (args.log_degree - args.log_gap)) + (j >> args.log_gap)];
  }
}

}  // namespace block_expansion_kernels

void launch_block_expansion(const BlockExpansionLaunch& args) {
  using namespace block_expansion_kernels;
  if (args.limbs == 0) return;
  if (args.log_gap > args.log_degree) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // the backend checks first
  const std::size_t total = args.limbs << args.log_degree;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((total + kThreads - 1) / kThreads, 65535 * 8));
  expand_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(args.stream_handle)>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cerium::cuda::detail
