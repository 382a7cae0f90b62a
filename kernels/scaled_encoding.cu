// Encoding's second half on the device: unscaled coefficients (a slot vector's special inverse FFT, kept in
// device memory) times the scale, rounded and reduced modulo each prime, at every gap-th coefficient. Why the GPU
// needs its own loop: the host encoder does this per plaintext in host memory, so a weight kept unscaled on the
// device (4 words a coefficient instead of 1 a limb) would otherwise cross PCIe encoded at every use.
//
// The words equal the host encoder's (src/ckks/exact_integer.cpp): the product is one correctly rounded multiply,
// round() is half away from zero as std::round, and the residue of the exact integer is the same number whatever
// the arithmetic that reaches it; integers of 2^64 and more are their 53-bit mantissa times a power of two.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/math/ntt_butterfly.hpp"

namespace cerium::cuda::detail {
namespace scaled_encoding_kernels {

constexpr int kThreads = 256;

// round(x) mod q for a finite x, exactly.
__device__ std::uint32_t rounded_residue(double x, std::uint32_t q) {
  const double rounded = round(x);
  const double magnitude = fabs(rounded);
  std::uint64_t r = 0;
  if (magnitude < 18446744073709551616.0) {
    r = static_cast<std::uint64_t>(magnitude) % q;
  } else {
    int exponent = 0;
    const double mantissa = frexp(magnitude, &exponent);  // in [1/2, 1)
    r = static_cast<std::uint64_t>(ldexp(mantissa, 53)) % q;
    std::uint64_t power = 2 % q;  // 2^(exponent - 53) mod q by squaring (exponent <= 1024)
    for (int e = exponent - 53; e > 0; e >>= 1) {
      if (e & 1) r = r * power % q;
      power = power * power % q;
    }
  }
  return rounded < 0 && r != 0 ? static_cast<std::uint32_t>(q - r) : static_cast<std::uint32_t>(r);
}

// One thread a word of the terms' limbs (term-major, then limb, then coefficient).
__global__ void __launch_bounds__(kThreads) encode_kernel(ScaledEncodingLaunch args) {
  const std::size_t n_mask = (std::size_t{1} << args.log_degree) - 1;
  const std::size_t poly_words = args.limbs << args.log_degree;
  const std::size_t total = args.terms * poly_words;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::size_t term = i / poly_words, within = i - term * poly_words;
    const std::size_t j = within & n_mask;
    const int log_gap = args.log_gap[term];
    std::uint32_t word = 0;
    if ((j & ((std::size_t{1} << log_gap) - 1)) == 0) {
      const std::uint32_t q = args.moduli[within >> args.log_degree].value;
      word = rounded_residue(__dmul_rn(args.coefficients[term][j >> log_gap], args.scale), q);
    }
    args.out[i] = word;
  }
}

constexpr int kTransformThreads = 512;

// One block a (limb, term): the term's N / gap words of the limb encoded into shared memory, the forward NTT's first
// log2(N / gap) stages on them (math::ct_butterfly with the limb's own twiddles w[m + i], as the CPU's
// forward_stages), each value reduced below q and written to its gap consecutive output words.
__global__ void __launch_bounds__(kTransformThreads) encode_transformed_kernel(ScaledEncodingLaunch args) {
  extern __shared__ std::uint32_t small[];
  const std::size_t limb = blockIdx.x, term = blockIdx.y;
  const int log_gap = args.log_gap[term];
  const int log_m = args.log_degree - log_gap;
  const std::size_t m = std::size_t{1} << log_m;
  const std::uint32_t q = args.moduli[limb].value;
  const double* coefficients = args.coefficients[term];
  for (std::size_t k = threadIdx.x; k < m; k += blockDim.x) {
    small[k] = rounded_residue(__dmul_rn(coefficients[k], args.scale), q);
  }
  __syncthreads();
  const uint2* twiddles = reinterpret_cast<const uint2*>(args.twiddles) + (limb << args.log_degree);
  for (int stage = 0; stage < log_m; ++stage) {
    // 2^stage groups of butterflies `half` apart; butterfly b is pair j of group b / half.
    const int log_half = log_m - 1 - stage;
    for (std::size_t b = threadIdx.x; b < m / 2; b += blockDim.x) {
      const std::size_t group = b >> log_half, j = b & ((std::size_t{1} << log_half) - 1);
      const std::size_t x = (group << (log_half + 1)) + j;
      const uint2 w = twiddles[(std::size_t{1} << stage) + group];
      math::ct_butterfly(small[x], small[x + (std::size_t{1} << log_half)], w.x, w.y, q);
    }
    __syncthreads();
  }
  if (args.compact) {  // the m distinct words alone (every term's gap is the same: the launcher checks)
    std::uint32_t* out = args.out + ((term * args.limbs + limb) << log_m);
    for (std::size_t k = threadIdx.x; k < m; k += blockDim.x) out[k] = math::csub(small[k], q);
    return;
  }
  // Four words a thread (gap >= 4: one value each), written as one 16-byte store.
  uint4* out = reinterpret_cast<uint4*>(args.out + ((term * args.limbs + limb) << args.log_degree));
  const std::size_t quads = (std::size_t{1} << args.log_degree) / 4;
  for (std::size_t i = threadIdx.x; i < quads; i += blockDim.x) {
    const std::uint32_t word = math::csub(small[(4 * i) >> log_gap], q);
    out[i] = make_uint4(word, word, word, word);
  }
}

}  // namespace scaled_encoding_kernels

void launch_scaled_encoding(const ScaledEncodingLaunch& args) {
  using namespace scaled_encoding_kernels;
  if (args.limbs == 0 || args.terms == 0) return;
  if (args.terms > scaled_encoding_max_terms) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // the backend checks first
  for (std::size_t t = 0; t < args.terms; ++t) {
    if (args.log_gap[t] > args.log_degree) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);
  }
  const std::size_t total = args.terms * (args.limbs << args.log_degree);
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((total + kThreads - 1) / kThreads, 65535 * 8));
  encode_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(args.stream_handle)>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

void launch_scaled_encoding_transformed(const ScaledEncodingLaunch& args) {
  using namespace scaled_encoding_kernels;
  if (args.limbs == 0 || args.terms == 0) return;
  if (args.terms > scaled_encoding_max_terms || args.twiddles == nullptr || args.limbs > 0x7fffffff)
    CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // the backend checks first
  int largest_log_m = 0;
  for (std::size_t t = 0; t < args.terms; ++t) {
    if (!scaled_encoding_transforms(args.log_degree, args.log_gap[t]) ||
        (args.compact && args.log_gap[t] != args.log_gap[0]))
      CERIUM_CUDA_CHECK(cudaErrorInvalidValue);
    largest_log_m = std::max(largest_log_m, args.log_degree - args.log_gap[t]);
  }
  const dim3 grid(static_cast<unsigned>(args.limbs), static_cast<unsigned>(args.terms));
  const std::size_t shared = sizeof(std::uint32_t) << largest_log_m;
  encode_transformed_kernel<<<grid, kTransformThreads, shared, static_cast<cudaStream_t>(args.stream_handle)>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cerium::cuda::detail
