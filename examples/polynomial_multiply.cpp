// Multiplies two random polynomials of Z_Q[X]/(X^N + 1) held in RNS form (N = 2^14, 16 primes of 30 bits) with the
// negacyclic NTT: on the CPU, and on the GPU when Cerium was built with CUDA and a device is present. The GPU's
// words must equal the CPU's exactly.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "cerium/math/primes.hpp"
#include "cerium/ring/rns_poly.hpp"
#if defined(CERIUM_HAS_CUDA)
#include "cerium/backend/cuda/device.hpp"
#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/ntt.hpp"
#include "cerium/backend/cuda/timer.hpp"
#endif

namespace {

using Clock = std::chrono::steady_clock;
using cerium::ring::RnsPoly;

RnsPoly random_poly(const cerium::ring::RnsBasisPtr& basis, std::mt19937_64& rng) {
  RnsPoly poly(basis);
  for (std::size_t i = 0; i < poly.limb_count(); ++i) {
    std::uniform_int_distribution<std::uint32_t> dist(0, basis->prime(i) - 1);
    for (auto& x : poly.limb(i)) x = dist(rng);
  }
  return poly;
}

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

#if defined(CERIUM_HAS_CUDA)
// Packs limb-major words without the limb padding, as the GPU plan expects (limb i at i N).
std::vector<std::uint32_t> packed_words(const RnsPoly& poly) {
  std::vector<std::uint32_t> words;
  for (std::size_t i = 0; i < poly.limb_count(); ++i) words.insert(words.end(), poly.limb(i).begin(), poly.limb(i).end());
  return words;
}

bool multiply_on_gpu(const RnsPoly& a, const RnsPoly& b, const RnsPoly& cpu_product) {
  const auto info = cerium::cuda::device_info(0);
  const std::size_t n = a.n(), limbs = a.limb_count();
  std::vector<cerium::math::NttTables> tables;
  for (std::size_t i = 0; i < limbs; ++i) tables.push_back(a.basis().ntt(i));
  cerium::cuda::NttPlan plan(tables);
  cerium::cuda::DeviceBuffer da(n * limbs), db(n * limbs);
  da.upload(packed_words(a));
  db.upload(packed_words(b));

  cerium::cuda::EventTimer timer(da.stream());
  timer.start();
  plan.forward(da, limbs);
  plan.forward(db, limbs);
  timer.stop();
  const double forward_ms = timer.elapsed_ms();

  // Pointwise products on the host keep this example to the NTT kernel; the CKKS evaluator does them on the GPU.
  auto fa = da.download();
  const auto fb = db.download();
  for (std::size_t i = 0; i < limbs; ++i) {
    const std::uint64_t q = a.basis().prime(i);
    for (std::size_t j = 0; j < n; ++j) fa[i * n + j] = static_cast<std::uint32_t>(std::uint64_t{fa[i * n + j]} * fb[i * n + j] % q);
  }
  da.upload(fa);
  timer.start();
  plan.inverse(da, limbs);
  timer.stop();
  const double inverse_ms = timer.elapsed_ms();
  const bool equal = da.download() == packed_words(cpu_product);
  std::printf("GPU (%s): 2 forward NTTs %.3f ms, 1 inverse NTT %.3f ms; words equal to the CPU's: %s\n",
              info.name.c_str(), forward_ms, inverse_ms, equal ? "yes" : "NO");
  return equal;
}
#endif

}  // namespace

int main() {
  const std::size_t n = std::size_t{1} << 14;
  const std::size_t limbs = 16;
  const auto primes = cerium::math::generate_ntt_primes({.bits = 30, .count = limbs, .ring_degree = n});
  const auto basis = cerium::ring::make_basis(n, primes);
  std::mt19937_64 rng(std::random_device{}());
  const RnsPoly a = random_poly(basis, rng), b = random_poly(basis, rng);
  std::printf("Cerium: product of two random polynomials, N = %zu, %zu primes of 30 bits\n", n, limbs);

  auto start = Clock::now();
  RnsPoly fa = a.clone(), fb = b.clone();
  fa.to_ntt();
  fb.to_ntt();
  RnsPoly product = fa * fb;
  product.to_coeff();
  std::printf("CPU: NTT, pointwise product, inverse NTT in %.2f ms\n", milliseconds_since(start));

  // Spot check against the definition: coefficient k of a b is sum_{i+j=k} a_i b_j - sum_{i+j=k+N} a_i b_j.
  bool spot_ok = true;
  for (std::size_t k : {std::size_t{0}, n / 3, n - 1}) {
    const std::uint64_t q = basis->prime(0);
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = (k + n - i) % n;
      const std::uint64_t term = std::uint64_t{a.limb(0)[i]} * b.limb(0)[j] % q;
      sum = (i <= k) ? (sum + term) % q : (sum + q - term) % q;
    }
    spot_ok = spot_ok && sum == product.limb(0)[k];
  }
  std::printf("CPU: schoolbook spot check of 3 coefficients: %s\n", spot_ok ? "ok" : "MISMATCH");
  bool ok = spot_ok;

#if defined(CERIUM_HAS_CUDA)
  if (cerium::cuda::has_cuda_device()) {
    ok = multiply_on_gpu(a, b, product) && ok;
  } else {
    std::printf("GPU: built with CUDA but no device found; CPU only\n");
  }
#else
  std::printf("GPU: this build has no CUDA backend (configure with CERIUM_CUDA=ON on a machine with nvcc)\n");
#endif
  return ok ? 0 : 1;
}
