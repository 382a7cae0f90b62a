#pragma once
// The evaluator over limb-sharded ciphertexts: ckks::BasicEvaluator over dist::ShardedBackend, one per rank, with
// the single-device CPU evaluator's words for any number of ranks.
//
//   dist::InProcessGroup group(4);                      // or dist::make_mpi_communicator() under mpirun
//   group.run([&](dist::Communicator& comm) {
//     ckks::ShardedEvaluator ev(context, dist::ShardedBackend(comm, context));
//     ev.set_relinearization_key(relin);                // each rank keeps its limbs of the keys
//     auto x = ev.upload(ciphertext);                   // the same ciphertext on every rank: its limbs here
//     auto y = ev.download(ev.multiply(x, x));          // a collective: every rank gets every limb
//   });

#include "cerium/ckks/evaluator.hpp"
#include "cerium/dist/sharded_backend.hpp"

namespace cerium::ckks {

// The evaluator over dist::ShardedBackend: each rank holds and computes its own limbs of every operand.
using ShardedEvaluator = BasicEvaluator<dist::ShardedBackend>;

extern template class BasicEvaluator<dist::ShardedBackend>;

}  // namespace cerium::ckks
