#include "local_compute.hpp"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "cerium/backend/cpu_backend.hpp"
#include "cerium/core/check.hpp"

namespace cerium::dist {

namespace {

// The CPU backend on host limbs: the sharded backend's words are this backend's, limb for limb.
class CpuLocalCompute final : public LocalComputeOf<backend::CpuBackend> {
 public:
  CpuLocalCompute() : LocalComputeOf(backend::CpuBackend{}) {}

  Device device() const override { return Device::cpu(); }
  bool multi_shard() const override { return true; }
  void synchronize() const override {}

  ring::RnsPoly convert_basis(const ring::RnsPoly& y, const ring::RnsBasisPtr& to) const override {
    require<MismatchError>(y.form() == ring::PolyForm::coefficient,
                           "basis conversion takes a polynomial in coefficient form, not {} form",
                           ring::to_string(y.form()));
    return converter(y.basis_ptr(), to).convert(y);
  }

 private:
  using Primes = std::vector<std::uint32_t>;
  // Converters are built once per pair of prime sets (their constants cost O(from x to) products).
  const ring::BasisConverter& converter(const ring::RnsBasisPtr& from, const ring::RnsBasisPtr& to) const {
    const std::lock_guard lock(mutex_);
    auto& slot = converters_[{Primes(from->primes().begin(), from->primes().end()),
                              Primes(to->primes().begin(), to->primes().end())}];
    if (slot == nullptr) slot = std::make_unique<const ring::BasisConverter>(from, to);
    return *slot;
  }
  mutable std::mutex mutex_;
  mutable std::map<std::pair<Primes, Primes>, std::unique_ptr<const ring::BasisConverter>> converters_;
};

}  // namespace

std::unique_ptr<LocalCompute> make_cpu_local_compute() { return std::make_unique<CpuLocalCompute>(); }

#if !defined(CERIUM_HAS_CUDA)
std::unique_ptr<LocalCompute> make_cuda_local_compute(rlwe::ContextPtr, int device) {
  throw UnsupportedError(fmt::format("a sharded backend on cuda:{} needs the CUDA backend, and this build of Cerium "
                                     "has none: build with -DCERIUM_CUDA=ON on a machine with the CUDA Toolkit, or "
                                     "shard over CPU ranks (ShardedOptions::device = Device::cpu())",
                                     device));
}
#endif

}  // namespace cerium::dist
