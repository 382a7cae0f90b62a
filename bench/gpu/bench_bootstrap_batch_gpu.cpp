// Several ciphertexts bootstrapped together on one GPU (issue 24's throughput figure): k captured bootstraps
// (boot::CudaBootstrapGraph, one per input, each with its own buffers) replayed side by side on k streams, so that
// one bootstrap's launch-bound kernels at low levels overlap another's; bootstrappable_n16, N = 2^16, 2^15 slots.
// Timed with CUDA events on the work stream around the whole batch (every stream waits for the start, the work
// stream for every stream), median of 10 batches after warm-up. Counters: batch, ms a batch, ms_per_ciphertext
// and its speedup against one graph replayed alone in the same run, words_equal (every output equal to the eager
// bootstrap's words after the concurrent replays), floor_ratio = time per ciphertext / (key bytes / copy bandwidth).
// BM_bootstrap_pair_n16_gpu: two real ciphertexts for one bootstrap (Bootstrapper::bootstrap_pair).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstddef>
#include <memory>
#include <random>
#include <vector>

#include "cerium/backend/cuda/memory.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/backend/cuda/timer.hpp"
#include "cerium/boot/cuda_bootstrap_graph.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "gpu_bench_support.hpp"

namespace {

using namespace cerium;
using namespace cerium::ckks;
using namespace cerium::boot;

// The GPU bootstrapper at N = 2^16 (bootstrappable_n16, full slots) with its keys, and level-1 inputs for it.
struct N16Bootstrap {
  ContextPtr context = Context::create(presets::bootstrappable_n16());
  KeyGenerator keygen{context};
  CudaBootstrapper boot{context, BootstrapConfig{}, backend::CudaBackend(context)};
  std::shared_ptr<const BootstrapKeys> keys = std::make_shared<const BootstrapKeys>(boot.generate_keys(keygen));
  Encoder encoder{context};
  Encryptor encryptor{keygen.public_key()};

