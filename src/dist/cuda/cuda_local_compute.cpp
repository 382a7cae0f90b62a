// A sharded backend's rank on a GPU: the CUDA backend's routines on this rank's limbs (built with the CUDA
// backend only; src/dist/local_compute.cpp refuses a GPU rank elsewhere).

#include <utility>

#include "../local_compute.hpp"
#include "cerium/backend/cuda_backend.hpp"

namespace cerium::dist {

namespace {

// The CUDA backend on one device; its polynomials are single device shards (the backend's kernels take one
// contiguous run of limbs), so the sharded backend hands it one run at a time.
class CudaLocalCompute final : public LocalComputeOf<backend::CudaBackend> {
 public:
  CudaLocalCompute(rlwe::ContextPtr context, int device)
      : LocalComputeOf(backend::CudaBackend(std::move(context), backend::CudaBackendOptions{.device = device})) {}

  Device device() const override { return backend().device(); }
  bool multi_shard() const override { return false; }
  void synchronize() const override { backend().synchronize(); }
  ring::RnsPoly convert_basis(const ring::RnsPoly& y, const ring::RnsBasisPtr& to) const override {
    return backend().convert_basis(y, to);
  }
};

}  // namespace

std::unique_ptr<LocalCompute> make_cuda_local_compute(rlwe::ContextPtr context, int device) {
  return std::make_unique<CudaLocalCompute>(std::move(context), device);
}

}  // namespace cerium::dist
