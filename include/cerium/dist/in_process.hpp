#pragma once
// Ranks as threads of one process: an InProcessGroup of `size` ranks hands each thread its Communicator, so unit
// tests run sharded code on 1 to 8 posed devices (cpu:0 .. cpu:7) without MPI.
//
// Every collective meets all ranks twice (their buffers posted, then read): each rank copies what it needs
// straight from the others' buffers. Each call is checked: all ranks must call the same collective with the
// same root and counts, or every rank throws CommunicationError naming what differs. A rank that waits longer
// than the group's timeout, or a rank that fails (run() aborts the group when a rank's body throws), makes every
// rank throw instead of hanging.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "cerium/dist/communicator.hpp"

namespace cerium::dist {

// How long an InProcessGroup waits.
struct InProcessOptions {
  // How long a rank waits for the others at a collective before the group fails.
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
};

// `size` ranks as threads of this process (see the file comment).
class InProcessGroup {
 public:
  // 1 to 1024 ranks (InvalidArgument otherwise), each with its communicator.
  explicit InProcessGroup(int size, InProcessOptions options = {});
  ~InProcessGroup();
  InProcessGroup(const InProcessGroup&) = delete;
  InProcessGroup& operator=(const InProcessGroup&) = delete;

  int size() const;  // R, the number of ranks
  // Rank r's communicator (one per rank, owned by the group; drive it from one thread).
  Communicator& communicator(int rank);
  // Fails the group: every rank waiting in (or later entering) a collective throws CommunicationError(reason).
  void abort(const std::string& reason);

  // Runs body(communicator) on `size` threads, one per rank, and waits for all. When a rank throws, the group is
  // aborted (so no other rank hangs) and the first rank's exception (by rank) is rethrown here. Each thread runs
  // the CPU's parallel loops on one thread (the ranks are the parallelism).
  void run(const std::function<void(Communicator&)>& body);

  struct State;  // the ranks' meeting point (src/dist/in_process.cpp)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace cerium::dist
