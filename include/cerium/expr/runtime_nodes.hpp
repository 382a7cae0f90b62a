#pragma once
// Nodes whose length is known only at run time: a sum over a std::vector of expressions of one type, and a sum
// of rotations by a std::vector of steps. Their compile-time counts are those of one term (static_counts is
// false); plan_stats(expression) gives the totals of a given expression.

#include <cstdint>
#include <vector>

#include "cerium/expr/node.hpp"

namespace cerium::expr {

// sum_i terms[i]. 3-part terms stay 3-part (one relinearization for the whole sum); sums of products are fused
// into one pass per polynomial by the planner (plan/lower.hpp).
template <Node E>
struct SumOf {
  static_assert(E::cipher, "cerium::expr::sum: the terms are plaintexts or constants; sum them in the clear");
  // The node's traits (expr/node.hpp defines them): one term's counts, so static_counts is false.
  static constexpr Op op = Op::sum;
  static constexpr bool cipher = true;
  static constexpr int parts = E::parts;
  static constexpr int depth = E::depth, key_switches = E::key_switches, ct_products = E::ct_products;
  static constexpr bool elementwise = E::elementwise, static_counts = false;
  // The terms, at least one (expr::sum checks).
  std::vector<E> terms;
};

// sum_k rotate(child, steps[k]) for steps given at run time; the child is evaluated once and one ModUp serves
// every rotation.
template <Node E>
struct SumRotationsOf : Unary2<E, Op::sum_rotations, 1, false> {
  static constexpr bool static_counts = false;  // the counts are one rotation's
  // The operand, evaluated once.
  E child;
  // The rotations summed (left by steps[k], right for negative), at least one (expr::sum_rotations checks).
  std::vector<std::int64_t> steps;
};

}  // namespace cerium::expr
