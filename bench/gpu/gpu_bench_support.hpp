#pragma once
// What every GPU benchmark shares: the device's label, the median, the copy bandwidth measured in the same
// process, which turns a kernel's minimum traffic into its floor (floor_ratio = time / (bytes / copy bandwidth)),
// and the timed replay of a captured graph.

#include <benchmark/benchmark.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/device.hpp"
#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/memory.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/backend/cuda/timer.hpp"
#include "cerium/ckks/parameters.hpp"

namespace cerium_bench {

inline constexpr std::size_t kMiB = std::size_t{1} << 20;
inline constexpr std::size_t kColdBytes = 256 * kMiB;  // per replay: over four times the H200's 60 MB of L2

// The parameters the evaluator benchmarks share: N = 2^16, 2 base primes + 19 two-prime levels of 28 bits = 40
// limbs at the top.
inline cerium::ckks::CkksConfig evaluator_bench_config(int dnum) {
  return cerium::ckks::CkksConfig{.log_n = 16, .levels = 19, .level_width = 2, .level_prime_bits = 28,
                                  .base_primes = 2, .base_prime_bits = 31, .dnum = dnum};
}

// What an operation must move, in limbs of N words (each input read and each output written once, the key's
// limbs once), for its memory floor: the key limbs a key switch reads at `limbs` limbs (both parts of each digit
// over Q_l and P); a product of two ciphertexts relinearized and rescaled (`dropped` limbs fewer out); a rotation;
// a rescale.
inline double key_limbs(std::size_t limbs, std::size_t dnum, std::size_t alpha) {
  return 2.0 * static_cast<double>(dnum * (limbs + alpha));
}
inline double multiply_rescale_limbs(double limbs, double dropped, double key) {
  return 4.0 * limbs + key + 2.0 * (limbs - dropped);
}
inline double rotate_limbs(double limbs, double key) { return 2.0 * limbs + key + 2.0 * limbs; }
inline double rescale_limbs(double limbs, double dropped) { return 2.0 * limbs + 2.0 * (limbs - dropped); }

inline cudaStream_t native(const cerium::cuda::Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline const std::string& device_label() {
  static const std::string label = [] {
    const auto info = cerium::cuda::device_info(0);
    return info.name + " (" + std::to_string(info.sm_count) + " SMs)";
  }();
  return label;
}

// Bytes per second of a 1 GiB device-to-device copy, counting bytes read plus bytes written; median of 10.
inline double copy_bandwidth() {
  static const double bandwidth = [] {
    using cerium::cuda::DeviceBuffer;
    const auto stream = cerium::cuda::Stream::create();
    const std::size_t words = (std::size_t{1} << 30) / 4;
    DeviceBuffer source(words, stream), target(words, stream);
    source.fill_bytes(0x5a);
    target.fill_bytes(0);
    cerium::cuda::EventTimer timer(stream);
    for (int i = 0; i < 3; ++i) target.copy_from(source);
    std::vector<double> seconds;
    for (int i = 0; i < 10; ++i) {
      timer.start();
      target.copy_from(source);
      timer.stop();
      seconds.push_back(timer.elapsed_ms() / 1e3);
    }
    return 2.0 * static_cast<double>(source.bytes()) / median(seconds);
  }();
  return bandwidth;
}

// Median device seconds of `reps` calls, each timed with CUDA events on the backend's work stream, after `warmups`
// calls (plans, the memory pool, clocks).
template <class Call>
double median_call_seconds(Call&& call, int reps, int warmups = 3) {
  const auto& stream = cerium::cuda::work_stream();
  for (int i = 0; i < warmups; ++i) call();
  stream.synchronize();
  cerium::cuda::EventTimer timer(stream);
  std::vector<double> seconds;
  for (int i = 0; i < reps; ++i) {
    timer.start();
    call();
    timer.stop();
    seconds.push_back(timer.elapsed_ms() / 1e3);
  }
  return median(seconds);
}

// With CERIUM_BENCH_PROFILE=1 in the environment, one more call between cudaProfilerStart and Stop: a profiler
// started with --profile-from-start off (scripts/gpu-profile.sh) then sees exactly one warm call per benchmark.
template <class Call>
void profile_once(const cerium::cuda::Stream& stream, Call&& call) {
  static const bool enabled = [] {
    const char* v = std::getenv("CERIUM_BENCH_PROFILE");
    return v != nullptr && std::string(v) == "1";
  }();
  if (!enabled) return;
  CERIUM_CUDA_CHECK(cudaProfilerStart());
  call();
  stream.synchronize();
  CERIUM_CUDA_CHECK(cudaProfilerStop());
}

// `reps` copies of one random slice of `slice` words, below 2^29 (below every prime used, never zeros), so that
// each replayed call reads its own slice and the pool as a whole is larger than the L2 cache.
inline cerium::cuda::DeviceBuffer random_pool(std::size_t slice, std::size_t reps, std::uint64_t seed,
                                              const cerium::cuda::Stream& stream) {
  cerium::cuda::DeviceBuffer pool(reps * slice, stream);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> dist(0, (1u << 29) - 1);
  std::vector<std::uint32_t> host(slice);
  for (auto& x : host) x = dist(rng);
  pool.upload(host);
  for (std::size_t r = 1; r < reps; ++r)
    CERIUM_CUDA_CHECK(cudaMemcpyAsync(pool.data() + r * slice, pool.data(), 4 * slice, cudaMemcpyDeviceToDevice,
                                      native(stream)));
  return pool;
}

// A CUDA graph of `reps` calls, enqueue(r) for r = 0 .. reps-1, captured on a stream and warmed up: replaying it
// times many launches without the host's launch overhead.
class CapturedGraph {
 public:
  template <class Enqueue>
  CapturedGraph(const cerium::cuda::Stream& stream, std::size_t reps, Enqueue&& enqueue)
      : stream_(stream), reps_(reps) {
    cudaGraph_t captured = nullptr;
    CERIUM_CUDA_CHECK(cudaStreamBeginCapture(native(stream_), cudaStreamCaptureModeThreadLocal));
    for (std::size_t r = 0; r < reps; ++r) enqueue(r);
    CERIUM_CUDA_CHECK(cudaStreamEndCapture(native(stream_), &captured));
    CERIUM_CUDA_CHECK(cudaGraphInstantiate(&graph_, captured, 0));
    CERIUM_CUDA_CHECK(cudaGraphDestroy(captured));
    for (int i = 0; i < 2; ++i) replay();  // warm-up: module load, caches, clocks
    stream_.synchronize();
  }
  ~CapturedGraph() {
    if (graph_) cudaGraphExecDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  void replay() { CERIUM_CUDA_CHECK(cudaGraphLaunch(graph_, native(stream_))); }
  const cerium::cuda::Stream& stream() const { return stream_; }
  std::size_t reps() const { return reps_; }  // calls per replay

 private:
  cerium::cuda::Stream stream_;
  std::size_t reps_ = 0;
  cudaGraphExec_t graph_ = nullptr;
};

// The benchmark loop: each iteration replays the graph once between CUDA events and reports the time of one
// call (manual time). Returns the seconds per call of every iteration, for the caller's statistic.
inline std::vector<double> time_replays(benchmark::State& state, CapturedGraph& graph) {
  cerium::cuda::EventTimer timer(graph.stream());
  std::vector<double> per_call;
  for (auto _ : state) {
    timer.start();
    graph.replay();
    timer.stop();
    const double seconds = timer.elapsed_ms() / 1e3 / static_cast<double>(graph.reps());
    state.SetIterationTime(seconds);
    per_call.push_back(seconds);
  }
  return per_call;
}

}  // namespace cerium_bench
