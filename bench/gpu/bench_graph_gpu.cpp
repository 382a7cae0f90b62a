// The graph executor against the same program run eagerly (graph::Eager) on the GPU, N = 2^16, 40 limbs at the
// top, dnum 3: the executor's overhead (target: within 5 percent), with rotation hoisting off (the same
// operations) and on (the executor's fusion). Device time with CUDA events after warm-up; the memory floor counts
// the switching-key bytes every key switch must read (a lower bound on what the program moves).
//
// BM_block_diagonal_product_gpu/mode (issue 19): a 2^15 x 2^15 block-diagonal weight (blocks of 64: 127 diagonals,
// each periodic with period 64; bench/graph_workloads.hpp) times a ciphertext at the top level, traced, planned and
// run by the executor with its plaintexts 0: encoded once and cached on the device, 1: kept compressed on the device
// (unscaled periods) and encoded there at each use, 2: kept compressed on the host and encoded on host threads at
// each use, copied over. Counters: plaintext_MiB as each mode holds them, encoded_MiB (a full encoding), ms, and
// floor_ratio against the switching keys' and the encoded plaintexts' bytes.

#include <benchmark/benchmark.h>

#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "cerium/backend/cuda/memory.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/backend/cuda/timer.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/captured_run.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/eager.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/tracer.hpp"
#include "gpu_bench_support.hpp"
#include "graph_workloads.hpp"

namespace {

using namespace cerium;

constexpr int kRounds = 8;

struct GpuGraphSetup {
  ckks::ContextPtr context = ckks::Context::create(ckks::CkksConfig{
      .log_n = 16, .levels = 19, .level_width = 2, .level_prime_bits = 28, .base_primes = 2, .base_prime_bits = 31,
      .dnum = 3});
  ckks::KeyGenerator keygen{context};
  ckks::CudaEvaluator evaluator{context, backend::CudaBackend(context)};
  graph::PlainVector weights{std::vector<double>{0.5, -0.25, 0.125, 1.0}};
  graph::Program program;
  ckks::Ciphertext x;

  GpuGraphSetup() {
    evaluator.set_relinearization_key(
        std::make_shared<const ckks::RelinearizationKey>(keygen.relinearization_key(ckks::KeyStorage::seeded)));
    evaluator.set_galois_keys(std::make_shared<const ckks::GaloisKeys>(
        keygen.galois_keys(cerium_bench::graph_block_steps(kRounds), false, ckks::KeyStorage::seeded)));
    graph::Tracer tracer(context);
    tracer.output(cerium_bench::graph_block(tracer, tracer.input("x"), kRounds, weights), "y");
    program = std::move(tracer).finish();
    const graph::Plan plan = graph::plan(program);
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<double> values(context->parameters().max_slots());
    for (auto& v : values) v = d(rng);
    x = evaluator.upload(
        ckks::Encryptor(keygen.public_key()).encrypt(ckks::Encoder(context).encode(values, plan.input_encoding(0))));
  }

