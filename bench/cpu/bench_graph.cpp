// The graph executor against the same program run eagerly (graph::Eager), on the CPU: the executor's own cost
// (planning is done once, before; each run walks the plan, frees values at their last use). Rotation hoisting off,
// so both run the same operations. N = 2^13, 8 rounds (toy parameters: the ratio is the figure).
//
// BM_block_diagonal_product/compressed:0|1 (issue 19): a 2^15 x 2^15 block-diagonal weight (blocks of 64: 127
// diagonals, each periodic with period 64) times a ciphertext at N = 2^16, traced, planned (baby-step giant-step,
// hoisted) and run by the executor, its plaintexts kept compressed (each diagonal's 64 values, encoded at each use
// on host threads: compressed:1) or encoded once ahead and cached (compressed:0). Counters: the plaintexts as the
// program holds them (plaintext_MiB: periods when compressed, encoded limbs otherwise), key switches, and the
// product's largest error against the same product in doubles (error_bits).
//
// BM_simulate_linear_layer/threads:1|2: the planner's calibration simulation of four token-row ciphertexts through
// that weight (see the function).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "cerium/circuits/diagonal_matrix.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/eager.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/simulate.hpp"
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

constexpr std::size_t kBlock = 64;

struct BlockDiagonalSetup {
  ckks::ContextPtr context = ckks::Context::create(
      ckks::CkksConfig{.log_n = 16, .levels = 2, .level_width = 2, .level_prime_bits = 28, .dnum = 2});
  ckks::KeyGenerator keygen{context};
  ckks::Evaluator evaluator{context};
  std::size_t slots = context->parameters().max_slots();
  circuits::DiagonalMatrix matrix = cerium_bench::block_diagonal(slots, kBlock, 5);
  graph::Plan plan;
  std::vector<double> values;
  ckks::Ciphertext x;

  BlockDiagonalSetup() {
    graph::Tracer tracer(context);
    tracer.output(graph::multiply(tracer, tracer.input("x", slots), matrix), "y");
    plan = graph::plan(std::move(tracer).finish(), {});
    evaluator.set_galois_keys(std::make_shared<const ckks::GaloisKeys>(keygen.galois_keys(plan.keys.steps)));
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> d(-1, 1);
    values.resize(slots);
    for (auto& v : values) v = d(rng);
    x = ckks::Encryptor(keygen.public_key()).encrypt(ckks::Encoder(context).encode(values, plan.input_encoding(0)));
  }

  // The largest error of an output against M x in doubles (circuits::apply), in bits.
  double error_bits(const ckks::Ciphertext& y) const {
    const auto got = ckks::Encoder(context).decode(ckks::Decryptor(keygen.secret_key()).decrypt(y));
    const std::vector<circuits::Complex> x_values(values.begin(), values.end());
    const std::vector<circuits::Complex> expected = circuits::apply(matrix, x_values);
    double worst = 0;
    for (std::size_t i = 0; i < slots; ++i) worst = std::max(worst, std::abs(got[i] - expected[i]));
    return -std::log2(worst);
  }
};

void BM_block_diagonal_product(benchmark::State& state) {
  static BlockDiagonalSetup s;
  const bool compressed = state.range(0) != 0;
  const graph::Executor<backend::CpuBackend> executor(s.plan, s.evaluator, nullptr,
                                                      {.cache_plaintexts = !compressed, .keep_rest_unscaled = false});
  executor.encode_plaintexts();
  std::vector<ckks::Ciphertext> outputs;
  for (auto _ : state) {
    std::vector<ckks::Ciphertext> inputs;
    inputs.push_back(s.x.clone());
    outputs = executor.run(std::move(inputs));
  }
  state.counters["N"] = static_cast<double>(s.context->ring_degree());
  state.counters["slots"] = static_cast<double>(s.slots);
  state.counters["block"] = static_cast<double>(kBlock);
  state.counters["diagonals"] = static_cast<double>(s.matrix.diagonals.size());
  state.counters["limbs"] = static_cast<double>(s.context->limbs_at(s.context->max_level()));
  state.counters["dnum"] = static_cast<double>(s.context->digit_count(s.context->max_level()));
  state.counters["key_switches"] = static_cast<double>(s.plan.key_switches());
  state.counters["plaintext_MiB"] =
      static_cast<double>(compressed ? s.plan.plaintext_bytes : executor.plaintext_cache_bytes()) / 1048576.0;
  state.counters["encoded_MiB"] = static_cast<double>(s.plan.plaintext_encoded_bytes) / 1048576.0;
  state.counters["error_bits"] = s.error_bits(outputs.at(0));
}

// The planner's calibration simulation (graph::simulate_magnitudes) of four token-row ciphertexts at 2^15 slots
// each multiplied by a block-diagonal weight (127 periodic diagonals, baby-step rotations, sums of plaintext
// products) and summed: a transformer's linear layer as the planner sees it. Threads: PlanOptions::
// simulation_threads. Counters: nodes, ns per node and slot.
void BM_simulate_linear_layer(benchmark::State& state) {
  static const auto context = ckks::Context::create(ckks::presets::bootstrappable_n16());
  const std::size_t slots = context->parameters().max_slots();
  static const circuits::DiagonalMatrix matrix = cerium_bench::block_diagonal(slots, kBlock, 9);
  static const graph::Program program = [&] {
    graph::Tracer tracer(context);
    const auto product = graph::prepare_product(matrix);
    std::vector<graph::Value> rows;
    for (int r = 0; r < 4; ++r) rows.push_back(graph::multiply(tracer, tracer.input("x", slots), product));
    for (int r = 1; r < 4; ++r) rows[0] = tracer.add(rows[0], rows[static_cast<std::size_t>(r)]);
    tracer.output(rows[0], "y");
    return std::move(tracer).finish();
  }();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<graph::SlotValues> inputs(4, graph::SlotValues(slots));
  for (auto& v : inputs) {
    for (auto& x : v) x = d(rng);
  }
  const auto threads = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(graph::simulate_magnitudes(program, {inputs}, nullptr, threads));
  state.counters["nodes"] = static_cast<double>(program.size());
  state.counters["slots"] = static_cast<double>(slots);
  state.counters["threads"] = static_cast<double>(threads);
  state.counters["ns_per_node_slot"] = benchmark::Counter(
      static_cast<double>(program.size() * slots) * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                                              benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_graph_block_eager)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_graph_block_executor)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_block_diagonal_product)->ArgName("compressed")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_simulate_linear_layer)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
