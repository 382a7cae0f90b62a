// The circuits on the CUDA backend give exactly the CPU's words: a BSGS linear transform (single and double
// hoisting, cached and encoded on demand, from values, a function and lifted plaintexts), the key-switch inner
// product and NTT-form ModDown that double hoisting is made of, and a Chebyshev polynomial evaluation, same keys,
// same inputs.

#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <utility>
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
    for (const auto hoisting : {circuits::Hoisting::single, circuits::Hoisting::doubled}) {
      for (const bool cache : {true, false}) {
        INFO("hoisting " << static_cast<int>(hoisting) << ", cache " << cache);
        const circuits::LinearTransformConfig config{.level = 8, .cache_plaintexts = cache, .hoisting = hoisting};
        const circuits::LinearTransform<> cpu_lt(f.evaluator, m, config);
        const circuits::LinearTransform<backend::CudaBackend> gpu_lt(gpu, m, config);
        CHECK(gpu_lt.hoisting() == hoisting);
        CHECK(gpu_lt.plaintext_bytes() == cpu_lt.plaintext_bytes());
        const Ciphertext want = cpu_lt.apply(f.evaluator, ct);
        CHECK(same_words(gpu.download(gpu_lt.apply(gpu, device_ct)), want));
      }
    }
  }
  SECTION("double hoisting: one giant, giants only, diagonals from a function and lifted plaintexts") {
    circuits::DiagonalMatrix m{slots, {}};
    for (const std::int64_t d : {-40, -3, 0, 1, 2, 17, 64, 100}) m.add_diagonal(d, random_complex(rng, slots));
    for (const std::int64_t stride : {std::int64_t{0}, std::int64_t{1}, static_cast<std::int64_t>(slots)}) {
      INFO("stride " << stride);
      const circuits::LinearTransformConfig config{.level = 6, .bsgs = {.stride = stride}};
      const circuits::LinearTransform<> cpu_lt(f.evaluator, m, config);
      const circuits::LinearTransform<backend::CudaBackend> gpu_lt(gpu, m, config);
      CHECK(same_words(gpu.download(gpu_lt.apply(gpu, device_ct)), cpu_lt.apply(f.evaluator, ct)));
    }
    const auto offsets = m.offsets();
    const auto encode = [&](std::int64_t giant, std::int64_t baby, const EncodeOptions& options) {
      const auto full = circuits::tile(circuits::bsgs_diagonal(m, giant, baby), options.slots);
      return f.encoder.encode(std::span<const Complex>(full), options);
    };
    const circuits::LinearTransformConfig config{.level = 6, .slots = slots};
    const circuits::LinearTransform<> cpu_lt(f.evaluator, offsets, encode, config);
    const circuits::LinearTransform<backend::CudaBackend> gpu_lt(gpu, offsets, encode, config);
    const Ciphertext want = cpu_lt.apply(f.evaluator, ct);
    CHECK(same_words(gpu.download(gpu_lt.apply(gpu, device_ct)), want));
    // Plaintexts already on the device, lifted to Q_l u P (downloaded for the CRT, placed back).
    std::map<std::pair<std::int64_t, std::int64_t>, Plaintext> diagonals;
    for (const auto& [giant, babies] : cpu_lt.plan().giants)
      for (const auto baby : babies)
        diagonals.emplace(std::pair{giant, baby},
                          gpu.upload(encode(giant, baby, {.level = 6, .scale = cpu_lt.config().plaintext_scale,
                                                          .slots = slots})));
    const circuits::LinearTransform<backend::CudaBackend> lifted(gpu, cpu_lt.plan(), std::move(diagonals),
                                                                 {.hoisting = circuits::Hoisting::doubled});
    CHECK(same_words(gpu.download(lifted.apply(gpu, device_ct)), want));
  }
  SECTION("key-switch inner product and NTT-form ModDown: the CPU's words") {
    const int level = 7;
    const Ciphertext low = f.evaluator.level_down(ct, level);
    const auto& cpu_backend = f.evaluator.backend();
    const auto& gpu_backend = gpu.backend();
    const auto digits = cpu_backend.mod_up(*f.context, low.part(1), level);
    const auto digits_gpu = gpu_backend.mod_up(*f.context, gpu.upload(low).part(1), level);
    for (const std::int64_t step : {1, 5, -3}) {
      INFO("step " << step);
      const auto cpu_key = f.evaluator.rotation_key(step, slots);
      const auto gpu_key = gpu.rotation_key(step, slots);
      REQUIRE(cpu_key.element == gpu_key.element);
      const ring::Automorphism& sigma = f.context->automorphism(cpu_key.element);
      const auto want = cpu_backend.key_switch_inner_product(*f.context, digits, *cpu_key.key, &sigma);
      const auto got = gpu_backend.key_switch_inner_product(*f.context, digits_gpu, *gpu_key.key, &sigma);
      CHECK(gpu_backend.download(got[0]) == want[0]);
      CHECK(gpu_backend.download(got[1]) == want[1]);
      const auto& down = f.context->mod_down(level);
      const ring::RnsPoly lowered = gpu_backend.mod_down(down, got[0]);
      CHECK(lowered.form() == ring::PolyForm::ntt);
      CHECK(gpu_backend.download(lowered) == cpu_backend.mod_down(down, want[0]));
      CHECK(gpu_backend.download(lowered) == cpu_backend.key_switch_apply(*f.context, digits, *cpu_key.key, &sigma)[0]);
    }
  }
  SECTION("Chebyshev polynomial") {
    const circuits::PolynomialEvaluator p(circuits::Polynomial::chebyshev_interpolant(
        [](long double v) { return std::tanh(2 * v); }, 31, -1.5, 1.5));
    const Ciphertext want = p.evaluate(f.evaluator, ct);
    CHECK(same_words(gpu.download(p.evaluate(gpu, device_ct)), want));
  }
}
