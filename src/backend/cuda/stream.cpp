#include "cerium/backend/cuda/stream.hpp"

#include <cuda_runtime_api.h>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/core/log.hpp"

namespace cerium::cuda {

struct Stream::State {
  cudaStream_t handle = nullptr;
  explicit State(unsigned flags) { CERIUM_CUDA_CHECK(cudaStreamCreateWithFlags(&handle, flags)); }
  ~State() {
    // A destructor cannot throw; a failure here means the context is already broken and will be reported by the
    // next checked call.
    if (const cudaError_t status = cudaStreamDestroy(handle); status != cudaSuccess)
      log(LogLevel::warn, "cudaStreamDestroy failed: {}", cudaGetErrorString(status));
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

Stream Stream::create() {
  Stream stream;
  stream.state_ = std::make_shared<State>(cudaStreamNonBlocking);
  return stream;
}

Stream Stream::create_blocking() {
  Stream stream;
  stream.state_ = std::make_shared<State>(cudaStreamDefault);
  return stream;
}

void* Stream::native_handle() const { return state_ ? static_cast<void*>(state_->handle) : nullptr; }

void Stream::synchronize() const {
  CERIUM_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(native_handle())));
}

void Stream::wait(const Stream& other) const {
  cudaEvent_t event = nullptr;
  CERIUM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  const cudaError_t recorded = cudaEventRecord(event, static_cast<cudaStream_t>(other.native_handle()));
  const cudaError_t waited =
      recorded == cudaSuccess ? cudaStreamWaitEvent(static_cast<cudaStream_t>(native_handle()), event, 0) : recorded;
  (void)cudaEventDestroy(event);  // released once the wait is done
  CERIUM_CUDA_CHECK(waited);
}

}  // namespace cerium::cuda
