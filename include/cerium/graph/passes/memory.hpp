#pragma once
// Memory planning: when each value dies (its last reader), so the executor frees it there and the memory pool
// reuses its buffers, and the peak of live ciphertext bytes, known before anything runs.

#include <cstddef>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/graph/program.hpp"

namespace cerium::graph {

// The memory pass's result (see the file comment).
struct MemoryPlan {
  std::vector<NodeId> last_use;   // per node: the last node that reads it (itself when none; outputs: the end)
  std::size_t peak_bytes = 0;     // live ciphertexts at the worst point (working memory of one operation apart)
  NodeId peak_node = 0;           // where the peak is reached
  std::vector<std::size_t> value_bytes;  // per node: the ciphertext it produces (0 for outputs)
};

// levels: the level each node's value is held at (after its bootstrap, if any); born: the node at which each
// value comes to exist (its own, or earlier for a hoisted rotation computed with its group; empty: its own).
MemoryPlan plan_memory(const Program& program, const std::vector<int>& levels, const std::vector<NodeId>& born = {});

// Within a device budget (bytes, 0: none): OutOfMemoryError naming the node when one operation alone needs more
// (its operands, its result and the switching key it reads), or when the live ciphertexts at the peak plus the
// resident keys (key_bytes) exceed it.
void require_within_budget(const Program& program, const MemoryPlan& memory, std::size_t budget,
                           std::size_t key_bytes, std::size_t switching_key_bytes);

}  // namespace cerium::graph
