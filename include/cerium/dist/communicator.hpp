#pragma once
// A communicator: the collectives that sharded ciphertexts need among the ranks of a device mesh, and the bytes
// each rank moved through them.
//
// Three transports implement it: in-process threads (dist/in_process.hpp: unit tests pose as 1 to 8 devices),
// MPI processes (dist/mpi.hpp: CPU ranks, several nodes) and NCCL (GPU ranks). Why an abstract class rather than a
// concept: the transport is chosen at run time (launched by mpirun or not), and a collective's cost dwarfs one
// virtual call, while the sharded backend and everything above it (the evaluator, the bootstrapper) stay one
// instantiation instead of one per transport.
//
// Every rank calls the same collectives in the same order (SPMD); a rank that calls another collective, passes
// other sizes or fails makes every rank throw CommunicationError (the in-process transport checks each call; MPI
// and NCCL abort the job). One thread per rank drives a communicator.
//
// RNS words are reduced exactly: sums are taken over 64-bit words (all_reduce_sum) whose inputs are below 2^32,
// so up to 2^32 ranks cannot wrap, and the caller reduces each sum modulo its prime (a 32-bit sum, as NCCL's
// would be, wraps at 2^32 after two ranks' residues near 2^31).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace cerium::dist {

// The collectives, as Traffic counts them; collective_kinds is their number.
enum class Collective : std::uint8_t { all_gather, broadcast, all_reduce, send, receive, barrier };
inline constexpr std::size_t collective_kinds = 6;

// "all-gather", "broadcast", "all-reduce", "send", "receive", "barrier".
std::string to_string(Collective collective);

// Bytes a rank moved, by collective, counted logically (what the algorithm must move whatever the transport's
// ring or tree): an all-gather sends one's words to each other rank and receives theirs; a broadcast's root sends
// to each other rank; an all-reduce exchanges every word with each other rank.
struct Traffic {
  std::array<std::uint64_t, collective_kinds> bytes_sent{};      // per collective
  std::array<std::uint64_t, collective_kinds> bytes_received{};  // per collective
  std::array<std::uint64_t, collective_kinds> calls{};           // per collective

  // Totals over every collective.
  std::uint64_t sent() const;
  std::uint64_t received() const;
  // One collective's bytes sent and received, and its calls.
  std::uint64_t sent(Collective c) const { return bytes_sent[static_cast<std::size_t>(c)]; }
  std::uint64_t received(Collective c) const { return bytes_received[static_cast<std::size_t>(c)]; }
  std::uint64_t count(Collective c) const { return calls[static_cast<std::size_t>(c)]; }
  // Every count equal.
  friend bool operator==(const Traffic&, const Traffic&) = default;
};

// One rank's end of a device mesh: the collectives of the file comment, each transport a subclass.
class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }  // this rank, in [0, size())
  int size() const { return size_; }  // R, the ranks of the mesh
  // "in-process", "mpi", "nccl": for messages and benchmark labels.
  virtual std::string transport() const = 0;
  // The words given to the collectives are device memory (NCCL) rather than host memory.
  virtual bool device_memory() const { return false; }

  // Every rank passes its own counts[rank()] words; `all` (sum of counts) receives every rank's words in rank
  // order. counts must be the same on every rank.
  void all_gather(std::span<const std::uint32_t> mine, std::span<std::uint32_t> all,
                  std::span<const std::size_t> counts);
  // root's words to every rank (the same size everywhere).
  void broadcast(std::span<std::uint32_t> words, int root);
  void broadcast_bytes(std::span<std::byte> bytes, int root);
  // Elementwise exact sums over the ranks (inputs below 2^32 each).
  void all_reduce_sum(std::span<std::uint64_t> words);
  // Point to point: a send is matched by the peer's receive of the same size.
  void send(std::span<const std::uint32_t> words, int peer);
  void receive(std::span<std::uint32_t> words, int peer);
  // Returns once every rank has entered it.
  void barrier();

  // The bytes this rank moved since construction or the last reset_traffic().
  const Traffic& traffic() const { return traffic_; }
  void reset_traffic() { traffic_ = {}; }

 protected:
  // Rank `rank` of `size` ranks; InvalidArgument unless 0 <= rank < size.
  Communicator(int rank, int size);

  // What a transport implements: the collectives above, called after the public calls' checks; the public calls
  // count the traffic.
  virtual void do_all_gather(std::span<const std::uint32_t> mine, std::span<std::uint32_t> all,
                             std::span<const std::size_t> counts) = 0;
  virtual void do_broadcast(std::span<std::byte> bytes, int root) = 0;
  virtual void do_all_reduce_sum(std::span<std::uint64_t> words) = 0;
  virtual void do_send(std::span<const std::uint32_t> words, int peer) = 0;
  virtual void do_receive(std::span<std::uint32_t> words, int peer) = 0;
  virtual void do_barrier() = 0;

 private:
  void count(Collective c, std::uint64_t sent, std::uint64_t received);

  int rank_ = 0;
  int size_ = 1;
  Traffic traffic_;
};

// Throws CommunicationError on every rank, naming the ranks that differ and `what`, unless every rank passes the
// same fingerprint: a check that the ranks agree on parameters, keys or a program before they compute together.
void require_same_on_all_ranks(Communicator& comm, std::uint64_t fingerprint, const std::string& what);

}  // namespace cerium::dist
