// GPU NTT throughput against the device's own copy bandwidth.
//
// Each timed batch replays a CUDA graph of many transforms, each on its own slice of a pool larger than the L2
// cache: the graph removes the host's launch overhead from the figures (long fixed sequences will run as graphs),
// and the slices make every transform read cold data, as a real polynomial coming from HBM would. Times come
// from CUDA events around the replay, after warm-up.
//
// Counters: N, limbs, passes (over global memory), us (per transform), GB_s (the minimum traffic: every word
// read and written once, 2 x limbs x N x 4 bytes, over the time), copy_GB_s (a 1 GiB device-to-device copy,
// bytes read plus written, measured in the same process) and floor_ratio = time / (minimum traffic / copy
// bandwidth): 1.0 would be a transform as fast as copying its data once.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/device.hpp"
#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/ntt.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/backend/cuda/timer.hpp"
#include "cerium/math/ntt.hpp"
#include "cerium/math/primes.hpp"
#include "gpu_bench_support.hpp"

namespace {

using cerium::cuda::DeviceBuffer;
using cerium::cuda::EventTimer;
using cerium::cuda::NttPlan;
using cerium::cuda::Stream;

using cerium_bench::copy_bandwidth;
using cerium_bench::device_label;
using cerium_bench::kColdBytes;
using cerium_bench::kMiB;
using cerium_bench::native;

// Plan, a pool of random polynomials, and a captured graph of `reps` transforms over distinct slices.
struct Fixture {
  std::size_t n = 0, limbs = 0, reps = 0;
  bool forward = true;
  Stream stream = Stream::create();
  std::unique_ptr<NttPlan> plan;
  DeviceBuffer pool;
  std::unique_ptr<cerium_bench::CapturedGraph> graph;

  Fixture(std::size_t n_, std::size_t limbs_, bool forward_) : n(n_), limbs(limbs_), forward(forward_) {
    std::vector<cerium::math::NttTables> tables;
    for (auto q : cerium::math::generate_ntt_primes({.bits = 30, .count = limbs, .ring_degree = n}))
      tables.emplace_back(q, n);
    plan = std::make_unique<NttPlan>(tables, stream);

    const std::size_t slice = limbs * n;
    reps = std::clamp<std::size_t>((kColdBytes + 4 * slice - 1) / (4 * slice), 8, 4096);
    // The transforms keep the words below q, so replays stay valid input.
    pool = cerium_bench::random_pool(slice, reps, n * 977 + limbs, stream);
    graph = std::make_unique<cerium_bench::CapturedGraph>(stream, reps, [&](std::size_t r) {
      if (forward) plan->forward(pool.data() + r * slice, 0, limbs, stream);
      else plan->inverse(pool.data() + r * slice, 0, limbs, stream);
    });
  }
};

// Google Benchmark calls a function several times per configuration: keep the last fixture. The holder is
// never destroyed, so no CUDA call runs after the runtime's own teardown at exit.
Fixture& fixture(std::size_t n, std::size_t limbs, bool forward) {
  static auto* cached = new std::unique_ptr<Fixture>();
  auto& f = *cached;
  if (!f || f->n != n || f->limbs != limbs || f->forward != forward) {
    f.reset();  // free the old pool first
    f = std::make_unique<Fixture>(n, limbs, forward);
  }
  return *f;
}

void BM_ntt_gpu(benchmark::State& state, bool forward) {
  if (!cerium::cuda::has_cuda_device()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto limbs = static_cast<std::size_t>(state.range(1));
  Fixture& f = fixture(n, limbs, forward);
  const std::vector<double> per_transform = cerium_bench::time_replays(state, *f.graph);
  const double seconds = std::accumulate(per_transform.begin(), per_transform.end(), 0.0) /
                         static_cast<double>(std::max<std::size_t>(per_transform.size(), 1));
  const double bytes = 2.0 * static_cast<double>(limbs * n) * 4.0;
  const double copy = copy_bandwidth();
  state.counters["N"] = static_cast<double>(n);
  state.counters["limbs"] = static_cast<double>(limbs);
  state.counters["passes"] = f.plan->passes();
  state.counters["us"] = seconds * 1e6;
  state.counters["GB_s"] = bytes / seconds / 1e9;
  state.counters["copy_GB_s"] = copy / 1e9;
  state.counters["floor_ratio"] = seconds / (bytes / copy);
  state.SetLabel(device_label());
}

void BM_copy_gpu(benchmark::State& state) {
  if (!cerium::cuda::has_cuda_device()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const Stream stream = Stream::create();
  const auto words = static_cast<std::size_t>(state.range(0)) * kMiB / 4;
  DeviceBuffer source(words, stream), target(words, stream);
  source.fill_bytes(0x5a);
  target.copy_from(source);
  EventTimer timer(stream);
  double total_seconds = 0.0;
  std::int64_t copies = 0;
  for (auto _ : state) {
    timer.start();
    target.copy_from(source);
    timer.stop();
    const double seconds = timer.elapsed_ms() / 1e3;
    state.SetIterationTime(seconds);
    total_seconds += seconds;
    ++copies;
  }
  const double seconds = total_seconds / static_cast<double>(std::max<std::int64_t>(copies, 1));
  state.counters["MiB"] = static_cast<double>(state.range(0));
  state.counters["GB_s"] = 2.0 * static_cast<double>(source.bytes()) / seconds / 1e9;
  state.SetLabel(device_label());
}

void ntt_sizes(benchmark::internal::Benchmark* b) {
  for (int limbs : {1, 2, 4, 8, 16, 32, 64}) b->Args({1 << 16, limbs});
  for (int limbs : {1, 64}) b->Args({1 << 14, limbs});
  for (int limbs : {1, 32}) b->Args({1 << 17, limbs});
  b->Args({1 << 13, 64});
  // A fixed count: each iteration replays a whole graph of many transforms but reports the time of one, so an
  // adaptive count (aiming at a minimum reported time) would run for minutes.
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(10);
}

BENCHMARK(BM_copy_gpu)
    ->Name("copy_d2d_gpu")
    ->Arg(256)
    ->Arg(1024)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(0.2);
BENCHMARK_CAPTURE(BM_ntt_gpu, forward, true)->Name("ntt_forward_gpu")->Apply(ntt_sizes);
BENCHMARK_CAPTURE(BM_ntt_gpu, inverse, false)->Name("ntt_inverse_gpu")->Apply(ntt_sizes);

}  // namespace
