// The eDSL on the CUDA backend: fused eval against eager evaluator calls for the workloads of
// bench/expr_workloads.hpp (16-diagonal BSGS linear transform, sum of 8 ciphertext products, degree-15
// polynomial) at N = 2^16, 40 limbs (19 two-prime levels of 28 bits over 2 base primes), dnum 3; and two rescaled
// sums of 8 products whose rescale folds into the fused pass (plaintext products against the unfolded plan,
// constant products against eager calls).
//
// Each call is timed with CUDA events after 3 warm-up calls, median of 20, issued from the host (what a program
// sees). Kernel launches are counted by capturing one call into a CUDA graph and counting its kernel nodes
// (-1 where the capture fails), and the graph's replays give the device time alone (graph_us_*). Counters: N,
// limbs, launches, us and graph_us of both forms, speedup and graph_speedup = eager / fused, bits (precision of
// the fused result against the exact one; bits_eager likewise).
#include <benchmark/benchmark.h>

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

#include "cerium/backend/cuda/memory.hpp"
#include "cerium/backend/cuda/timer.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "expr_workloads.hpp"
#include "gpu_bench_support.hpp"

namespace {

using namespace cerium;
using namespace cerium::ckks;

struct Setup {
  ContextPtr context = Context::create(CkksConfig{.log_n = 16, .levels = 19, .level_width = 2,
                                                  .level_prime_bits = 28, .base_primes = 2, .base_prime_bits = 31,
                                                  .dnum = 3});
  KeyGenerator keygen{context};
  Encoder encoder{context};
  Encryptor encryptor{keygen.secret_key()};
  Decryptor decryptor{keygen.secret_key()};
  CudaEvaluator evaluator{context, backend::CudaBackend(context)};
  std::unique_ptr<cerium_bench::ExprWorkloads<backend::CudaBackend>> work;

  Setup() {
    evaluator.set_relinearization_key(
        std::make_shared<const RelinearizationKey>(keygen.relinearization_key(KeyStorage::seeded)));
    evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(
        keygen.galois_keys(cerium_bench::expr_rotation_steps(), false, KeyStorage::seeded)));
    work = std::make_unique<cerium_bench::ExprWorkloads<backend::CudaBackend>>(evaluator, encoder, encryptor, 11);
  }
};

Setup& setup() {
  static Setup s;
  return s;
}

// Median seconds of one call, CUDA events on the backend's work stream, after warm-up.
double time_call(const std::function<void()>& call) { return cerium_bench::median_call_seconds(call, 20); }

// One call captured as a CUDA graph: its kernel nodes, and the median device time of 20 replays after warm-up
// (the GPU's share alone, without the host's issue time); both -1 where the call cannot be captured.
struct GraphFigures {
  double kernels = -1;
  double replay_seconds = -1;
};

GraphFigures capture_figures(const std::function<void()>& call) {
  const auto& stream = cuda::work_stream();
  stream.synchronize();
  cudaGraph_t graph = nullptr;
  if (cudaStreamBeginCapture(cerium_bench::native(stream), cudaStreamCaptureModeThreadLocal) != cudaSuccess) return {};
  bool captured = true;
  try {
    call();
  } catch (const std::exception&) {
    captured = false;
  }
  if (cudaStreamEndCapture(cerium_bench::native(stream), &graph) != cudaSuccess || !captured || graph == nullptr) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();  // clear the capture's error
    return {};
  }
  GraphFigures figures;
  std::size_t count = 0;
  cudaGraphGetNodes(graph, nullptr, &count);
  std::vector<cudaGraphNode_t> nodes(count);
  cudaGraphGetNodes(graph, nodes.data(), &count);
  figures.kernels = 0;
  for (const auto node : nodes) {
    cudaGraphNodeType type{};
    cudaGraphNodeGetType(node, &type);
    if (type == cudaGraphNodeTypeKernel) ++figures.kernels;
  }
  cudaGraphExec_t exec = nullptr;
  if (cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
    cuda::EventTimer timer(stream);
    std::vector<double> seconds;
    for (int i = 0; i < 23; ++i) {
      timer.start();
      CERIUM_CUDA_CHECK(cudaGraphLaunch(exec, cerium_bench::native(stream)));
      timer.stop();
      if (i >= 3) seconds.push_back(timer.elapsed_ms() / 1e3);
    }
    figures.replay_seconds = cerium_bench::median(seconds);
    cudaGraphExecDestroy(exec);
  } else {
    cudaGetLastError();
  }
  cudaGraphDestroy(graph);
  return figures;
}

