// Bootstrapping on the CUDA backend gives exactly the CPU bootstrapper's words (same keys, same input), full
// and sparse slots, at a toy size; and its precision meets the toy tests' bound (mean >= 20 bits, worst >= 16).
// At N = 2^16 (the 128-bit bootstrappable_n16 preset, full slots) the GPU bootstrap meets the same bound, once
// and over ten chained rounds of (multiply by fresh random signs, bootstrap). A hidden soak test ("[soak]", run by
// name) chains 1,000 such rounds and logs precision and device memory every 50.

#include <algorithm>
#include <cstdio>
#include <deque>
#include <future>
#include <cmath>
#include <memory>
#include <random>
#include <utility>

#include "cerium/backend/cuda/memory.hpp"
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

// With narrow_levels, the application's levels narrow (the output on the ~2^30 chain) and the input at 2^40, so
// that the bootstrap's own precision shows (test_bootstrap_narrow.cpp: 21.4 / 18.7 bits on the CPU).
void check_bootstrap(const BootstrapConfig& config, int narrow_levels = 0) {
  CkksConfig params = presets::bootstrappable_toy(11, 18 + narrow_levels);
  params.narrow_levels = narrow_levels;
  Fixture f(params, {.relinearization = true});
  Bootstrapper cpu(f.context, config);
  CudaBootstrapper gpu(f.context, config, backend::CudaBackend(f.context));
  const auto keys = std::make_shared<const BootstrapKeys>(cpu.generate_keys(f.keygen));
  cpu.set_keys(keys);
  gpu.set_keys(keys);
  auto rng = cerium_test::make_rng(17);
  const Values x = random_real(rng, cpu.slots());
  const Ciphertext ct = f.encrypt(x, 1, cpu.slots(), narrow_levels > 0 ? std::ldexp(1.0, 40) : 0.0);
  const Ciphertext want = cpu.bootstrap(ct);
  const Ciphertext got = gpu.evaluator().download(gpu.bootstrap(gpu.evaluator().upload(ct)));
  CHECK(got.level() == want.level());
  CHECK(got.scale() == want.scale());
  CHECK(same_words(got, want));
  const auto [mean_bits, worst_bits] = mean_and_worst_bits(f.decrypt(got), x);
  INFO("slots " << cpu.slots() << ": mean " << mean_bits << " bits, worst " << worst_bits << " bits");
  CHECK(mean_bits >= 20);
  CHECK(worst_bits >= (narrow_levels > 0 ? 17 : 16));
  // A value read 2^6 larger and shrunk back in EvalMod (graph::bootstrap_shift's negative shifts): the same words.
  Ciphertext raised = ct.clone();
  raised.set_scale(std::ldexp(ct.scale(), -6));
  CHECK(same_words(gpu.evaluator().download(gpu.bootstrap(gpu.evaluator().upload(raised), -6)),
                   cpu.bootstrap(raised, -6)));
  // Two real ciphertexts bootstrapped as one (bootstrap_pair): the CPU's words for both.
  Values y = random_real(rng, cpu.slots()), x7 = x;
  for (auto& v : y) v *= 0.7;
  for (auto& v : x7) v *= 0.7;
  const double scale = narrow_levels > 0 ? std::ldexp(1.0, 40) : 0.0;
  const Ciphertext cx = f.encrypt(x7, 1, cpu.slots(), scale), cy = f.encrypt(y, 1, cpu.slots(), scale);
  const auto pair_want = cpu.bootstrap_pair(cx, cy);
  const auto pair_got = gpu.bootstrap_pair(gpu.evaluator().upload(cx), gpu.evaluator().upload(cy));
  for (std::size_t k = 0; k < 2; ++k) CHECK(same_words(gpu.evaluator().download(pair_got[k]), pair_want[k]));
}

}  // namespace

