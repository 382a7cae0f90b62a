// Encoding's first half on the device: the special inverse FFT of a slot vector (math::special_ifft), so that a
// plaintext can cross PCIe as its p complex values and be transformed, scaled and rounded where it is used. Why the
// GPU needs its own loop: the host's transform is one radix-2 pass per stage over host memory.
//
// The words equal the host's: every butterfly is the host's expression with its roundings (explicit _rn
// intrinsics, so nvcc cannot contract a multiply and an add into one fused operation the host does not make), the
// stages run in the host's order, and the twiddles are the host's doubles.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"

namespace cerium::cuda::detail {
namespace special_fft_kernels {

constexpr int kThreads = 256;

// One inverse stage h over n values: the pair (start + j, start + j + h) of each block of 2h becomes (a + b,
// (a - b) conj(w_(h + j))), written as the host's multiply(a - b, std::conj(w)).
__global__ void __launch_bounds__(kThreads) stage_kernel(double2* values, const double2* twiddles, std::size_t n,
                                                         std::size_t h) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < n / 2; t += stride) {
    const std::size_t j = t & (h - 1);
    const std::size_t low = (t - j) * 2 + j;
    const double2 a = values[low];
    const double2 b = values[low + h];
    const double2 w = twiddles[h + j];
    values[low] = make_double2(__dadd_rn(a.x, b.x), __dadd_rn(a.y, b.y));
    const double dx = __dsub_rn(a.x, b.x), dy = __dsub_rn(a.y, b.y);
    const double cy = -w.y;  // conj(w)'s imaginary part
    values[low + h] = make_double2(__dsub_rn(__dmul_rn(dx, w.x), __dmul_rn(dy, cy)),
                                   __dadd_rn(__dmul_rn(dx, cy), __dmul_rn(dy, w.x)));
  }
}

// u_k = v_(bitrev k) / n, split into real parts then imaginary parts; the block's largest |word| into *largest.
__global__ void __launch_bounds__(kThreads) finish_kernel(const double2* values, double* out,
                                                          unsigned long long* largest, std::size_t n, int log_n,
                                                          double inverse_n) {
  __shared__ double block_largest[kThreads];
  double mine = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const std::size_t source =
        log_n == 0 ? 0 : static_cast<std::size_t>(__brevll(static_cast<unsigned long long>(k)) >> (64 - log_n));
    const double2 v = values[source];
    const double re = __dmul_rn(v.x, inverse_n), im = __dmul_rn(v.y, inverse_n);
    out[k] = re;
    out[n + k] = im;
    mine = fmax(mine, fmax(fabs(re), fabs(im)));
  }
  block_largest[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) block_largest[threadIdx.x] = fmax(block_largest[threadIdx.x], block_largest[threadIdx.x + half]);
    __syncthreads();
  }
  // Non-negative doubles order as their bit patterns.
  if (threadIdx.x == 0) atomicMax(largest, static_cast<unsigned long long>(__double_as_longlong(block_largest[0])));
}

unsigned blocks_for(std::size_t work) {
  return static_cast<unsigned>(std::clamp<std::size_t>((work + kThreads - 1) / kThreads, 1, 65535));
}

}  // namespace special_fft_kernels

void launch_special_ifft(const SpecialFftLaunch& args) {
  using namespace special_fft_kernels;
  if (args.size == 0) return;
  if ((args.size & (args.size - 1)) != 0) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // the backend checks first
  const auto stream = static_cast<cudaStream_t>(args.stream_handle);
  auto* values = reinterpret_cast<double2*>(args.values);
  const auto* twiddles = reinterpret_cast<const double2*>(args.twiddles);
  for (std::size_t h = args.size >> 1; h >= 1; h >>= 1) {
    stage_kernel<<<blocks_for(args.size / 2), kThreads, 0, stream>>>(values, twiddles, args.size, h);
    CERIUM_CUDA_CHECK(cudaGetLastError());
  }
  int log_n = 0;
  while ((std::size_t{1} << log_n) < args.size) ++log_n;
  finish_kernel<<<blocks_for(args.size), kThreads, 0, stream>>>(values, args.out, args.largest, args.size, log_n,
                                                                 args.inverse_size);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cerium::cuda::detail