template <class Expression, class Eager>
void run(benchmark::State& state, const Expression& e, Eager eager, const std::vector<double>& want,
         plan::PlanOptions options = {}) {
  Setup& s = setup();
  const auto fused_call = [&] { benchmark::DoNotOptimize(eval(e, EvalContext{s.evaluator}, options)); };
  const auto eager_call = [&] { benchmark::DoNotOptimize(eager()); };
  for (auto _ : state) {
    const double fused = time_call(fused_call);
    const double eager_seconds = time_call(eager_call);
    state.SetIterationTime(fused);
    state.counters["us_fused"] = fused * 1e6;
    state.counters["us_eager"] = eager_seconds * 1e6;
    state.counters["speedup"] = eager_seconds / fused;
  }
  state.counters["N"] = static_cast<double>(s.context->ring_degree());
  state.counters["limbs"] = static_cast<double>(s.context->parameters().limbs_at(s.context->max_level()));
  const auto bits = [&](const Ciphertext& ct) {
    return cerium_bench::precision_bits(s.encoder.decode(s.decryptor.decrypt(s.evaluator.download(ct))), want);
  };
  state.counters["bits"] = bits(eval(e, EvalContext{s.evaluator}, options));
  state.counters["bits_eager"] = bits(eager());
  cerium_bench::profile_once(cuda::work_stream(), fused_call);
  // Last: a capture that fails leaves the stream to recover.
  const GraphFigures fused_graph = capture_figures(fused_call);
  const GraphFigures eager_graph = capture_figures(eager_call);
  state.counters["launches_fused"] = fused_graph.kernels;
  state.counters["launches_eager"] = eager_graph.kernels;
  state.counters["graph_us_fused"] = fused_graph.replay_seconds * 1e6;
  state.counters["graph_us_eager"] = eager_graph.replay_seconds * 1e6;
  state.counters["graph_speedup"] = eager_graph.replay_seconds / fused_graph.replay_seconds;
  state.SetLabel(cerium_bench::device_label());
}

void BM_expr_bsgs16_gpu(benchmark::State& state) {
  const auto& w = *setup().work;
  run(state, w.bsgs_expression(), [&] { return w.bsgs_eager(); }, w.bsgs_want());
}
void BM_expr_products8_gpu(benchmark::State& state) {
  const auto& w = *setup().work;
  run(state, w.products8_expression(), [&] { return w.products8_eager(); }, w.products8_want());
}
void BM_expr_poly15_gpu(benchmark::State& state) {
  const auto& w = *setup().work;
  run(state, w.poly15_expression(), [&] { return w.poly15_eager(); }, w.poly15_want());
}

// Rescaled sums of 8 products that fold the rescale into the fused pass: plaintext products (eager: fused
// without the fold, to isolate it) and real constant products (eager: the evaluator's multiply, add, rescale).
void BM_expr_plain8_rescaled_gpu(benchmark::State& state) {
  Setup& s = setup();
  const auto& w = *s.work;
  std::vector<decltype(lift(w.a[0]) * lift(w.diagonals[0]))> terms;
  std::vector<double> want(w.vx.size(), 0.0);
  for (std::size_t i = 0; i < cerium_bench::kProducts; ++i) {
    terms.push_back(lift(w.a[i]) * lift(w.diagonals[i]));
    for (std::size_t k = 0; k < want.size(); ++k) want[k] += w.va[i][k] * w.vd[i][k];
  }
  const auto e = rescale(sum(std::move(terms)));
  // The fold forced (the CUDA backend's default is not to fold) against the unfolded plan.
  run(state, e, [&] { return eval(e, EvalContext{s.evaluator}, plan::PlanOptions{.fold_rescale = false}); }, want,
      plan::PlanOptions{.fold_rescale = true});
}
void BM_expr_constants8_gpu(benchmark::State& state) {
  Setup& s = setup();
  const auto& w = *s.work;
  std::vector<decltype(lift(w.a[0]) * 0.5)> terms;
  std::vector<double> want(w.vx.size(), 0.0);
  const auto coefficient = [](std::size_t i) { return (i % 2 == 0 ? 1.0 : -1.0) / static_cast<double>(i + 2); };
  for (std::size_t i = 0; i < cerium_bench::kProducts; ++i) {
    terms.push_back(lift(w.a[i]) * coefficient(i));
    for (std::size_t k = 0; k < want.size(); ++k) want[k] += coefficient(i) * w.va[i][k];
  }
  const auto e = rescale(sum(std::move(terms)));
  run(state, e,
      [&] {
        Ciphertext acc = s.evaluator.multiply(*w.a[0], coefficient(0));
        for (std::size_t i = 1; i < cerium_bench::kProducts; ++i)
          s.evaluator.add_inplace(acc, s.evaluator.multiply(*w.a[i], coefficient(i)));
        s.evaluator.rescale_inplace(acc);
        return acc;
      },
      want);
}

}  // namespace

BENCHMARK(BM_expr_plain8_rescaled_gpu)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_expr_constants8_gpu)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_expr_bsgs16_gpu)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_expr_products8_gpu)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_expr_poly15_gpu)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
