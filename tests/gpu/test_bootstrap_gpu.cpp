// Bootstrapping on the CUDA backend gives exactly the CPU bootstrapper's words (same keys, same input), full
// and sparse slots, at a toy size; and its precision meets the toy tests' bound (mean >= 20 bits, worst >= 16).
// At N = 2^16 (the 128-bit bootstrappable_n16 preset, full slots) the GPU bootstrap meets the same bound, once
// and over ten chained rounds of (multiply by fresh random signs, bootstrap).

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <utility>

#include "cerium/boot/cuda_bootstrap_graph.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#include "gpu_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

namespace {

using namespace evaluator_test;
using namespace cerium::boot;

// Mean and worst-slot precision in bits of decoded against want.
std::pair<double, double> mean_and_worst_bits(const Values& decoded, const Values& want) {
  double total = 0, worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(decoded[i] - want[i]);
    total += e;
    worst = std::max(worst, e);
  }
  return {-std::log2(total / static_cast<double>(want.size())), -std::log2(worst)};
}

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
  const auto [mean_bits, worst_bits] = mean_and_worst_bits(f.decrypt(got), x);
  INFO("slots " << cpu.slots() << ": mean " << mean_bits << " bits, worst " << worst_bits << " bits");
  CHECK(mean_bits >= 20);
  CHECK(worst_bits >= 16);
}

}  // namespace

TEST_CASE("CUDA bootstrapping equals the CPU bootstrapping word for word (N = 2^11)", "[gpu][bootstrap]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  SECTION("full slots, sparse-secret encapsulation") { check_bootstrap({}); }
  SECTION("64 slots") { check_bootstrap({.slots = 64}); }
}

TEST_CASE("A bootstrap captured as a CUDA graph gives the eager bootstrap's words", "[gpu][bootstrap][graph]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(presets::bootstrappable_toy(11), {.relinearization = false});
  CudaBootstrapper boot(f.context, BootstrapConfig{}, backend::CudaBackend(f.context));
  boot.set_keys(std::make_shared<const BootstrapKeys>(boot.generate_keys(f.keygen)));
  const auto& ev = boot.evaluator();
  auto rng = cerium_test::make_rng(29);
  const Ciphertext first = ev.upload(f.encrypt(random_real(rng, boot.slots()), 1, boot.slots()));
  const CudaBootstrapGraph graph(boot, first);
  // Fresh inputs of the captured shape: each replay equals the eager bootstrap of the same input.
  for (int i = 0; i < 2; ++i) {
    const Ciphertext input = ev.upload(f.encrypt(random_real(rng, boot.slots()), 1, boot.slots()));
    const Ciphertext want = ev.download(boot.bootstrap(input));
    const Ciphertext got = ev.download(graph.bootstrap(input));
    CHECK(got.level() == want.level());
    CHECK(got.scale() == want.scale());
    CHECK(same_words(got, want));
  }
  // Another shape (level 2) is refused by name.
  const Ciphertext other = ev.upload(f.encrypt(random_real(rng, boot.slots()), 2, boot.slots()));
  CHECK_THROWS_AS(graph.bootstrap(other), InvalidArgument);
}

TEST_CASE("CUDA bootstrapping at N = 2^16 keeps 20 / 16 bits over ten chained rounds", "[gpu][bootstrap][large]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(presets::bootstrappable_n16(), {.relinearization = false});
  CudaBootstrapper boot(f.context, BootstrapConfig{}, backend::CudaBackend(f.context));
  boot.set_keys(std::make_shared<const BootstrapKeys>(boot.generate_keys(f.keygen)));
  const auto& ev = boot.evaluator();
  auto rng = cerium_test::make_rng(23);
  Values want = random_real(rng, boot.slots());
  Ciphertext current = boot.bootstrap(ev.upload(f.encrypt(want, 1, boot.slots())));
  CHECK(current.level() >= 9);  // 8 levels left to the application after each bootstrap
  {
    const auto [mean_bits, worst_bits] = mean_and_worst_bits(f.decrypt(ev.download(current)), want);
    INFO("one bootstrap: mean " << mean_bits << " bits, worst " << worst_bits << " bits");
    CHECK(mean_bits >= 20);
    CHECK(worst_bits >= 16);
  }
  // Each round multiplies by fresh zero-mean signs of size 0.9 .. 1 (the message stays in [-1, 1]) and
  // bootstraps. Every bootstrap of the chain must meet the bound against the message it was given; against the
  // exact product the errors of the rounds add up (about sqrt(rounds) times one bootstrap's, so a bit and a half
  // by round 10), which the second bound allows.
  std::uniform_real_distribution<double> size(0.9, 1.0);
  std::bernoulli_distribution sign(0.5);
  for (int round = 1; round <= 10; ++round) {
    Values w(boot.slots());
    for (auto& v : w) v = sign(rng) ? size(rng) : -size(rng);
    for (std::size_t i = 0; i < w.size(); ++i) want[i] *= w[i];
    const Ciphertext cw = ev.upload(f.encrypt(w, current.level(), boot.slots(), current.scale()));
    const Ciphertext product = ev.rescale(ev.multiply(current, cw));
    const Values given = f.decrypt(ev.download(product));
    current = boot.bootstrap(product);
    const Values got = f.decrypt(ev.download(current));
    const auto [mean_bits, worst_bits] = mean_and_worst_bits(got, given);
    const auto [drift_mean_bits, drift_worst_bits] = mean_and_worst_bits(got, want);
    INFO("round " << round << ": this bootstrap mean " << mean_bits << " bits, worst " << worst_bits
                  << "; against the exact product mean " << drift_mean_bits << ", worst " << drift_worst_bits);
    CHECK(mean_bits >= 20);
    CHECK(worst_bits >= 16);
    CHECK(drift_mean_bits >= 18.5);
    CHECK(drift_worst_bits >= 16);
  }
}
