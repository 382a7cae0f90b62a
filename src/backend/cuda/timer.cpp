#include "cerium/backend/cuda/timer.hpp"

#include <cuda_runtime_api.h>

#include <utility>

#include "cerium/backend/cuda/check.hpp"

namespace cerium::cuda {

namespace {
cudaEvent_t event(void* e) { return static_cast<cudaEvent_t>(e); }
}  // namespace

EventTimer::EventTimer(Stream stream) : stream_(std::move(stream)) {
  cudaEvent_t start = nullptr, stop = nullptr;
  CERIUM_CUDA_CHECK(cudaEventCreate(&start));
  start_ = start;
  if (const cudaError_t status = cudaEventCreate(&stop); status != cudaSuccess) {
    cudaEventDestroy(start);
    CERIUM_CUDA_CHECK(status);
  }
  stop_ = stop;
}

EventTimer::~EventTimer() {
  if (start_) cudaEventDestroy(event(start_));
  if (stop_) cudaEventDestroy(event(stop_));
}

EventTimer::EventTimer(EventTimer&& other) noexcept
    : start_(std::exchange(other.start_, nullptr)),
      stop_(std::exchange(other.stop_, nullptr)),
      stream_(std::move(other.stream_)) {}

EventTimer& EventTimer::operator=(EventTimer&& other) noexcept {
  if (this != &other) {
    std::swap(start_, other.start_);
    std::swap(stop_, other.stop_);
    std::swap(stream_, other.stream_);
  }
  return *this;
}

void EventTimer::start() {
  CERIUM_CUDA_CHECK(cudaEventRecord(event(start_), static_cast<cudaStream_t>(stream_.native_handle())));
}

void EventTimer::stop() {
  CERIUM_CUDA_CHECK(cudaEventRecord(event(stop_), static_cast<cudaStream_t>(stream_.native_handle())));
}

double EventTimer::elapsed_ms() const {
  CERIUM_CUDA_CHECK(cudaEventSynchronize(event(stop_)));
  float ms = 0.0f;
  CERIUM_CUDA_CHECK(cudaEventElapsedTime(&ms, event(start_), event(stop_)));
  return ms;
}

}  // namespace cerium::cuda
