#pragma once
// What the planner may do. Turning these off gives the plain lowering (one evaluator call per node, hoisting and
// lazy relinearization kept): the eager baseline of the benchmarks and of the tests' launch counts.

#include <optional>

namespace cerium::plan {

// The planner's switches, every one on by default (fold_rescale: the backend decides).
struct PlanOptions {
  // Sums with two or more products (by plaintexts, or of ciphertexts) are accumulated in one pass per polynomial
  // (backend multiply_accumulate_many) instead of one multiply and one add per term.
  bool fuse_sums = true;
  // A subexpression written more than once (same operands, same operations) is evaluated once.
  bool share_subexpressions = true;
  // rescale(sum of products) whose products all join a 2-part fused pass: the rescale is folded into the pass
  // (backend linear_combination_rescaled: the dropped limbs first, the kept ones written once, already divided).
  // Needs fuse_sums. Unset: the backend's choice (its fold_rescale_into_sums; the CPU folds, the CUDA backend
  // does not: there the rescale's subtract-and-scale already rides the forward NTT's last pass, and the fold's
  // per-part small launches measured 12% slower on the H200, bench/RESULTS.md); set: forced either way.
  std::optional<bool> fold_rescale = std::nullopt;
};

}  // namespace cerium::plan
