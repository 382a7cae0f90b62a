// Bootstrapping on the CUDA backend gives exactly the CPU bootstrapper's words (same keys, same input), full
// and sparse slots, at a toy size; and its precision meets the toy tests' bound (mean >= 20 bits, worst >= 16).

#include <memory>

#include "cerium/backend/cuda_bootstrapper.hpp"
#include "gpu_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

namespace {

using namespace evaluator_test;

void check_bootstrap(const BootstrapConfig& config) {
  Fixture f(presets::bootstrappable_toy(11), {.relinearization = true});
  Bootstrapper cpu(f.context, config);
  CudaBootstrapper gpu(f.context, config, backend::CudaBackend(f.context));
  const auto keys = std::make_shared<const BootstrapKeys>(cpu.generate_keys(f.keygen));
  cpu.set_keys(keys);
  gpu.set_keys(keys);
  auto rng = cerium_test::make_rng(17);
  const Values x = random_real(rng, cpu.slots());
  const Ciphertext ct = f.encrypt(x, 1, cpu.slots());
  const Ciphertext want = cpu.bootstrap(ct);
  const Ciphertext got = gpu.evaluator().download(gpu.bootstrap(gpu.evaluator().upload(ct)));
  CHECK(got.level() == want.level());
  CHECK(got.scale() == want.scale());
  CHECK(same_words(got, want));
  const Values decoded = f.decrypt(got);
  double total = 0, worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = std::abs(decoded[i] - x[i]);
    total += e;
    worst = std::max(worst, e);
  }
  const double mean_bits = -std::log2(total / static_cast<double>(x.size()));
  INFO("slots " << cpu.slots() << ": mean " << mean_bits << " bits, worst " << -std::log2(worst) << " bits");
  CHECK(mean_bits >= 20);
  CHECK(-std::log2(worst) >= 16);
}

}  // namespace

TEST_CASE("CUDA bootstrapping equals the CPU bootstrapping word for word (N = 2^11)", "[gpu][bootstrap]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  SECTION("full slots, sparse-secret encapsulation") { check_bootstrap({}); }
  SECTION("64 slots") { check_bootstrap({.slots = 64}); }
}
