#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/dist/mpi.hpp"

namespace cerium::dist {

namespace {

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw CommunicationError(fmt::format("{} failed: {} (MPI error {})", call, std::string(text, length), code));
}

int checked_count(std::size_t count, const char* what) {
  require<CommunicationError>(count <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                              "{}: {} elements is past MPI's int counts; split the transfer", what, count);
  return static_cast<int>(count);
}

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() : Communicator(world_rank(), world_size()) {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  std::string transport() const override { return "mpi"; }

 protected:
  void do_all_gather(std::span<const std::uint32_t> mine, std::span<std::uint32_t> all,
                     std::span<const std::size_t> counts) override {
    std::vector<int> sizes(counts.size()), offsets(counts.size());
    std::size_t offset = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      sizes[r] = checked_count(counts[r], "MPI_Allgatherv");
      offsets[r] = checked_count(offset, "MPI_Allgatherv");
      offset += counts[r];
    }
    check(MPI_Allgatherv(mine.data(), checked_count(mine.size(), "MPI_Allgatherv"), MPI_UINT32_T, all.data(),
                         sizes.data(), offsets.data(), MPI_UINT32_T, comm_),
          "MPI_Allgatherv");
  }
  void do_broadcast(std::span<std::byte> bytes, int root) override {
    check(MPI_Bcast(bytes.data(), checked_count(bytes.size(), "MPI_Bcast"), MPI_BYTE, root, comm_), "MPI_Bcast");
  }
  void do_all_reduce_sum(std::span<std::uint64_t> words) override {
    check(MPI_Allreduce(MPI_IN_PLACE, words.data(), checked_count(words.size(), "MPI_Allreduce"), MPI_UINT64_T,
                        MPI_SUM, comm_),
          "MPI_Allreduce");
  }
  void do_send(std::span<const std::uint32_t> words, int peer) override {
    check(MPI_Send(words.data(), checked_count(words.size(), "MPI_Send"), MPI_UINT32_T, peer, 0, comm_), "MPI_Send");
  }
  void do_receive(std::span<std::uint32_t> words, int peer) override {
    MPI_Status status;
    check(MPI_Recv(words.data(), checked_count(words.size(), "MPI_Recv"), MPI_UINT32_T, peer, 0, comm_, &status),
          "MPI_Recv");
    int received = 0;
    MPI_Get_count(&status, MPI_UINT32_T, &received);
    require<CommunicationError>(static_cast<std::size_t>(received) == words.size(),
                                "rank {} expected {} words from rank {} and got {}", rank(), words.size(), peer,
                                received);
  }
  void do_barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  owns_ = true;
  // Cerium calls MPI from the thread that made the session only; an MPI without even that support would
  // misbehave in ways no later call could name.
  require<UnsupportedError>(provided >= MPI_THREAD_FUNNELED,
                            "MPI_Init_thread: this MPI provides thread level {} and Cerium needs MPI_THREAD_FUNNELED "
                            "({}); use an MPI built with thread support",
                            provided, static_cast<int>(MPI_THREAD_FUNNELED));
}

MpiSession::~MpiSession() {
  if (owns_) MPI_Finalize();
}

bool MpiSession::launched_with_several_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value) > 1;
  }
  return false;
}

std::unique_ptr<Communicator> make_mpi_communicator() { return std::make_unique<MpiCommunicator>(); }

void mpi_abort(const std::string& reason) {
  std::fprintf(stderr, "cerium: rank %d ends the MPI job: %s\n", world_rank(), reason.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

int run_mpi_ranks(const std::function<int(Communicator&)>& body) {
  std::unique_ptr<Communicator> comm;
  try {
    comm = make_mpi_communicator();
    return body(*comm);
  } catch (const std::exception& e) {
    mpi_abort(fmt::format("rank {} failed: {}", world_rank(), e.what()));
  } catch (...) {
    mpi_abort(fmt::format("rank {} failed with an unknown exception", world_rank()));
  }
}

}  // namespace cerium::dist
