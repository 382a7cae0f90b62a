#pragma once
// elementwise_passes_v<E>: at compile time, the elementwise backend calls eval(E) makes (one kernel launch each
// on the CUDA backend; key switches' internal launches are counted by key_switches_v instead). It follows the
// lowering's rules (plan/lower.hpp) as the Tracer counts them, with fused sums on and every operand distinct
// (a repeated subexpression is evaluated once at run time: plan_stats then reports fewer), so that
// static_assert can bound an expression's launches. Only for expressions with static counts (no runtime sums).

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>

#include "cerium/expr/node.hpp"
#include "cerium/expr/polynomial.hpp"
#include "cerium/plan/lower.hpp"

namespace cerium::plan {

namespace launch_detail {

template <class E>
inline constexpr int relin_passes = E::parts == 3 ? 2 : 0;  // the switched pair added to (c0, c1)

struct TermShape {
  TermKind kind = TermKind::value;
  int parts = 0;
  int operand_passes = 0;
  bool negated = false;
  constexpr bool fusable() const { return plan::fusable(kind, negated); }
  // The product's own passes when computed alone: a tensor product one, a plaintext or scalar product one a part.
  constexpr int product_passes() const {
    switch (kind) {
      case TermKind::value: return 0;
      case TermKind::cipher_product: return 1;
      case TermKind::plain_product:
      case TermKind::scalar_product: return parts;
    }
    return 0;
  }
};

template <class E>
constexpr int passes();

template <class E>
constexpr std::size_t term_count() {
  if constexpr (detail::flattens<E>()) return term_count<decltype(E::lhs)>() + term_count<decltype(E::rhs)>();
  else return 1;
}

template <class E, bool Negated, std::size_t N>
constexpr void fill(std::array<TermShape, N>& out, std::size_t& i) {
  if constexpr (detail::flattens<E>()) {
    fill<decltype(E::lhs), Negated>(out, i);
    fill<decltype(E::rhs), (E::op == expr::Op::sub) != Negated>(out, i);
  } else if constexpr (detail::product_kind<E>() == TermKind::cipher_product) {
    using L = decltype(E::lhs);
    using R = decltype(E::rhs);
    out[i++] = {TermKind::cipher_product, 3, passes<L>() + relin_passes<L> + passes<R>() + relin_passes<R>, Negated};
  } else if constexpr (detail::product_kind<E>() != TermKind::value) {  // times a plaintext or a scalar
    using C = std::conditional_t<decltype(E::lhs)::cipher, decltype(E::lhs), decltype(E::rhs)>;
    out[i++] = {detail::product_kind<E>(), C::parts, passes<C>(), Negated};
  } else {
    out[i++] = {TermKind::value, E::parts, passes<E>(), Negated};
  }
}

// A flattened sum: fused (Tracer::fused_sum) with two or more products that join the pass, else term by term.
template <class E>
constexpr int sum_passes() {
  std::array<TermShape, term_count<E>()> terms{};
  std::size_t i = 0;
  fill<E, false>(terms, i);
  int total = 0, products = 0, parts = 0;
  for (const auto& t : terms) {
    total += t.operand_passes;
    if (t.fusable()) {
      ++products;
      parts = std::max(parts, t.parts);
    }
  }
  if (products >= 2) {
    int acc = parts;
    total += parts;  // one linear combination per part
    for (const auto& t : terms) {
      if (t.fusable()) continue;
      total += t.product_passes() + std::max(acc, t.parts);
      acc = std::max(acc, t.parts);
    }
    return total;
  }
  int acc = 0;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const auto& t = terms[k];
    total += t.product_passes();
    if (k > 0) total += std::max(acc, t.parts);
    else if (t.negated) total += t.parts;
    acc = std::max(acc, t.parts);
  }
  return total;
}

// rescale(sum) folded into its pass (Tracer::fused_sum_rescaled): every term a 2-part product that joins the
// pass, two or more of them; -1 when it does not fold, else its passes (the operands', then 2 per part).
template <class E>
constexpr int folded_rescale_passes() {
  std::array<TermShape, term_count<E>()> terms{};
  std::size_t i = 0;
  fill<E, false>(terms, i);
  int total = 0;
  for (const auto& t : terms) {
    if (!t.fusable() || t.kind == TermKind::cipher_product || t.parts != 2) return -1;
    total += t.operand_passes;
  }
  return terms.size() >= 2 ? total + 2 * 2 : -1;
}

template <class E>
constexpr bool folds_rescale() {
  if constexpr (E::op != expr::Op::rescale) {
    return false;
  } else if constexpr (!detail::flattens<decltype(E::child)>()) {
    return false;
  } else {
    return folded_rescale_passes<decltype(E::child)>() >= 0;
  }
}

template <class E>
constexpr int passes() {
  using expr::Op;
  if constexpr (E::op == Op::cipher) {
    return 0;
  } else if constexpr (folds_rescale<E>()) {
    return folded_rescale_passes<decltype(E::child)>();
  } else if constexpr (detail::flattens<E>()) {
    return sum_passes<E>();
  } else if constexpr (E::op == Op::add || E::op == Op::sub) {
    using L = decltype(E::lhs);
    using R = decltype(E::rhs);
    if constexpr (!L::cipher) return passes<R>() + (E::op == Op::sub ? R::parts : 0) + 1;
    else if constexpr (!R::cipher) return passes<L>() + 1;
    else return passes<L>() + passes<R>() + std::max(L::parts, R::parts);
  } else if constexpr (E::op == Op::negate) {
    return passes<decltype(E::child)>() + E::parts;
  } else if constexpr (E::op == Op::multiply) {
    using L = decltype(E::lhs);
    using R = decltype(E::rhs);
    if constexpr (L::cipher && R::cipher) return passes<L>() + relin_passes<L> + passes<R>() + relin_passes<R> + 1;
    else if constexpr (L::cipher) return passes<L>() + L::parts;
    else return passes<R>() + R::parts;
  } else if constexpr (E::op == Op::polynomial) {
    using C = decltype(E::child);
    constexpr std::size_t d = std::tuple_size_v<decltype(E::coefficients)> - 1;
    return passes<C>() + relin_passes<C> + expr::power_basis::count(d, true, false, true).elementwise_passes;
  } else {
    using C = decltype(E::child);
    if constexpr (E::op == Op::rotate && std::is_same_v<C, expr::CipherLeaf>) return 0;  // hoisted: a copy
    int own = 0;
    if constexpr (E::op == Op::rescale) own = 1;
    if constexpr (E::op == Op::sum_rotations) own = 2 * (static_cast<int>(std::tuple_size_v<decltype(E::steps)>) - 1);
    return passes<C>() + relin_passes<C> + own;
  }
}

}  // namespace launch_detail

template <expr::Node E>
  requires(E::static_counts)
inline constexpr int elementwise_passes_v = launch_detail::passes<E>() + launch_detail::relin_passes<E>;

}  // namespace cerium::plan
