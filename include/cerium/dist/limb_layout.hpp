#pragma once
// Which rank holds which limbs: the limb-parallel layout of sharded ciphertexts and keys over a device mesh.
//
// Ownership is by prime, so one table serves every basis the scheme uses (Q_l, Q_l u P, a key's Q u P). Two
// policies:
//  - contiguous (the default): Q's primes split over the ranks in contiguous blocks (rank 0 the first ones), P's
//    likewise, as evenly as possible. A polynomial is then, on each rank, at most one run of its Q limbs and one
//    of its P limbs, so results over Q_l need no regrouping; but at low levels the ranks holding Q's top primes
//    have little to do.
//  - balanced: Q's prime i and P's prime i on rank i mod R, so every level keeps every rank busy; a rank's limbs
//    are then many single-limb shards, and results computed on the host are copied into them.
// The bytes a gather moves depend only on how many limbs each rank holds, so both move the same at the top level.

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "cerium/core/device.hpp"
#include "cerium/ring/rns_basis.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "cerium/rlwe/context.hpp"

namespace cerium::dist {

// How primes are spread over the ranks (see the file comment).
enum class LayoutPolicy : std::uint8_t { contiguous, balanced };

// Which rank holds each prime of a context (see the file comment), as one rank sees it.
class LimbLayout {
 public:
  // The layout of a context's primes over `ranks` ranks; rank r computes on local_device (the shards other
  // ranks hold are remote shards, Device::remote(rank) without storage, in this rank's view).
  LimbLayout(const rlwe::Context& context, int ranks, int rank, Device local_device = Device::cpu(),
             LayoutPolicy policy = LayoutPolicy::contiguous);

  int ranks() const { return ranks_; }                   // R
  int rank() const { return rank_; }                     // the rank whose view this is
  Device local_device() const { return local_device_; }  // where this rank computes
  // The rank holding a prime; InvalidArgument naming the prime when the context has no such prime.
  int owner(std::uint32_t prime) const;
  bool is_local(std::uint32_t prime) const { return owner(prime) == rank_; }  // owner(prime) == rank()

  // This rank's view of a polynomial over basis: runs of consecutive limbs by owner, the local runs on
  // local_device() and the others remote.
  std::vector<ring::ShardSpec> shards(const ring::RnsBasis& basis) const;
  // Positions in basis of the limbs a rank holds, in order.
  std::vector<std::size_t> positions(const ring::RnsBasis& basis, int rank) const;
  std::vector<std::size_t> local_positions(const ring::RnsBasis& basis) const { return positions(basis, rank_); }
  // Limbs of basis per rank.
  std::vector<std::size_t> counts(const ring::RnsBasis& basis) const;

 private:
  int ranks_ = 1;
  int rank_ = 0;
  Device local_device_;
  std::unordered_map<std::uint32_t, int> owners_;
};

}  // namespace cerium::dist
