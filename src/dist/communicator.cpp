#include "cerium/dist/communicator.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include <fmt/ranges.h>

#include "cerium/core/check.hpp"

namespace cerium::dist {

std::string to_string(Collective collective) {
  switch (collective) {
    case Collective::all_gather: return "all-gather";
    case Collective::broadcast: return "broadcast";
    case Collective::all_reduce: return "all-reduce";
    case Collective::send: return "send";
    case Collective::receive: return "receive";
    case Collective::barrier: return "barrier";
  }
  return "unknown collective";
}

std::uint64_t Traffic::sent() const { return std::accumulate(bytes_sent.begin(), bytes_sent.end(), std::uint64_t{0}); }
std::uint64_t Traffic::received() const {
  return std::accumulate(bytes_received.begin(), bytes_received.end(), std::uint64_t{0});
}

Communicator::Communicator(int rank, int size) : rank_(rank), size_(size) {
  require(size >= 1 && rank >= 0 && rank < size, "rank {} of a communicator of {} ranks", rank, size);
}

void Communicator::count(Collective c, std::uint64_t sent, std::uint64_t received) {
  const auto i = static_cast<std::size_t>(c);
  traffic_.bytes_sent[i] += sent;
  traffic_.bytes_received[i] += received;
  ++traffic_.calls[i];
}

void Communicator::all_gather(std::span<const std::uint32_t> mine, std::span<std::uint32_t> all,
                              std::span<const std::size_t> counts) {
  require(counts.size() == static_cast<std::size_t>(size_), "all-gather: {} counts for {} ranks", counts.size(), size_);
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  require(mine.size() == counts[rank_] && all.size() == total,
          "all-gather on rank {}: {} words given where the counts say {}, {} received where they say {}", rank_,
          mine.size(), counts[rank_], all.size(), total);
  do_all_gather(mine, all, counts);
  count(Collective::all_gather, 4ull * mine.size() * (size_ - 1), 4ull * (total - mine.size()));
}

void Communicator::broadcast(std::span<std::uint32_t> words, int root) {
  broadcast_bytes(std::as_writable_bytes(words), root);
}

void Communicator::broadcast_bytes(std::span<std::byte> bytes, int root) {
  require(root >= 0 && root < size_, "broadcast from rank {} in a communicator of {} ranks", root, size_);
  do_broadcast(bytes, root);
  const bool is_root = root == rank_;
  count(Collective::broadcast, is_root ? bytes.size() * (size_ - 1) : 0, is_root ? 0 : bytes.size());
}

void Communicator::all_reduce_sum(std::span<std::uint64_t> words) {
  do_all_reduce_sum(words);
  const std::uint64_t bytes = 8ull * words.size() * (size_ - 1);
  count(Collective::all_reduce, bytes, bytes);
}

void Communicator::send(std::span<const std::uint32_t> words, int peer) {
  require(peer >= 0 && peer < size_ && peer != rank_, "rank {} cannot send to rank {} of {}", rank_, peer, size_);
  do_send(words, peer);
  count(Collective::send, 4ull * words.size(), 0);
}

void Communicator::receive(std::span<std::uint32_t> words, int peer) {
  require(peer >= 0 && peer < size_ && peer != rank_, "rank {} cannot receive from rank {} of {}", rank_, peer,
          size_);
  do_receive(words, peer);
  count(Collective::receive, 0, 4ull * words.size());
}

void Communicator::barrier() {
  do_barrier();
  count(Collective::barrier, 0, 0);
}

void require_same_on_all_ranks(Communicator& comm, std::uint64_t fingerprint, const std::string& what) {
  const auto size = static_cast<std::size_t>(comm.size());
  std::vector<std::uint32_t> all(2 * size);
  const std::uint32_t mine[2] = {static_cast<std::uint32_t>(fingerprint), static_cast<std::uint32_t>(fingerprint >> 32)};
  const std::vector<std::size_t> counts(size, 2);
  comm.all_gather(mine, all, counts);
  std::vector<int> differing;
  for (std::size_t r = 1; r < size; ++r) {
    if (all[2 * r] != all[0] || all[2 * r + 1] != all[1]) differing.push_back(static_cast<int>(r));
  }
  require<CommunicationError>(differing.empty(),
                              "the ranks of the mesh disagree on {}: rank(s) {} differ from rank 0 (rank {} here); "
                              "give every rank the same {}",
                              what, fmt::join(differing, ", "), comm.rank(), what);
}

}  // namespace cerium::dist
