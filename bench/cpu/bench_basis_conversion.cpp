// CPU reference basis conversion: ModUp of one digit (alpha primes) to the rest of Q_l u P, ModDown from
// Q u P to Q, and rescale by one or two primes, at N = 2^14 and 2^16, coefficient form (no NTTs).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "cerium/math/primes.hpp"
#include "cerium/ring/basis_conversion.hpp"

namespace {

using namespace cerium::ring;

// q_count primes of 28 bits for Q and p_count primes of 31 bits for P (disjoint by size).
struct Bases {
  RnsBasisPtr q, p, qp;
};

Bases make_bases(std::size_t n, std::size_t q_count, std::size_t p_count) {
  const auto q = cerium::math::generate_ntt_primes({.bits = 28, .count = q_count, .ring_degree = n});
  const auto p = cerium::math::generate_ntt_primes({.bits = 31, .count = p_count, .ring_degree = n});
  Bases b{make_basis(n, q), make_basis(n, p), nullptr};
  b.qp = make_basis(b.q->concat(*b.p));
  return b;
}

RnsPoly random_poly(const RnsBasisPtr& basis) {
  RnsPoly poly(basis);
  std::mt19937_64 rng(basis->size() * 7919 + basis->ring_degree());
  for (std::size_t i = 0; i < poly.limb_count(); ++i) {
    std::uniform_int_distribution<std::uint32_t> dist(0, basis->prime(i) - 1);
    for (auto& x : poly.limb(i)) x = dist(rng);
  }
  return poly;
}

// Counters: N, input and output limbs, and output words per second.
void set_counters(benchmark::State& state, std::size_t n, std::size_t in_limbs, std::size_t out_limbs) {
  state.counters["N"] = static_cast<double>(n);
  state.counters["in_limbs"] = static_cast<double>(in_limbs);
  state.counters["out_limbs"] = static_cast<double>(out_limbs);
  state.counters["words_per_s"] =
      benchmark::Counter(static_cast<double>(n * out_limbs), benchmark::Counter::kIsIterationInvariantRate);
}

// Args: N, alpha (digit and special primes), limbs of Q. One digit to Q u P: alpha copied, |Q| converted.
void BM_mod_up(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto alpha = static_cast<std::size_t>(state.range(1));
  const auto q_count = static_cast<std::size_t>(state.range(2));
  const auto b = make_bases(n, q_count, alpha);
  const auto digit = make_basis(b.q->sub_basis(0, alpha));
  const ModUp op(digit, b.qp);
  const auto x = random_poly(digit);
  RnsPoly y(b.qp, PolyOptions{.init = cerium::BufferInit::uninitialized});
  const auto in = x.limbs();
  const auto out = y.limbs();
  for (auto _ : state) {
    op.apply(in, out);
    benchmark::ClobberMemory();
  }
  set_counters(state, n, alpha, q_count + alpha);
}

// Args: N, alpha (|P|), limbs of Q. Q u P -> Q.
void BM_mod_down(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto alpha = static_cast<std::size_t>(state.range(1));
  const auto q_count = static_cast<std::size_t>(state.range(2));
  const auto b = make_bases(n, q_count, alpha);
  const ModDown op(b.qp, b.q, Rounding::nearest);
  const auto x = random_poly(b.qp);
  RnsPoly y(b.q, PolyOptions{.init = cerium::BufferInit::uninitialized});
  const auto in = x.limbs();
  const auto out = y.limbs();
  for (auto _ : state) {
    op.apply(in, out);
    benchmark::ClobberMemory();
  }
  set_counters(state, n, q_count + alpha, q_count);
}

// Args: N, limbs, dropped primes (1 or 2).
void BM_rescale(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto limbs = static_cast<std::size_t>(state.range(1));
  const auto dropped = static_cast<std::size_t>(state.range(2));
  const auto b = make_bases(n, limbs, 1);
  const Rescaler op(b.q, dropped, Rounding::nearest);
  const auto x = random_poly(b.q);
  RnsPoly y(op.kept_ptr(), PolyOptions{.init = cerium::BufferInit::uninitialized});
  const auto in = x.limbs();
  const auto out = y.limbs();
  for (auto _ : state) {
    op.apply(in, out);
    benchmark::ClobberMemory();
  }
  set_counters(state, n, limbs, limbs - dropped);
}

BENCHMARK(BM_mod_up)->Name("mod_up_cpu")->Args({1 << 14, 4, 24})->Args({1 << 16, 4, 40})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mod_down)
    ->Name("mod_down_cpu")
    ->Args({1 << 14, 4, 24})
    ->Args({1 << 16, 4, 40})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_rescale)
    ->Name("rescale_cpu")
    ->Args({1 << 14, 24, 1})
    ->Args({1 << 14, 24, 2})
    ->Args({1 << 16, 40, 1})
    ->Args({1 << 16, 40, 2})
    ->Unit(benchmark::kMillisecond);

}  // namespace
