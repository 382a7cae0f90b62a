#pragma once
// Sums of plaintext products: the trees of additions whose leaves are multiply_plain nodes (a matrix product's
// inner sums, sum_b diag_b R^b x), which the executor computes as one evaluator call,
// ckks::BasicEvaluator::multiply_plain_sum and one rescale (RunOptions::round_sums_once, the default: the sum
// rounded once, more precisely than term by term), or multiply_plain_rescale_sum (each product rescaled on its
// own, the words of the nodes run one by one). Either way one pass over the products' limbs instead of a product,
// a rescale and an addition each; rounded once, the rescale's transforms and corrections are paid once a sum
// instead of once a product.
//
// A sum qualifies when every product and every inner addition has the tree as its only reader and is not
// bootstrapped, and every product's operand has one planned level and slot count (the root may be
// bootstrapped, and read by anything).

#include <vector>

#include "cerium/graph/program.hpp"

namespace cerium::graph {

struct NodePlan;

// One sum of plaintext products (see the file comment).
struct PlainSum {
  NodeId root = 0;                // the last addition: where the executor computes the sum
  std::vector<NodeId> products;   // the multiply_plain leaves, in program order
  std::vector<NodeId> members;    // every node of the tree (products, additions, root), in program order
};

// The pass's result: every sum, and each node's sum.
struct PlainSums {
  std::vector<PlainSum> sums;  // maximal, two or more products each
  std::vector<int> sum_of;     // per node: the index of the sum it belongs to, or -1
};

// The maximal sums of two or more products. `nodes`: the plan's per-node levels and bootstraps (Plan::nodes).
PlainSums find_plain_sums(const Program& program, const std::vector<NodePlan>& nodes);

}  // namespace cerium::graph
