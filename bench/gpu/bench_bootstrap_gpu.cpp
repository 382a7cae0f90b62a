// Bootstrapping on the H200 with the bootstrappable_n16 preset (N = 2^16, 2^15 slots, log2(QP) 1741): median of
// 20 bootstraps after warm-up, timed with CUDA events. Counters: us, precision (mean and worst slot, bits, real
// inputs uniform in [-1, 1]), levels left to the application, key and diagonal memory, and floor_ratio = time /
// (key bytes / copy bandwidth): the floor set by reading every key once. The argument picks the DFTs' hoisting
// (0: single, one ModDown per rotation; 1: double, one per giant step and one per transform), so that one run
// measures both (counter double_hoisting; ms_coeff_to_slot and ms_slot_to_coeff show the difference).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "cerium/boot/cuda_bootstrap_graph.hpp"
#include "cerium/backend/cuda/memory.hpp"
#include "cerium/backend/cuda/timer.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "gpu_bench_support.hpp"

namespace {

using namespace cerium;
using namespace cerium::ckks;
using namespace cerium::boot;

void BM_bootstrap_n16_gpu(benchmark::State& state) {
  const auto context = Context::create(presets::bootstrappable_n16());
  KeyGenerator keygen(context);
  BootstrapConfig config;
  config.transform_hoisting = state.range(0) != 0 ? circuits::Hoisting::doubled : circuits::Hoisting::single;
  CudaBootstrapper boot(context, config, backend::CudaBackend(context));
  const auto keys = std::make_shared<const BootstrapKeys>(boot.generate_keys(keygen));
  boot.set_keys(keys);
  Encoder encoder(context);
  Encryptor encryptor(keygen.public_key());
  Decryptor decryptor(keygen.secret_key());
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> x(boot.slots());
  for (auto& v : x) v = dist(rng);
  const Ciphertext input =
      boot.evaluator().upload(encryptor.encrypt(encoder.encode(x, EncodeOptions{.level = 1, .slots = boot.slots()})));
  const auto& stream = cuda::work_stream();
  cuda::EventTimer timer(stream);
  Ciphertext out = boot.bootstrap(input);  // warm-up: plans, pool
  stream.synchronize();
  std::vector<double> seconds, host_seconds;
  for (auto _ : state) {
    for (int i = 0; i < 20; ++i) {
      timer.start();
      const auto t0 = std::chrono::steady_clock::now();
      out = boot.bootstrap(input);
      // The host's time to issue the work: when it nears the device time, the GPU waits on the host.
      host_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      timer.stop();
      seconds.push_back(timer.elapsed_ms() / 1e3);
    }
    state.SetIterationTime(cerium_bench::median(seconds));
  }
  // Precision (mean and worst slot, bits) of a bootstrapped ciphertext against the expected values.
  const auto precision = [&](const Ciphertext& ct, const std::vector<double>& want) {
    const auto decoded = encoder.decode_real(decryptor.decrypt(boot.evaluator().download(ct)));
    double total = 0, worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double e = std::abs(decoded[i] - want[i]);
      total += e;
      worst = std::max(worst, e);
    }
    return std::pair{-std::log2(total / static_cast<double>(want.size())), -std::log2(worst)};
  };
  const auto [mean_bits, worst_bits] = precision(out, x);
  // Ten chained rounds of (multiply by a fresh encryption of random signs of size 0.9..1, bootstrap): the lowest
  // precision over the rounds.
  double chain_mean = mean_bits, chain_worst = worst_bits;
  {
    std::vector<double> want = x;
    std::uniform_real_distribution<double> size(0.9, 1.0);
    std::bernoulli_distribution sign(0.5);
    Ciphertext current = out.clone();
    for (int round = 1; round <= 10; ++round) {
      std::vector<double> w(boot.slots());
      for (auto& v : w) v = sign(rng) ? size(rng) : -size(rng);
      for (std::size_t i = 0; i < w.size(); ++i) want[i] *= w[i];
      const Ciphertext cw = boot.evaluator().upload(encryptor.encrypt(encoder.encode(
          w, EncodeOptions{.level = current.level(), .scale = current.scale(), .slots = boot.slots()})));
      current = boot.bootstrap(boot.evaluator().rescale(boot.evaluator().multiply(current, cw)));
      const auto [m, w_bits] = precision(current, want);
      chain_mean = std::min(chain_mean, m);
      chain_worst = std::min(chain_worst, w_bits);
    }
  }
  state.counters["chain10_min_mean_bits"] = chain_mean;
  state.counters["chain10_min_worst_bits"] = chain_worst;
  // Per-stage breakdown: each public stage timed on its own (median of 5), on the intermediate results of one
  // bootstrap; their sum is close to the whole (the whole also pays the stages' hand-offs).
  const auto stage = [&](const char* name, const std::function<void()>& run) {
    std::vector<double> s;
    for (int i = 0; i < 5; ++i) {
      timer.start();
      run();
      timer.stop();
      s.push_back(timer.elapsed_ms() / 1e3);
    }
    state.counters[std::string("ms_") + name] = cerium_bench::median(s) * 1e3;
  };
  const Ciphertext low = boot.scale_down(input);
  const Ciphertext raised = boot.mod_raise(low);
  const Ciphertext summed = boot.sub_sum(raised);
  const auto halves = boot.coeff_to_slot(summed);
  const Ciphertext real = boot.eval_mod(halves[0]);
  const Ciphertext imaginary = boot.eval_mod(halves[1]);
  stage("scale_down", [&] { benchmark::DoNotOptimize(boot.scale_down(input)); });
  stage("mod_raise", [&] { benchmark::DoNotOptimize(boot.mod_raise(low)); });
  stage("coeff_to_slot", [&] { benchmark::DoNotOptimize(boot.coeff_to_slot(summed)); });
  stage("eval_mod_x2", [&] {
    benchmark::DoNotOptimize(boot.eval_mod(halves[0]));
    benchmark::DoNotOptimize(boot.eval_mod(halves[1]));
  });
  stage("slot_to_coeff", [&] { benchmark::DoNotOptimize(boot.slot_to_coeff(real, imaginary)); });
  // The whole bootstrap captured once as a CUDA graph (CudaBootstrapGraph) and
  // replayed: the device time without the host's issue cost, and whether its words equal the eager bootstrap's.
  // graph_ms = -1 when the capture fails (the reason goes to stderr).
  double graph_ms = -1, graph_equal = -1;
  try {
    const CudaBootstrapGraph graph(boot, input);
    const Ciphertext& target = graph.output();
    for (int i = 0; i < 2; ++i) graph.replay();
    stream.synchronize();
    std::vector<double> replays;
    for (int i = 0; i < 20; ++i) {
      timer.start();
      graph.replay();
      timer.stop();
      replays.push_back(timer.elapsed_ms() / 1e3);
    }
    graph_ms = cerium_bench::median(replays) * 1e3;
    const Ciphertext a = boot.evaluator().download(target), b = boot.evaluator().download(out);
    graph_equal = 1;
    for (std::size_t i = 0; i < a.size(); ++i) graph_equal *= a.part(i) == b.part(i) ? 1.0 : 0.0;
  } catch (const std::exception& e) {
    std::cerr << "bootstrap graph capture failed: " << e.what() << "\n";
  }
  state.counters["graph_ms"] = graph_ms;
  state.counters["graph_equal"] = graph_equal;
  const double t = cerium_bench::median(seconds);
  const double key_bytes = static_cast<double>(keys->memory_bytes());
  state.counters["N"] = static_cast<double>(context->ring_degree());
  state.counters["slots"] = static_cast<double>(boot.slots());
  state.counters["double_hoisting"] = static_cast<double>(state.range(0));
  state.counters["us"] = t * 1e6;
  state.counters["host_issue_ms"] = cerium_bench::median(host_seconds) * 1e3;
  state.counters["mean_bits"] = mean_bits;
  state.counters["worst_bits"] = worst_bits;
  state.counters["levels_left"] = static_cast<double>(out.level() - 1);
  state.counters["key_GB"] = key_bytes / 1e9;
  state.counters["diagonal_GB"] = static_cast<double>(boot.plaintext_bytes()) / 1e9;
  state.counters["floor_ratio"] = t / (key_bytes / cerium_bench::copy_bandwidth());
  state.counters["device_peak_GB"] = static_cast<double>(cuda::memory_stats().peak) / 1e9;
  state.SetLabel(cerium_bench::device_label());
}

}  // namespace

BENCHMARK(BM_bootstrap_n16_gpu)
    ->ArgName("double_hoisting")
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
