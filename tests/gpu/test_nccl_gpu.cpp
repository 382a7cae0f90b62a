// The NCCL communicator on the GPU machine with one rank: its collectives run through NCCL on device memory and
// deliver the words (an all-gather, a broadcast, exact 64-bit sums of residues near 2^32, a barrier), the id
// travels through a file, and the bytes are counted as on the other transports; and a sharded evaluator on that
// rank, its gathers in device memory through NCCL, gives the CPU evaluator's words.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <filesystem>
#include <vector>

#include "cerium/dist/nccl.hpp"
#include "unit/dist/sharded_checks.hpp"
#include "gpu_test_support.hpp"
#include "support/catch.hpp"

using namespace cerium::dist;

namespace {

template <class T>
struct DeviceVector {
  T* data = nullptr;
  std::size_t size = 0;
  explicit DeviceVector(const std::vector<T>& host) : size(host.size()) {
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&data), size * sizeof(T)) == cudaSuccess);
    REQUIRE(cudaMemcpy(data, host.data(), size * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  ~DeviceVector() { cudaFree(data); }
  std::vector<T> host() const {
    std::vector<T> out(size);
    REQUIRE(cudaMemcpy(out.data(), data, size * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return out;
  }
  std::span<T> span() { return {data, size}; }
};

}  // namespace

TEST_CASE("NCCL communicator, one rank: collectives on device words", "[gpu][dist][nccl][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const auto path = std::filesystem::temp_directory_path() / "cerium_nccl_id_test";
  std::filesystem::remove(path);
  const NcclUniqueId id = nccl_unique_id_via_file(path, 0);
  auto comm = make_nccl_communicator(0, 1, id);
  REQUIRE(comm->device_memory());
  REQUIRE(comm->transport() == "nccl");

  const std::vector<std::uint32_t> words = {1, 2, 3, 0xfffffff0u, 5};
  DeviceVector<std::uint32_t> mine(words), all(std::vector<std::uint32_t>(words.size(), 0));
  const std::vector<std::size_t> counts = {words.size()};
  comm->all_gather(std::span<const std::uint32_t>(mine.data, mine.size), all.span(), counts);
  REQUIRE(all.host() == words);

  DeviceVector<std::uint32_t> broadcast(words);
  comm->broadcast(broadcast.span(), 0);
  REQUIRE(broadcast.host() == words);

  DeviceVector<std::uint64_t> sums(std::vector<std::uint64_t>{0xfffffff0u, 0xffffffffu});
  comm->all_reduce_sum(sums.span());
  REQUIRE(sums.host() == std::vector<std::uint64_t>{0xfffffff0u, 0xffffffffu});
  comm->barrier();
  REQUIRE(comm->traffic().count(Collective::all_gather) == 1);
  REQUIRE(comm->traffic().received() == 0);  // one rank receives nothing from others
  std::filesystem::remove(path);
}

TEST_CASE("sharded evaluator over NCCL, one rank: the CPU evaluator's words", "[gpu][dist][nccl][sharded]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  using namespace sharded_test;
  const ProgramCase c(73);
  const auto path = std::filesystem::temp_directory_path() / "cerium_nccl_sharded_id_test";
  std::filesystem::remove(path);
  auto comm = make_nccl_communicator(0, 1, nccl_unique_id_via_file(path, 0));
  ShardedEvaluator ev(c.f.context, ShardedBackend(*comm, c.f.context, {.device = Device::cuda(0)}));
  ev.set_relinearization_key(c.f.evaluator.relinearization_key());
  ev.set_galois_keys(c.f.evaluator.galois_keys());
  c.check(ev);
  CHECK(comm->traffic().count(Collective::all_gather) > 0);
  std::filesystem::remove(path);
}
