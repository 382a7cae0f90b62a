#pragma once
// Ranks as MPI processes (Debian's Open MPI): CI runs the sharded code as several real processes
// (`mpirun -np 4 --oversubscribe`), and the same program spans several nodes. Built when CMake finds MPI
// (target Cerium::dist_mpi); this header does not include mpi.h.
//
// Failures: MPI calls return their errors (MPI_ERRORS_RETURN on the communicator) and become CommunicationError
// naming the call; a rank that cannot go on calls abort(), which ends every rank of the job (MPI_Abort) rather
// than leaving them waiting in a collective.

#include <functional>
#include <memory>
#include <string>

#include "cerium/dist/communicator.hpp"

namespace cerium::dist {

// MPI for the life of the object (MPI_Init_thread with MPI_THREAD_FUNNELED; MPI_Finalize on destruction unless
// MPI was initialized by someone else). One per process, created before any MPI communicator.
class MpiSession {
 public:
  // Initializes MPI with main's arguments, unless it is initialized already.
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  // True when this process was started by an MPI launcher with more than one rank.
  static bool launched_with_several_ranks();

 private:
  bool owns_ = false;
};

// A communicator over a duplicate of MPI_COMM_WORLD (so that other MPI traffic cannot match its messages).
std::unique_ptr<Communicator> make_mpi_communicator();

// Ends every rank of the MPI job with this reason (printed on stderr) and a non-zero exit code.
[[noreturn]] void mpi_abort(const std::string& reason);

// Runs body on this process's rank of an MPI communicator; an exception that leaves body on any rank ends the whole
// job through mpi_abort (naming the rank and the error), so the other ranks never wait in a collective for it.
// Returns body's result on success.
int run_mpi_ranks(const std::function<int(Communicator&)>& body);

}  // namespace cerium::dist
