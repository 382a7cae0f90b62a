// CKKS bootstrapping on the CPU backend: toy parameters (presets::bootstrappable_toy(12), insecure, full slots)
// and N = 2^16 (presets::bootstrappable_n16, 2^15 slots, sparse-secret encapsulation; minutes of set-up and tens
// of seconds per bootstrap on one core). Counters: N, slots, output level, key MiB, rotation keys and the
// precision of the last run (mean and worst-slot bits, real inputs uniform in [-1, 1]).
// BM_bootstrap_toy_single_hoisting runs the DFTs with single hoisting, to compare with the default (double).
//
// Each size's set-up (keys, diagonals) is built once, when its benchmark first runs: filter with
// --benchmark_filter=toy to skip N = 2^16.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"

namespace {

using namespace cerium::ckks;
using namespace cerium::boot;

struct BootSetup {
  ContextPtr context;
  KeyGenerator keygen;
  Encoder encoder;
  Encryptor encryptor;
  Decryptor decryptor;
  Bootstrapper boot;
  std::shared_ptr<const BootstrapKeys> keys;
  std::vector<double> values;
  Ciphertext input;

  BootSetup(const CkksConfig& params, const BootstrapConfig& config)
      : context(Context::create(params)),
        keygen(context),
        encoder(context),
        encryptor(keygen.public_key()),
        decryptor(keygen.secret_key()),
        boot(context, config),
        keys(std::make_shared<const BootstrapKeys>(boot.generate_keys(keygen))),
        values(boot.slots()) {
    boot.set_keys(keys);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (double& v : values) v = uniform(rng);
    input = encryptor.encrypt(encoder.encode(values, EncodeOptions{.level = 1, .slots = boot.slots()}));
  }
};

void run(benchmark::State& state, BootSetup& s) {
  Ciphertext out;
  for (auto _ : state) {
    out = s.boot.bootstrap(s.input);
    benchmark::DoNotOptimize(out);
  }
  const auto got = s.encoder.decode(s.decryptor.decrypt(out));
  double total = 0, worst = 0;
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    const double e = std::abs(got[i] - s.values[i]);
    total += e;
    worst = std::max(worst, e);
  }
  state.counters["N"] = static_cast<double>(s.context->ring_degree());
  state.counters["slots"] = static_cast<double>(s.boot.slots());
  state.counters["output_level"] = out.level();
  state.counters["key_MiB"] = static_cast<double>(s.keys->memory_bytes()) / (1024.0 * 1024.0);
  state.counters["rotation_keys"] = static_cast<double>(s.boot.rotation_steps().size() + 1);
  state.counters["mean_bits"] = -std::log2(total / static_cast<double>(s.values.size()));
  state.counters["worst_bits"] = -std::log2(worst);
}

void BM_bootstrap_toy(benchmark::State& state) {
  static BootSetup s(presets::bootstrappable_toy(12), BootstrapConfig{});
  run(state, s);
}
BENCHMARK(BM_bootstrap_toy)->Unit(benchmark::kMillisecond);

// The same with single-hoisted DFTs (a ModDown per rotation), against the default double hoisting.
void BM_bootstrap_toy_single_hoisting(benchmark::State& state) {
  static BootSetup s(presets::bootstrappable_toy(12), [] {
    BootstrapConfig config;
    config.transform_hoisting = cerium::circuits::Hoisting::single;
    return config;
  }());
  run(state, s);
}
BENCHMARK(BM_bootstrap_toy_single_hoisting)->Unit(benchmark::kMillisecond);

void BM_bootstrap_toy_sparse(benchmark::State& state) {
  static BootSetup s(presets::bootstrappable_toy(12), BootstrapConfig{.slots = 64});
  run(state, s);
}
BENCHMARK(BM_bootstrap_toy_sparse)->Unit(benchmark::kMillisecond);

void BM_bootstrap_n16(benchmark::State& state) {
  static BootSetup s(presets::bootstrappable_n16(), BootstrapConfig{.cache_plaintexts = false});
  run(state, s);
}
BENCHMARK(BM_bootstrap_n16)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
