#pragma once
// Ranks as GPUs through NCCL: one process (or thread) per GPU, the words of every collective in device memory,
// queued on a CUDA stream (the CUDA backend's work stream when given, so the collectives are ordered with the
// kernels and can be captured in CUDA graphs). Built when the CUDA backend is and NCCL is found
// (target Cerium::dist_nccl); this header does not include nccl.h.
//
// The unique id that joins the ranks comes from rank 0: through MPI when launched by mpirun (so several nodes work
// unchanged: nccl_unique_id_over(mpi_communicator)), or through a file on one node (nccl_unique_id_via_file).
//
// Failures: every NCCL call is checked; the communicator is non-blocking, and a collective that does not finish
// within the timeout (a rank died or took another path) aborts the communicator (ncclCommAbort) and throws
// CommunicationError on this rank, whose failure then reaches the others as NCCL errors rather than a hang.
//
// RNS words are summed exactly: all_reduce_sum runs on 64-bit words (ncclUint64), never on 32-bit residues,
// which would wrap at 2^32 after two ranks.

#include <array>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>

#include "cerium/dist/communicator.hpp"

namespace cerium::dist {

// ncclUniqueId's bytes (NCCL_UNIQUE_ID_BYTES = 128).
struct NcclUniqueId {
  std::array<std::byte, 128> bytes{};  // opaque, as NCCL made them
};

// A fresh id (rank 0 makes it).
NcclUniqueId nccl_unique_id();
// Rank 0's id on every rank of an existing communicator (MPI's, typically).
NcclUniqueId nccl_unique_id_over(Communicator& comm);
// Through a file: rank 0 writes it (atomically, by rename), the others wait for it up to `timeout`.
NcclUniqueId nccl_unique_id_via_file(const std::filesystem::path& path, int rank,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(60));

// This rank's GPU and stream, and how long a collective may take.
struct NcclOptions {
  int device = 0;              // the CUDA device of this rank
  void* stream = nullptr;      // cudaStream_t to queue on; null: a stream of the communicator's own
  // A collective that takes longer aborts the communicator and throws CommunicationError.
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
};

// Rank `rank` of `size` ranks joined by `id`. The words passed to its collectives must be device memory of
// options.device (Communicator::device_memory() is true).
std::unique_ptr<Communicator> make_nccl_communicator(int rank, int size, const NcclUniqueId& id,
                                                     const NcclOptions& options = {});

}  // namespace cerium::dist
