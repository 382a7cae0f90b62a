#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>
#include <fstream>
#include <thread>

#include "cerium/core/check.hpp"
#include "cerium/dist/nccl.hpp"

namespace cerium::dist {

namespace {

static_assert(sizeof(ncclUniqueId) == sizeof(NcclUniqueId), "NCCL's unique id has another size");

void check_cuda(cudaError_t code, const char* call) {
  if (code == cudaSuccess) return;
  throw DeviceError(fmt::format("{} failed: {} ({})", call, cudaGetErrorString(code), static_cast<int>(code)));
}

void check_nccl(ncclResult_t code, const char* call) {
  if (code == ncclSuccess || code == ncclInProgress) return;
  throw CommunicationError(fmt::format("{} failed: {} (NCCL error {})", call, ncclGetErrorString(code),
                                       static_cast<int>(code)));
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(int rank, int size, const NcclUniqueId& id, const NcclOptions& options)
      : Communicator(rank, size), options_(options) {
    check_cuda(cudaSetDevice(options.device), "cudaSetDevice");
    if (options.stream == nullptr) {
      check_cuda(cudaStreamCreateWithFlags(&own_stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      stream_ = own_stream_;
    } else {
      stream_ = static_cast<cudaStream_t>(options.stream);
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // calls return at once; wait() polls with a deadline and can abort
    ncclUniqueId nccl_id;
    std::memcpy(&nccl_id, id.bytes.data(), sizeof(nccl_id));
    check_nccl(ncclCommInitRankConfig(&comm_, size, nccl_id, rank, &config), "ncclCommInitRankConfig");
    wait_for_comm("ncclCommInitRankConfig");
    check_cuda(cudaMalloc(&scratch_, sizeof(std::uint64_t)), "cudaMalloc");
  }
  ~NcclCommunicator() override {
    if (comm_ != nullptr) {
      // A non-blocking communicator finalizes in the background: destroying it before that returns is refused
      // ("Attempt to use communicator before the previous operation returned ncclSuccess") and leaks it, and its
      // unfinished state then disturbed the next communicator's collectives (found on the H100).
      if (ncclCommFinalize(comm_) == ncclInProgress) {
        const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
        ncclResult_t state = ncclInProgress;
        while (state == ncclInProgress && std::chrono::steady_clock::now() < deadline) {
          if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) break;
          if (state == ncclInProgress) std::this_thread::yield();
        }
        if (state == ncclInProgress) ncclCommAbort(comm_);
        else ncclCommDestroy(comm_);
      } else {
        ncclCommDestroy(comm_);
      }
    }
    if (scratch_ != nullptr) cudaFree(scratch_);
    if (own_stream_ != nullptr) cudaStreamDestroy(own_stream_);
  }
  std::string transport() const override { return "nccl"; }
  bool device_memory() const override { return true; }

 protected:
  void do_all_gather(std::span<const std::uint32_t> mine, std::span<std::uint32_t> all,
                     std::span<const std::size_t> counts) override {
    // NCCL has no gather of unequal counts: one broadcast per rank, grouped into one launch.
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    std::size_t offset = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      const void* source = static_cast<int>(r) == rank() ? static_cast<const void*>(mine.data()) : nullptr;
      if (counts[r] != 0) {
        check_nccl(ncclBroadcast(source, all.data() + offset, counts[r], ncclUint32, static_cast<int>(r), comm_, stream_),
                   "ncclBroadcast");
      }
      offset += counts[r];
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    wait("all-gather");
  }
  void do_broadcast(std::span<std::byte> bytes, int root) override {
    check_nccl(ncclBroadcast(bytes.data(), bytes.data(), bytes.size(), ncclUint8, root, comm_, stream_),
               "ncclBroadcast");
    wait("broadcast");
  }
  void do_all_reduce_sum(std::span<std::uint64_t> words) override {
    check_nccl(ncclAllReduce(words.data(), words.data(), words.size(), ncclUint64, ncclSum, comm_, stream_),
               "ncclAllReduce");
    wait("all-reduce");
  }
  void do_send(std::span<const std::uint32_t> words, int peer) override {
    check_nccl(ncclSend(words.data(), words.size(), ncclUint32, peer, comm_, stream_), "ncclSend");
    wait("send");
  }
  void do_receive(std::span<std::uint32_t> words, int peer) override {
    check_nccl(ncclRecv(words.data(), words.size(), ncclUint32, peer, comm_, stream_), "ncclRecv");
    wait("receive");
  }
  void do_barrier() override {
    check_nccl(ncclAllReduce(scratch_, scratch_, 1, ncclUint64, ncclSum, comm_, stream_), "ncclAllReduce (barrier)");
    wait("barrier");
  }

 private:
  // Until the communicator has no call in progress, or the deadline: then abort and throw.
  void wait_for_comm(const char* what) {
    const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
    ncclResult_t state = ncclInProgress;
    while (true) {
      check_nccl(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError");
      if (state != ncclInProgress) break;
      if (std::chrono::steady_clock::now() > deadline) fail(what);
      std::this_thread::yield();
    }
    check_nccl(state, what);
  }
  // Until the stream has run the collective (or the communicator reports an error, or the deadline).
  void wait(const char* what) {
    wait_for_comm(what);
    const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
    while (true) {
      const cudaError_t done = cudaStreamQuery(stream_);
      if (done == cudaSuccess) return;
      if (done != cudaErrorNotReady) check_cuda(done, "cudaStreamQuery");
      ncclResult_t state = ncclSuccess;
      check_nccl(ncclCommGetAsyncError(comm_, &state), "ncclCommGetAsyncError");
      check_nccl(state, what);
      if (std::chrono::steady_clock::now() > deadline) fail(what);
      std::this_thread::yield();
    }
  }
  [[noreturn]] void fail(const char* what) {
    ncclCommAbort(comm_);
    comm_ = nullptr;
    throw CommunicationError(fmt::format("rank {}: the {} did not finish within {} ms (a rank failed or took another "
                                         "path); the NCCL communicator is aborted",
                                         rank(), what, options_.timeout.count()));
  }

  NcclOptions options_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaStream_t own_stream_ = nullptr;
  void* scratch_ = nullptr;
};

}  // namespace

NcclUniqueId nccl_unique_id() {
  ncclUniqueId id;
  check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  NcclUniqueId out;
  std::memcpy(out.bytes.data(), &id, sizeof(id));
  return out;
}

NcclUniqueId nccl_unique_id_over(Communicator& comm) {
  NcclUniqueId id;
  if (comm.rank() == 0) id = nccl_unique_id();
  comm.broadcast_bytes(id.bytes, 0);
  return id;
}

NcclUniqueId nccl_unique_id_via_file(const std::filesystem::path& path, int rank, std::chrono::milliseconds timeout) {
  NcclUniqueId id;
  if (rank == 0) {
    id = nccl_unique_id();
    const std::filesystem::path partial = path.string() + ".partial";
    {
      std::ofstream out(partial, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(id.bytes.data()), static_cast<std::streamsize>(id.bytes.size()));
      require<SystemError>(static_cast<bool>(out), "cannot write NCCL's unique id to {}", partial.string());
    }
    std::filesystem::rename(partial, path);
    return id;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!std::filesystem::exists(path)) {
    require<CommunicationError>(std::chrono::steady_clock::now() < deadline,
                                "rank {} waited {} ms for rank 0's NCCL id in {}", rank, timeout.count(),
                                path.string());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(id.bytes.data()), static_cast<std::streamsize>(id.bytes.size()));
  require<CommunicationError>(in.gcount() == static_cast<std::streamsize>(id.bytes.size()),
                              "{} holds {} bytes, not an NCCL id of {}", path.string(), in.gcount(), id.bytes.size());
  return id;
}

std::unique_ptr<Communicator> make_nccl_communicator(int rank, int size, const NcclUniqueId& id,
                                                     const NcclOptions& options) {
  return std::make_unique<NcclCommunicator>(rank, size, id, options);
}

}  // namespace cerium::dist
