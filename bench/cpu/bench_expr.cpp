// The eDSL on the CPU backend: fused eval against eager evaluator calls for the three workloads of
// bench/expr_workloads.hpp (16-diagonal BSGS linear transform, sum of 8 ciphertext products, degree-15
// polynomial), at N = 2^13 with 6 two-prime levels of 28 bits (toy parameters: a CPU-sized comparison).
//
// variant 0 = eager (hand-written evaluator calls), 1 = eval with PlanOptions{.fuse_sums = false} (hoisting and
// lazy relinearization only), 2 = eval fused. Counters: N, limbs, passes (elementwise backend calls of the plan,
// one kernel launch each on the GPU; counted by hand for the eager code, bench/expr_workloads.hpp),
// key_switches and mod_ups of the plan, bits (precision against the exact result).

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/plan/explain.hpp"
#include "expr_workloads.hpp"

namespace {

using namespace cerium;
using namespace cerium::ckks;

struct Setup {
  ContextPtr context = Context::create(CkksConfig{.log_n = 13, .levels = 6, .level_width = 2,
                                                  .level_prime_bits = 28, .dnum = 2, .insecure_opt_out = true});
  KeyGenerator keygen{context};
  Encoder encoder{context};
  Encryptor encryptor{keygen.public_key()};
  Decryptor decryptor{keygen.secret_key()};
  Evaluator evaluator{context};
  std::unique_ptr<cerium_bench::ExprWorkloads<backend::CpuBackend>> work;

  Setup() {
    evaluator.set_relinearization_key(std::make_shared<const RelinearizationKey>(keygen.relinearization_key()));
    evaluator.set_galois_keys(
        std::make_shared<const GaloisKeys>(keygen.galois_keys(cerium_bench::expr_rotation_steps())));
    work = std::make_unique<cerium_bench::ExprWorkloads<backend::CpuBackend>>(evaluator, encoder, encryptor, 11);
  }
};

Setup& setup() {
  static Setup s;
  return s;
}

template <class Expression, class Eager>
void run(benchmark::State& state, const Expression& e, Eager eager, cerium_bench::EagerCounts counts,
         const std::vector<double>& want) {
  Setup& s = setup();
  const int variant = static_cast<int>(state.range(0));
  const auto once = [&] {
    if (variant == 0) return eager();
    return eval(e, EvalContext{s.evaluator}, plan::PlanOptions{.fuse_sums = variant == 2});
  };
  Ciphertext result;
  for (auto _ : state) {
    result = once();
    benchmark::DoNotOptimize(result);
  }
  const auto stats = plan::plan_stats(e, plan::PlanOptions{.fuse_sums = variant == 2});
  state.counters["N"] = static_cast<double>(s.context->ring_degree());
  state.counters["limbs"] = static_cast<double>(s.context->parameters().limbs_at(s.context->max_level()));
  state.counters["passes"] = variant == 0 ? counts.passes : stats.elementwise_passes;
  state.counters["key_switches"] = variant == 0 ? counts.key_switches : stats.key_switches;
  state.counters["mod_ups"] = variant == 0 ? counts.mod_ups : stats.mod_ups;
  state.counters["bits"] = cerium_bench::precision_bits(s.encoder.decode(s.decryptor.decrypt(result)), want);
}

void BM_expr_bsgs16_cpu(benchmark::State& state) {
  const auto& w = *setup().work;
  run(state, w.bsgs_expression(), [&] { return w.bsgs_eager(); }, cerium_bench::kBsgsEager, w.bsgs_want());
}
void BM_expr_products8_cpu(benchmark::State& state) {
  const auto& w = *setup().work;
  run(state, w.products8_expression(), [&] { return w.products8_eager(); }, cerium_bench::kProducts8Eager, w.products8_want());
}
void BM_expr_poly15_cpu(benchmark::State& state) {
  const auto& w = *setup().work;
  run(state, w.poly15_expression(), [&] { return w.poly15_eager(); }, cerium_bench::kPoly15Eager, w.poly15_want());
}

void variants(benchmark::internal::Benchmark* b) {
  b->ArgName("variant")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(0.5);
}

}  // namespace

BENCHMARK(BM_expr_bsgs16_cpu)->Apply(variants);
BENCHMARK(BM_expr_products8_cpu)->Apply(variants);
BENCHMARK(BM_expr_poly15_cpu)->Apply(variants);
