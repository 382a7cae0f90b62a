#pragma once
// The bytes limb-parallel operations move, per rank, predicted from the layout before anything runs: what the
// sharded backend's collectives will count (Communicator::traffic), operation by operation.
//
// Every exchange of the sharded backend is an all-gather of some limbs of some polynomials: the owner of a limb
// sends it to each other rank (N words), and every rank receives the limbs it does not hold. So an operation's
// bytes follow from which limbs it gathers (dist/sharded_backend.hpp lists them) and the layout alone:
//   rescale at level l      the dropped limbs (the level's 1 or 2 primes) of each part
//   key switch at level l   ModUp: all of Q_l (one polynomial); ModDown: P's limbs of the two sums;
//                           with the rescale folded in: the dropped limbs of the two results
//   hoisted rotations       one ModUp for all, then ModDown per rotation
//   download                every limb

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/dist/limb_layout.hpp"
#include "cerium/rlwe/context.hpp"

namespace cerium::dist {

// Bytes per rank (index: rank).
struct RankBytes {
  // Bytes sent and bytes received, by rank.
  std::vector<std::uint64_t> sent, received;  // index: rank
  std::size_t calls = 0;                      // collectives

  // Zero bytes for each of `ranks` ranks.
  explicit RankBytes(std::size_t ranks = 0) : sent(ranks, 0), received(ranks, 0) {}
  std::uint64_t total_sent() const;    // the sum over the ranks
  std::uint64_t max_received() const;  // the busiest rank's incoming bytes
  // Rank by rank sums (the calls too), and the traffic of `times` repetitions.
  RankBytes& operator+=(const RankBytes& other);
  friend RankBytes operator*(RankBytes a, std::uint64_t times);
};

// Predicts the bytes the sharded backend's operations move, rank by rank, for a context laid out over `ranks`
// ranks (see the file comment).
class LimbTraffic {
 public:
  // For a context laid out over `ranks` ranks with `policy` (as ShardedOptions::layout).
  LimbTraffic(rlwe::ContextPtr context, int ranks, LayoutPolicy policy = LayoutPolicy::contiguous);

  int ranks() const { return ranks_; }  // R
  // The all-gather of the limbs at `positions` of `polys` polynomials over basis.
  RankBytes gather(const ring::RnsBasis& basis, std::span<const std::size_t> positions, std::size_t polys) const;

  // The gathers of one operation at a level (see the file comment): a rescale of `parts` polynomials, a ModUp, or
  // a ModDown of `polys` polynomials.
  RankBytes rescale(int level, std::size_t parts = 2) const;
  RankBytes mod_up(int level) const;
  RankBytes mod_down(int level, std::size_t polys = 2) const;
  // A relinearization or rotation at level: ModUp, then ModDown of both sums (and their rescale when rescaled).
  RankBytes key_switch(int level, bool rescaled = false) const;
  // `rotations` rotations of one ciphertext sharing its ModUp.
  RankBytes hoisted_rotations(int level, std::size_t rotations) const;
  // Every limb of `polys` polynomials over basis, to every rank.
  RankBytes download(const ring::RnsBasis& basis, std::size_t polys = 1) const;

 private:
  rlwe::ContextPtr context_;
  int ranks_ = 1;
  std::vector<LimbLayout> layouts_;  // one per rank (the owners are the same; only the viewpoint differs)
};

}  // namespace cerium::dist
