#pragma once
// Rotation hoisting: the rotations of one value share one ModUp (ckks::BasicEvaluator::rotate_hoisted), the
// expensive half of their key switches. This pass groups them; the executor computes a group's rotations together
// at its first member and hands each member its result. Each hoisted result is rotate's own words
// (ckks::BasicEvaluator::rotate_hoisted applies the automorphism to the shared ModUp digits, as rotate does).

#include <cstdint>
#include <vector>

#include "cerium/graph/program.hpp"

namespace cerium::graph {

// The rotations of one value that share its ModUp.
struct HoistGroup {
  NodeId source = 0;                 // the rotated value
  std::vector<NodeId> rotations;     // the rotate nodes, in program order (the first computes them all)
  std::vector<std::int64_t> steps;   // their steps, in the same order
};

// The pass's result: every group, and each node's group.
struct Hoisting {
  std::vector<HoistGroup> groups;  // two or more rotations each
  std::vector<int> group_of;       // per node: the index of its group, or -1
};

// Groups of two or more rotations of one value.
Hoisting hoist_rotations(const Program& program);

}  // namespace cerium::graph
