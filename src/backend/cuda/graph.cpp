#include "cerium/backend/cuda/graph.hpp"

#include <cuda_runtime_api.h>

#include <exception>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/memory.hpp"
#include "cerium/core/check.hpp"
#include "cerium/core/log.hpp"

namespace cerium::cuda {

struct Graph::State {
  Stream stream;
  cudaGraphExec_t exec = nullptr;
  ~State() {
    if (exec != nullptr) {
      if (const cudaError_t status = cudaGraphExecDestroy(exec); status != cudaSuccess)
        log(LogLevel::warn, "cudaGraphExecDestroy failed: {}", cudaGetErrorString(status));
    }
  }
};

Graph Graph::capture(const Stream& stream, const std::function<void()>& work) {
  require(!stream.is_default(), "a CUDA graph cannot be captured on the legacy default stream; use a created stream");
  const auto native = static_cast<cudaStream_t>(stream.native_handle());
  CERIUM_CUDA_CHECK(cudaStreamBeginCapture(native, cudaStreamCaptureModeThreadLocal));
  try {
    work();
  } catch (...) {
    cudaGraph_t abandoned = nullptr;
    (void)cudaStreamEndCapture(native, &abandoned);  // leave the stream usable
    if (abandoned != nullptr) (void)cudaGraphDestroy(abandoned);
    (void)cudaGetLastError();
    throw;
  }
  cudaGraph_t captured = nullptr;
  CERIUM_CUDA_CHECK(cudaStreamEndCapture(native, &captured));
  Graph graph;
  graph.state_ = std::make_shared<State>();
  graph.state_->stream = stream;
  const cudaError_t status = cudaGraphInstantiate(&graph.state_->exec, captured, 0);
  (void)cudaGraphDestroy(captured);
  CERIUM_CUDA_CHECK(status);
  return graph;
}

Graph Graph::capture(const std::function<void()>& work) { return capture(work_stream(0), work); }

void Graph::replay() const { replay(state_ != nullptr ? state_->stream : Stream()); }

void Graph::replay(const Stream& stream) const {
  require(state_ != nullptr, "replay of an empty CUDA graph");
  CERIUM_CUDA_CHECK(cudaGraphLaunch(state_->exec, static_cast<cudaStream_t>(stream.native_handle())));
}

}  // namespace cerium::cuda
