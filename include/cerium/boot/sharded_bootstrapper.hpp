#pragma once
// Bootstrapping over limb-sharded ciphertexts: boot::BasicBootstrapper over dist::ShardedBackend, one per rank,
// with the CPU bootstrapper's words for any number of ranks (the DFT diagonals and keys are sharded like the
// ciphertexts; ModRaise gathers level 0's limbs).
//
//   auto boot = boot::ShardedBootstrapper(context, config, dist::ShardedBackend(comm, context));

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/sharded_evaluator.hpp"

namespace cerium::boot {

// The bootstrapper on dist::ShardedBackend, one per rank.
using ShardedBootstrapper = BasicBootstrapper<dist::ShardedBackend>;

extern template class BasicBootstrapper<dist::ShardedBackend>;

}  // namespace cerium::boot
