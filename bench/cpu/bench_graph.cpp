// The graph executor against the same program run eagerly (graph::Eager), on the CPU: the executor's own cost
// (planning is done once, before; each run walks the plan, frees values at their last use). Rotation hoisting off,
// so both run the same operations. N = 2^13, 8 rounds (toy parameters: the ratio is the figure).

#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <vector>

#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/eager.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/tracer.hpp"
#include "graph_workloads.hpp"

namespace {

using namespace cerium;

constexpr int kRounds = 8;

struct GraphSetup {
  ckks::ContextPtr context = ckks::Context::create(ckks::CkksConfig{
      .log_n = 13, .levels = kRounds + 2, .level_width = 2, .level_prime_bits = 28, .dnum = 3, .insecure_opt_out = true});
  ckks::KeyGenerator keygen{context};
  ckks::Evaluator evaluator{context};
  graph::PlainVector weights{std::vector<double>{0.5, -0.25, 0.125, 1.0}};
  graph::Plan plan;
  ckks::Ciphertext x;

  GraphSetup() {
    evaluator.set_relinearization_key(std::make_shared<const ckks::RelinearizationKey>(keygen.relinearization_key()));
    evaluator.set_galois_keys(
        std::make_shared<const ckks::GaloisKeys>(keygen.galois_keys(cerium_bench::graph_block_steps(kRounds))));
    graph::Tracer tracer(context);
    tracer.output(cerium_bench::graph_block(tracer, tracer.input("x"), kRounds, weights), "y");
    graph::PlanOptions options;
    options.hoist_rotations = false;
    plan = graph::plan(std::move(tracer).finish(), options);
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<double> values(context->parameters().max_slots());
    for (auto& v : values) v = d(rng);
    x = ckks::Encryptor(keygen.public_key()).encrypt(ckks::Encoder(context).encode(values, plan.input_encoding(0)));
  }
};

GraphSetup& setup() {
  static GraphSetup s;
  return s;
}

void counters(benchmark::State& state, const GraphSetup& s) {
  state.counters["N"] = static_cast<double>(s.context->ring_degree());
  state.counters["limbs"] = static_cast<double>(s.context->limbs_at(s.context->max_level()));
  state.counters["dnum"] = static_cast<double>(s.context->digit_count(s.context->max_level()));
  state.counters["nodes"] = static_cast<double>(s.plan.program.size());
}

void BM_graph_block_eager(benchmark::State& state) {
  GraphSetup& s = setup();
  graph::Eager<backend::CpuBackend> eager(s.evaluator);
  for (auto _ : state) {
    benchmark::DoNotOptimize(cerium_bench::graph_block(eager, eager.input(s.x), kRounds, s.weights));
  }
  counters(state, s);
}

void BM_graph_block_executor(benchmark::State& state) {
  GraphSetup& s = setup();
  const graph::Executor<backend::CpuBackend> executor(s.plan, s.evaluator);
  for (auto _ : state) {
    std::vector<ckks::Ciphertext> inputs;
    inputs.push_back(s.x.clone());
    benchmark::DoNotOptimize(executor.run(std::move(inputs)));
  }
  counters(state, s);
}

}  // namespace

BENCHMARK(BM_graph_block_eager)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_graph_block_executor)->Unit(benchmark::kMillisecond);
