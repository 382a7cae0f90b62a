#include "cerium/boot/cuda_bootstrap_graph.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/memory.hpp"
#include "cerium/core/check.hpp"

namespace cerium::boot {
namespace {

// The CUDA backend's work stream, on which every operation of the bootstrapper is queued.
const cuda::Stream& stream_of(const CudaBootstrapper& b) {
  return cuda::work_stream(b.evaluator().backend().device().index);
}

// dst's words := src's (same parts and limbs, one device shard each), ordered on the backend's stream.
void copy_words(Ciphertext& dst, const Ciphertext& src, const cuda::Stream& stream) {
  for (std::size_t i = 0; i < src.size(); ++i) {
    const auto& from = src.part(i);
    auto& to = dst.part(i);
    require<UnsupportedError>(from.shards().size() == 1 && to.shards().size() == 1,
                              "a bootstrap graph takes device ciphertexts in one shard (CudaEvaluator::upload)");
    const std::size_t bytes = from.limb_count() * from.basis().ring_degree() * sizeof(std::uint32_t);
    CERIUM_CUDA_CHECK(cudaMemcpyAsync(to.shards()[0].data(), from.shards()[0].data(), bytes,
                                      cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream.native_handle())));
  }
}

}  // namespace

CudaBootstrapGraph::CudaBootstrapGraph(const CudaBootstrapper& bootstrapper, const Ciphertext& example)
    : bootstrapper_(&bootstrapper), input_(example.clone()) {
  const cuda::Stream& stream = stream_of(bootstrapper);
  output_ = bootstrapper.bootstrap(input_);  // plans and pool warmed; the output's shape and buffers
  stream.synchronize();
  graph_ = cuda::Graph::capture(stream, [&] {
    const Ciphertext result = bootstrapper_->bootstrap(input_);
    copy_words(output_, result, stream);
  });
}

Ciphertext CudaBootstrapGraph::bootstrap(const Ciphertext& input) const {
  require(input.level() == input_.level() && input.scale() == input_.scale() && input.slots() == input_.slots() &&
              input.size() == input_.size(),
          "bootstrap graph: the input (level {}, scale 2^{:.4f}, {} slots, {} parts) is not the captured shape "
          "(level {}, scale 2^{:.4f}, {} slots, {} parts); make a CudaBootstrapGraph for this shape",
          input.level(), std::log2(input.scale()), input.slots(), input.size(), input_.level(),
          std::log2(input_.scale()), input_.slots(), input_.size());
  require_same_context(input_.context(), input.context(), "bootstrap graph");
  const cuda::Stream& stream = stream_of(*bootstrapper_);
  copy_words(input_, input, stream);
  graph_.replay();
  return output_.clone();
}

}  // namespace cerium::boot