  // Switching-key bytes the program's key switches read: every key switch reads its key's limbs at its level.
  double floor_bytes(const graph::Plan& plan) const {
    double bytes = 0;
    for (graph::NodeId id = 0; id < plan.program.size(); ++id) {
      const auto& node = plan.program.node(id);
      if (graph::key_switches(node.op) == 0) continue;
      const int level = plan.nodes[node.inputs[0]].held_level;
      bytes += 2.0 * context->digit_count(level) * (context->limbs_at(level) + context->alpha()) *
               context->ring_degree() * 4.0;
    }
    return bytes;
  }
};

GpuGraphSetup& setup() {
  static GpuGraphSetup s;
  return s;
}

template <class Call>
double device_seconds(Call&& call) {
  return cerium_bench::median_call_seconds(call, 10);
}

// extra_floor_bytes: bytes the run must read besides the switching keys (a program's encoded plaintexts).
void report(benchmark::State& state, const GpuGraphSetup& s, const graph::Plan& plan, double seconds,
            double extra_floor_bytes = 0) {
  state.SetIterationTime(seconds);
  state.counters["N"] = static_cast<double>(s.context->ring_degree());
  state.counters["limbs"] = static_cast<double>(s.context->limbs_at(s.context->max_level()));
  state.counters["dnum"] = static_cast<double>(s.context->digit_count(s.context->max_level()));
  state.counters["nodes"] = static_cast<double>(plan.program.size());
  state.counters["ms"] = seconds * 1e3;
  state.counters["floor_ratio"] =
      seconds / ((s.floor_bytes(plan) + extra_floor_bytes) / cerium_bench::copy_bandwidth());
  state.SetLabel(cerium_bench::device_label());
}

// Argument: 0 eager, 1 executor without hoisting, 2 executor with hoisting, 3 that with its plaintexts cached on the
// device (ExecutorOptions::cache_plaintexts: how a program run many times runs; eager encodes at each use), 4 that
// recorded as a CUDA graph and replayed (graph::CapturedRun).
void BM_graph_block_gpu(benchmark::State& state) {
  GpuGraphSetup& s = setup();
  const int mode = static_cast<int>(state.range(0));
  graph::PlanOptions options;
  options.hoist_rotations = mode >= 2;
  const graph::Plan plan = graph::plan(s.program, options);
  const graph::Executor<backend::CudaBackend> executor(plan, s.evaluator, nullptr, {.cache_plaintexts = mode >= 3});
  graph::Eager<backend::CudaBackend> eager(s.evaluator);
  std::vector<ckks::Ciphertext> example;
  example.push_back(s.x.clone());
  std::optional<graph::CapturedRun<backend::CudaBackend>> captured;
  if (mode == 4) captured.emplace(executor, example);
  for (auto _ : state) {
    const double seconds = device_seconds([&] {
      if (mode == 0) {
        benchmark::DoNotOptimize(cerium_bench::graph_block(eager, eager.input(s.x), kRounds, s.weights));
      } else if (mode == 4) {
        benchmark::DoNotOptimize(captured->run(example));
      } else {
        std::vector<ckks::Ciphertext> inputs;
        inputs.push_back(s.x.clone());
        benchmark::DoNotOptimize(executor.run(std::move(inputs)));
      }
    });
    report(state, s, plan, seconds);
  }
}

void BM_block_diagonal_product_gpu(benchmark::State& state) {
  GpuGraphSetup& s = setup();
  const int mode = static_cast<int>(state.range(0));
  const std::size_t slots = s.context->parameters().max_slots();
  const circuits::DiagonalMatrix matrix = cerium_bench::block_diagonal(slots, 64, 5);
  graph::Tracer tracer(s.context);
  tracer.output(graph::multiply(tracer, tracer.input("x", slots), matrix), "y");
  const graph::Plan plan = graph::plan(std::move(tracer).finish());
  s.evaluator.set_galois_keys(std::make_shared<const ckks::GaloisKeys>(
      s.keygen.galois_keys(plan.keys.steps, false, ckks::KeyStorage::seeded)));
  const graph::ExecutorOptions options =
      mode == 0   ? graph::ExecutorOptions{.cache_plaintexts = true}
      : mode == 1 ? graph::ExecutorOptions{.cache_plaintexts = true, .plaintext_cache_bytes = 1}
                  : graph::ExecutorOptions{.cache_plaintexts = false};
  const graph::Executor<backend::CudaBackend> executor(plan, s.evaluator, nullptr, options);
  executor.encode_plaintexts();
  for (auto _ : state) {
    const double seconds = device_seconds([&] {
      std::vector<ckks::Ciphertext> inputs;
      inputs.push_back(s.x.clone());
      benchmark::DoNotOptimize(executor.run(std::move(inputs)));
    });
    report(state, s, plan, seconds, static_cast<double>(plan.plaintext_encoded_bytes));
  }
  const double held = mode == 0   ? static_cast<double>(executor.plaintext_cache_bytes())
                      : mode == 1 ? static_cast<double>(executor.unscaled_plaintext_bytes())
                                  : static_cast<double>(plan.plaintext_bytes);
  state.counters["plaintext_MiB"] = held / 1048576.0;
  state.counters["encoded_MiB"] = static_cast<double>(plan.plaintext_encoded_bytes) / 1048576.0;
  state.counters["diagonals"] = static_cast<double>(matrix.diagonals.size());
  state.counters["key_switches"] = static_cast<double>(plan.key_switches());
  // The graph block's keys back for the benchmarks that follow.
  s.evaluator.set_galois_keys(std::make_shared<const ckks::GaloisKeys>(
      s.keygen.galois_keys(cerium_bench::graph_block_steps(kRounds), false, ckks::KeyStorage::seeded)));
}

}  // namespace

BENCHMARK(BM_block_diagonal_product_gpu)->ArgName("mode")->DenseRange(0, 2)->UseManualTime()->Iterations(1)->Unit(
    benchmark::kMillisecond);
BENCHMARK(BM_graph_block_gpu)->ArgName("mode")->DenseRange(0, 4)->UseManualTime()->Iterations(1)->Unit(
    benchmark::kMillisecond);
