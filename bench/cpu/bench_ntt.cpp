// CPU reference NTT: one limb at N = 2^10 .. 2^17, and an RNS polynomial of several limbs at N = 2^16.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "cerium/math/ntt.hpp"
#include "cerium/math/primes.hpp"

namespace {

using cerium::math::NttTables;

struct NttInputs {
  std::vector<NttTables> tables;
  std::vector<std::vector<std::uint32_t>> limbs;
};

NttInputs make_inputs(std::size_t n, std::size_t limb_count) {
  NttInputs inputs;
  std::mt19937_64 rng(n * 131 + limb_count);
  for (auto q : cerium::math::generate_ntt_primes({.bits = 30, .count = limb_count, .ring_degree = n})) {
    inputs.tables.emplace_back(q, n);
    std::uniform_int_distribution<std::uint32_t> dist(0, q - 1);
    auto& limb = inputs.limbs.emplace_back(n);
    for (auto& x : limb) x = dist(rng);
  }
  return inputs;
}

void set_counters(benchmark::State& state, std::size_t n, std::size_t limbs) {
  state.counters["N"] = static_cast<double>(n);
  state.counters["limbs"] = static_cast<double>(limbs);
  state.counters["words_per_s"] = benchmark::Counter(static_cast<double>(n * limbs),
                                                     benchmark::Counter::kIsIterationInvariantRate);
}

template <bool Forward>
void BM_ntt_cpu(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto limb_count = static_cast<std::size_t>(state.range(1));
  auto inputs = make_inputs(n, limb_count);
  for (auto _ : state) {
    for (std::size_t i = 0; i < limb_count; ++i) {
      if constexpr (Forward) cerium::math::ntt_forward(inputs.limbs[i], inputs.tables[i]);
      else cerium::math::ntt_inverse(inputs.limbs[i], inputs.tables[i]);
    }
    benchmark::ClobberMemory();
  }
  set_counters(state, n, limb_count);
}

void ntt_sizes(benchmark::internal::Benchmark* b) {
  for (int log_n = 10; log_n <= 17; ++log_n) b->Args({1 << log_n, 1});
  b->Args({1 << 16, 8});
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_ntt_cpu<true>)->Name("ntt_forward_cpu")->Apply(ntt_sizes);
BENCHMARK(BM_ntt_cpu<false>)->Name("ntt_inverse_cpu")->Apply(ntt_sizes);

}  // namespace