TEST_CASE("CUDA bootstrapping equals the CPU bootstrapping word for word (N = 2^11)", "[gpu][bootstrap]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  SECTION("full slots, sparse-secret encapsulation") { check_bootstrap({}); }
  SECTION("64 slots") { check_bootstrap({.slots = 64}); }
  SECTION("64 slots, halves joined: one EvalMod") { check_bootstrap({.slots = 64, .join_halves = true}); }
  SECTION("narrow levels: the output on the ~2^30 chain") { check_bootstrap({}, 6); }
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

TEST_CASE("Soak: 1,000 chained bootstraps at N = 2^16 keep their precision and their memory", "[.][gpu][soak]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  constexpr int kRounds = 1000, kEvery = 50;
  Fixture f(presets::bootstrappable_n16(), {.relinearization = false});
  CudaBootstrapper boot(f.context, BootstrapConfig{}, backend::CudaBackend(f.context));
  boot.set_keys(std::make_shared<const BootstrapKeys>(boot.generate_keys(f.keygen)));
  const auto& ev = boot.evaluator();
  const std::size_t slots = boot.slots();
  auto rng = cerium_test::make_rng(2603);
  Values want = random_real(rng, slots);
  Ciphertext current = boot.bootstrap(ev.upload(f.encrypt(want, 1, slots)));
  // Each round multiplies by a fresh encryption of random signs (the message keeps its size, so a thousand rounds
  // neither vanish nor overflow) and bootstraps. The encryptions are made on host threads a few rounds ahead, each
  // with its own encryptor and seed.
  const int level = current.level();
  const double scale = current.scale();
  struct Signs {
    Values values;
    Ciphertext encrypted;
  };
  const auto make_signs = [&](std::uint64_t seed) {
    std::mt19937_64 local(seed);
    std::bernoulli_distribution sign(0.5);
    Signs s{Values(slots), {}};
    for (auto& v : s.values) v = sign(local) ? 1.0 : -1.0;
    const cerium::ckks::Encryptor encryptor(f.keygen.public_key());
    s.encrypted = encryptor.encrypt(f.encoder.encode(s.values, {.level = level, .scale = scale, .slots = slots}));
    return s;
  };
  std::deque<std::future<Signs>> ahead;
  const auto top_up = [&] {
    while (ahead.size() < 8) ahead.push_back(std::async(std::launch::async, make_signs, rng()));
  };
  top_up();
  std::size_t in_use_first = 0, reserved_first = 0;
  double worst_round_bits = 100, worst_drift_mean = 100;
  for (int round = 1; round <= kRounds; ++round) {
    Signs signs = ahead.front().get();
    ahead.pop_front();
    top_up();
    for (std::size_t i = 0; i < slots; ++i) want[i] *= signs.values[i];
    const Ciphertext product = ev.rescale(ev.multiply(current, ev.upload(signs.encrypted)));
    const bool logged = round % kEvery == 0 || round == 1;
    const Values given = logged ? f.decrypt(ev.download(product)) : Values{};
    current = boot.bootstrap(product);
    if (!logged) continue;
    const Values got = f.decrypt(ev.download(current));
    const auto [mean_bits, worst_bits] = mean_and_worst_bits(got, given);
    const auto [drift_mean, drift_worst] = mean_and_worst_bits(got, want);
    const cuda::MemoryStats memory = cuda::memory_stats();
    if (round == kEvery) {
      in_use_first = memory.in_use;
      reserved_first = memory.reserved;
    }
    std::printf("soak round %4d: this bootstrap %.2f / %.2f bits (mean / worst), against the exact product %.2f / "
                "%.2f; device memory in use %.3f GiB, pool %.3f GiB\n",
                round, mean_bits, worst_bits, drift_mean, drift_worst, memory.in_use / 1073741824.0,
                memory.reserved / 1073741824.0);
    std::fflush(stdout);
    INFO("round " << round);
    CHECK(mean_bits >= 20);
    CHECK(worst_bits >= 16);
    // Independent errors add up: about half a bit lost each time the rounds double, from one bootstrap's bound.
    const double lost = 0.5 * std::log2(static_cast<double>(round));
    CHECK(drift_mean >= 20 - lost - 1);
    CHECK(drift_worst >= 16 - lost - 1);
    if (round >= kEvery) {
      CHECK(memory.in_use == in_use_first);                   // the same objects alive every round: no leak
      CHECK(memory.reserved <= reserved_first + (reserved_first >> 4));  // the pool steady
    }
    worst_round_bits = std::min(worst_round_bits, worst_bits);
    worst_drift_mean = std::min(worst_drift_mean, drift_mean);
  }
  std::printf("soak: %d chained bootstraps; worst single-bootstrap worst-slot precision %.2f bits; mean drift "
              "against the exact product at its lowest %.2f bits\n",
              kRounds, worst_round_bits, worst_drift_mean);
}
