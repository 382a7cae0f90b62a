// The circuits on the CUDA backend give exactly the CPU's words: a BSGS linear transform (cached and encoded on
// demand) and a Chebyshev polynomial evaluation, same keys, same inputs.

#include <cmath>
#include <cstdint>
#include <vector>

#include "cerium/circuits/linear_transform.hpp"
#include "cerium/circuits/polynomial_evaluator.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "gpu_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;
namespace circuits = cerium::circuits;

TEST_CASE("CUDA circuits equal the CPU circuits word for word", "[gpu][circuits]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  constexpr std::size_t slots = 256;
  std::vector<std::int64_t> steps;
  for (std::int64_t s = 1; s < static_cast<std::int64_t>(slots); ++s) steps.push_back(s);
  Fixture f(toy(13, 9, 2, 3), {.relinearization = true, .rotations = steps});
  CudaEvaluator gpu(f.context, backend::CudaBackend(f.context));
  gpu.set_relinearization_key(f.evaluator.relinearization_key());
  gpu.set_galois_keys(f.evaluator.galois_keys());
  auto rng = cerium_test::make_rng(931);
  const Values x = random_real(rng, slots);
  const Ciphertext ct = f.encrypt(x, -1, slots);
  const Ciphertext device_ct = gpu.upload(ct);

  SECTION("linear transform") {
    std::vector<std::vector<Complex>> rows(slots);
    for (auto& row : rows) row = random_complex(rng, slots);
    const auto m = circuits::DiagonalMatrix::from_dense(rows);
    for (const bool cache : {true, false}) {
      const circuits::LinearTransform<> cpu_lt(f.evaluator, m, {.level = 8, .cache_plaintexts = cache});
      const circuits::LinearTransform<backend::CudaBackend> gpu_lt(gpu, m, {.level = 8, .cache_plaintexts = cache});
      const Ciphertext want = cpu_lt.apply(f.evaluator, ct);
      CHECK(same_words(gpu.download(gpu_lt.apply(gpu, device_ct)), want));
    }
  }
  SECTION("Chebyshev polynomial") {
    const circuits::PolynomialEvaluator p(circuits::Polynomial::chebyshev_interpolant(
        [](long double v) { return std::tanh(2 * v); }, 31, -1.5, 1.5));
    const Ciphertext want = p.evaluate(f.evaluator, ct);
    CHECK(same_words(gpu.download(p.evaluate(gpu, device_ct)), want));
  }
}
