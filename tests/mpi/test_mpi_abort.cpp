// A rank that fails ends the whole MPI job instead of leaving the others waiting: rank 1 throws before a
// collective every other rank enters. ctest expects the job's abort message naming rank 1's error, before its
// timeout: a hang would be a timeout, which fails the test.
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/dist/mpi.hpp"

int main(int argc, char** argv) {
  cerium::dist::MpiSession mpi(&argc, &argv);
  return cerium::dist::run_mpi_ranks([](cerium::dist::Communicator& comm) {
    if (comm.rank() == 1) throw cerium::InvalidArgument("rank 1's planted failure");
    std::vector<std::uint32_t> words(4, 7);
    comm.broadcast(words, 0);  // the others would wait here for rank 1 forever
    comm.barrier();
    return 0;
  });
}