  N16Bootstrap() { boot.set_keys(keys); }
  // slots() values uniform in [-bound, bound].
  std::vector<double> random_values(std::mt19937_64& rng, double bound) const {
    std::uniform_real_distribution<double> dist(-bound, bound);
    std::vector<double> x(boot.slots());
    for (auto& v : x) v = dist(rng);
    return x;
  }
  // x encrypted at level 1 and uploaded.
  Ciphertext level_one(const std::vector<double>& x) const {
    return boot.evaluator().upload(
        encryptor.encrypt(encoder.encode(x, EncodeOptions{.level = 1, .slots = boot.slots()})));
  }
};

void BM_bootstrap_batch_n16_gpu(benchmark::State& state) {
  const auto batch = static_cast<std::size_t>(state.range(0));
  const N16Bootstrap n16;
  const auto& [context, keygen, boot, keys, encoder, encryptor] = n16;
  std::mt19937_64 rng(13);
  const Ciphertext input = n16.level_one(n16.random_values(rng, 1));
  const Ciphertext eager = boot.evaluator().download(boot.bootstrap(input));

  std::vector<std::unique_ptr<CudaBootstrapGraph>> graphs;
  std::vector<cuda::Stream> streams;
  for (std::size_t i = 0; i < batch; ++i) {
    graphs.push_back(std::make_unique<CudaBootstrapGraph>(boot, input));
    streams.push_back(cuda::Stream::create());
  }
  const auto& work = cuda::work_stream();
  cuda::EventTimer timer(work);
  const auto run_batch = [&] {
    for (std::size_t i = 0; i < batch; ++i) {
      streams[i].wait(work);
      graphs[i]->replay(streams[i]);
    }
    for (const auto& s : streams) work.wait(s);
  };
  for (int i = 0; i < 2; ++i) run_batch();  // warm-up: the graphs' first replays allocate their memory
  work.synchronize();

  // One graph alone, the same run's baseline.
  std::vector<double> alone;
  for (int i = 0; i < 10; ++i) {
    timer.start();
    graphs[0]->replay();
    timer.stop();
    alone.push_back(timer.elapsed_ms() / 1e3);
  }
  std::vector<double> seconds;
  for (auto _ : state) {
    for (int i = 0; i < 10; ++i) {
      timer.start();
      run_batch();
      timer.stop();
      seconds.push_back(timer.elapsed_ms() / 1e3);
    }
    state.SetIterationTime(cerium_bench::median(seconds));
  }
  work.synchronize();
  double equal = 1;
  for (const auto& g : graphs) {
    const Ciphertext out = boot.evaluator().download(g->output());
    for (std::size_t p = 0; p < out.size(); ++p) equal *= out.part(p) == eager.part(p) ? 1.0 : 0.0;
  }

  const double t = cerium_bench::median(seconds);
  const double per_ciphertext = t / static_cast<double>(batch);
  const double key_bytes = static_cast<double>(keys->memory_bytes());
  state.counters["N"] = static_cast<double>(context->ring_degree());
  state.counters["slots"] = static_cast<double>(boot.slots());
  state.counters["batch"] = static_cast<double>(batch);
  state.counters["ms"] = t * 1e3;
  state.counters["ms_per_ciphertext"] = per_ciphertext * 1e3;
  state.counters["ms_alone"] = cerium_bench::median(alone) * 1e3;
  state.counters["speedup"] = cerium_bench::median(alone) / per_ciphertext;
  state.counters["ciphertexts_per_s"] = 1.0 / per_ciphertext;
  state.counters["words_equal"] = equal;
  state.counters["floor_ratio"] = per_ciphertext / (key_bytes / cerium_bench::copy_bandwidth());
  state.counters["device_peak_GB"] = static_cast<double>(cuda::memory_stats().peak) / 1e9;
  state.SetLabel(cerium_bench::device_label());
}

// Two real ciphertexts refreshed by one bootstrap and a conjugation (Bootstrapper::bootstrap_pair) against two
// bootstraps, issued call by call, median of 5 after warm-up: ms a pair, ms for two bootstraps, each output's
// mean precision in bits against its values (|x|, |y| <= 0.7) beside a's bootstrapped alone, and floor_ratio = time a
// pair / (key bytes / copy bandwidth).
void BM_bootstrap_pair_n16_gpu(benchmark::State& state) {
  const N16Bootstrap n16;
  const auto& [context, keygen, boot, keys, encoder, encryptor] = n16;
  std::mt19937_64 rng(19);
  const std::vector<double> x = n16.random_values(rng, 0.7), y = n16.random_values(rng, 0.7);
  const Ciphertext a = n16.level_one(x), b = n16.level_one(y);
  double pair_ms = 0, singles_ms = 0;
  for (auto _ : state) {
    pair_ms = 1e3 * cerium_bench::median_call_seconds([&] { benchmark::DoNotOptimize(boot.bootstrap_pair(a, b)); },
                                                      5, 2);
    singles_ms = 1e3 * cerium_bench::median_call_seconds(
                           [&] {
                             benchmark::DoNotOptimize(boot.bootstrap(a));
                             benchmark::DoNotOptimize(boot.bootstrap(b));
                           },
                           5, 2);
    state.SetIterationTime(pair_ms / 1e3);
  }
  const auto [fresh_a, fresh_b] = boot.bootstrap_pair(a, b);
  const Decryptor decryptor(keygen.secret_key());
  const auto bits = [&](const Ciphertext& c, const std::vector<double>& want) {
    const auto got = encoder.decode(decryptor.decrypt(boot.evaluator().download(c)));
    double total = 0;
    for (std::size_t i = 0; i < want.size(); ++i) total += std::abs(got[i] - want[i]);
    return -std::log2(total / static_cast<double>(want.size()));
  };
  state.counters["N"] = static_cast<double>(context->ring_degree());
  state.counters["slots"] = static_cast<double>(boot.slots());
  state.counters["ms_pair"] = pair_ms;
  state.counters["ms_two_bootstraps"] = singles_ms;
  state.counters["speedup"] = singles_ms / pair_ms;
  state.counters["bits_a"] = bits(fresh_a, x);
  state.counters["bits_b"] = bits(fresh_b, y);
  state.counters["bits_a_alone"] = bits(boot.bootstrap(a), x);
  state.counters["floor_ratio"] =
      pair_ms / 1e3 / (static_cast<double>(keys->memory_bytes()) / cerium_bench::copy_bandwidth());
  state.counters["device_peak_GB"] = static_cast<double>(cuda::memory_stats().peak) / 1e9;
  state.SetLabel(cerium_bench::device_label());
}

}  // namespace

BENCHMARK(BM_bootstrap_pair_n16_gpu)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_bootstrap_batch_n16_gpu)
    ->ArgName("batch")
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Arg(8)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
