#pragma once
// elementwise_passes_v<E>: at compile time, the elementwise backend calls eval(E) makes (one kernel launch each
// on the CUDA backend; key switches' internal launches are counted by key_switches_v instead), so that
// static_assert can bound an expression's launches. Only for expressions with static counts (no runtime sums).
//
// Nothing here decides or costs anything: the walk makes, on the expression's type, the machine operations the
// lowering (plan/lower.hpp) makes on its values, in its order, and counts them with the table the Tracer counts
// with (plan/counts.hpp); which sums fuse and which rescales fold are the lowering's own predicates
// (worth_fusing, folds_rescale), and a polynomial is its schedule (plan/power_basis_count.hpp). As plan_stats
// with fused sums on, the backend's default of folding rescales, and every operand distinct (a repeated
// subexpression is evaluated once at run time: plan_stats then reports fewer).

#include <cstddef>
#include <span>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cerium/expr/node.hpp"
#include "cerium/expr/polynomial.hpp"
#include "cerium/plan/counts.hpp"
#include "cerium/plan/lower.hpp"
#include "cerium/plan/power_basis_count.hpp"
#include "cerium/plan/terms.hpp"

namespace cerium::plan {

namespace launch_detail {

// Counts eval(E)'s operations into c; returns the parts of its value.
template <class E>
constexpr int walk(Counter& c);

// An operand that must have 2 parts (Lowering::two_parts).
template <class E>
constexpr int two_parts(Counter& c) {
  c.relinearize(walk<E>(c));
  return 2;
}

// Lowering::gather: the terms of a flattened sum, their operands evaluated left to right.
template <class E, bool Negated>
constexpr void gather(Counter& c, std::vector<TermShape>& terms) {
  constexpr TermKind kind = detail::product_kind<E>();
  if constexpr (detail::flattens<E>()) {
    gather<decltype(E::lhs), Negated>(c, terms);
    gather<decltype(E::rhs), (E::op == expr::Op::sub) != Negated>(c, terms);
  } else if constexpr (kind == TermKind::cipher_product) {
    two_parts<decltype(E::lhs)>(c);
    two_parts<decltype(E::rhs)>(c);
    terms.push_back({kind, 3, Negated});
  } else if constexpr (kind != TermKind::value) {  // times a plaintext or a scalar
    using C = std::conditional_t<decltype(E::lhs)::cipher, decltype(E::lhs), decltype(E::rhs)>;
    terms.push_back({kind, walk<C>(c), Negated});
  } else {
    terms.push_back({kind, walk<E>(c), Negated});
  }
}

// Lowering::sum_terms: one fused pass where it is worth it, else term by term.
constexpr int sum_terms(Counter& c, std::span<const TermShape> terms) {
  return worth_fusing(terms) ? c.fused_sum(terms) : c.sum_in_order(terms);
}

template <class E>
constexpr int walk(Counter& c) {
  using expr::Op;
  if constexpr (E::op == Op::cipher) {
    return 2;
  } else if constexpr (detail::flattens<E>()) {
    std::vector<TermShape> terms;
    gather<E, false>(c, terms);
    return sum_terms(c, terms);
  } else if constexpr (E::op == Op::polynomial) {
    two_parts<decltype(E::child)>(c);
    count_polynomial(c, std::tuple_size_v<decltype(E::coefficients)> - 1, true);
    return 2;
  } else if constexpr (E::op == Op::add || E::op == Op::sub) {
    using L = decltype(E::lhs);
    using R = decltype(E::rhs);
    if constexpr (!L::cipher) {  // c + x = x + c; c - x = -x + c
      const int parts = walk<R>(c);
      if constexpr (E::op == Op::sub) c.negate(parts);
      c.add_plain();
      return parts;
    } else if constexpr (!R::cipher) {
      const int parts = walk<L>(c);
      c.add_plain();
      return parts;
    } else {
      const int left = walk<L>(c);
      return c.add(left, walk<R>(c));
    }
  } else if constexpr (E::op == Op::negate) {
    const int parts = walk<decltype(E::child)>(c);
    c.negate(parts);
    return parts;
  } else if constexpr (E::op == Op::multiply) {
    using L = decltype(E::lhs);
    using R = decltype(E::rhs);
    if constexpr (L::cipher && R::cipher) {
      two_parts<L>(c);
      two_parts<R>(c);
      return c.tensor();
    } else {
      const int parts = walk<std::conditional_t<L::cipher, L, R>>(c);
      c.multiply(parts);
      return parts;
    }
  } else if constexpr (E::op == Op::rotate) {
    // No elementwise pass. Its key switch is not counted here: hoisting groups and trivial steps are known at run
    // time (a rotation of a leaf is made in its group before the walk, and copied here).
    using C = decltype(E::child);
    if constexpr (!std::is_same_v<C, expr::CipherLeaf>) two_parts<C>(c);
    return 2;
  } else if constexpr (E::op == Op::sum_rotations) {
    constexpr int n = static_cast<int>(std::tuple_size_v<decltype(E::steps)>);
    two_parts<decltype(E::child)>(c);  // the rotations as above
    for (int i = 1; i < n; ++i) c.add(2, 2);
    return 2;
  } else if constexpr (E::op == Op::rescale && detail::flattens<decltype(E::child)>()) {
    std::vector<TermShape> terms;
    gather<decltype(E::child), false>(c, terms);
    if (folds_rescale(terms)) return c.fused_sum_rescaled(terms);
    c.relinearize_rescale(sum_terms(c, terms));
    return 2;
  } else if constexpr (E::op == Op::rescale) {
    c.relinearize_rescale(walk<decltype(E::child)>(c));
    return 2;
  } else {  // conjugate, relinearize, level_down: 2 parts in
    two_parts<decltype(E::child)>(c);
    if constexpr (E::op == Op::conjugate) c.key_switch();
    return 2;
  }
}

// What eval(E) counts, its final relinearization included (rotations' key switches left out, see above).
template <class E>
constexpr PlanStats counts() {
  Counter c;
  c.relinearize(walk<E>(c));
  return c.stats;
}

}  // namespace launch_detail

// The elementwise backend calls eval(E) makes (the header comment), for static_assert.
template <expr::Node E>
  requires(E::static_counts)
inline constexpr int elementwise_passes_v = launch_detail::counts<E>().elementwise_passes;

}  // namespace cerium::plan
