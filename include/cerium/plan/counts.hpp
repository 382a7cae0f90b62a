#pragma once
// What each operation of a lowering (plan/lower.hpp's machine operations) counts: the one table behind
// plan_stats and explain (the Tracer counts each operation as the lowering makes it), the compile-time launch
// traits (plan/launch_traits.hpp walks an expression type through the same operations) and the power basis's
// counts (plan/power_basis_count.hpp). constexpr, so that the traits run it at compile time.

#include <algorithm>
#include <cstddef>
#include <span>

#include "cerium/plan/terms.hpp"

namespace cerium::plan {

// The totals of a plan: what eval(expression) runs, as plan_stats and explain report it.
struct PlanStats {
  int key_switches = 0;      // rotations, conjugations and relinearizations that switch a key
  int mod_ups = 0;           // decompose_and_mod_up calls: one per key switch, except hoisted groups share one
  int shared_rotations = 0;  // rotations served by a ModUp another rotation already paid for
  int relinearizations = 0;  // 3-part values brought to 2 (each one of the key switches)
  int tensor_products = 0;   // ciphertext-ciphertext products, fused ones included
  int rescales = 0;          // the expression's own, folded ones included (not adjust_scale's)
  int fused_sums = 0;             // sums whose products were accumulated in one pass per polynomial
  int folded_rescales = 0;        // rescales folded into their fused sum's pass
  int shared_subexpressions = 0;  // occurrences served by a value computed once
  // Elementwise backend calls, one kernel launch each on the CUDA backend (one pass over one polynomial's limbs,
  // or over a ciphertext's for the tensor product and the batched rescale); key switches' internal passes
  // (ModUp, inner product, ModDown) are counted by key_switches instead.
  int elementwise_passes = 0;
};

// A rescale folded into its fused sum (plan/fused_sum.hpp's fused_sum_rescaled): every term a 2-part product that
// joins the pass (a 3-part sum is relinearized before its rescale; a term computed alone would be added before it).
constexpr bool folds_rescale(std::span<const TermShape> terms) {
  if (!worth_fusing(terms)) return false;
  for (const auto& t : terms)
    if (!fusable(t.kind, t.negated) || t.kind == TermKind::cipher_product || t.parts != 2) return false;
  return true;
}

// Counts operations into stats. Methods that make a value return its parts.
struct Counter {
  PlanStats stats;  // the counts so far

  // A ciphertext plus or minus another: one pass per part of the larger.
  constexpr int add(int a, int b) {
    stats.elementwise_passes += std::max(a, b);
    return std::max(a, b);
  }
  // Plus or minus a plaintext or constant: one pass over c0.
  constexpr void add_plain() { stats.elementwise_passes += 1; }
  // Negation: one pass per part.
  constexpr void negate(int parts) { stats.elementwise_passes += parts; }
  // a (x) b: one pass over both ciphertexts, 3 parts.
  constexpr int tensor() {
    ++stats.tensor_products;
    ++stats.elementwise_passes;
    return 3;
  }
  // Times a plaintext, a constant or an integer: one pass per part.
  constexpr void multiply(int parts) { stats.elementwise_passes += parts; }
  // One key switch with its own ModUp; its internal passes are not counted among the elementwise ones.
  constexpr void key_switch() {
    ++stats.key_switches;
    ++stats.mod_ups;
  }
  // A 3-part value to 2: a key switch, whose pair is added to (c0, c1) in 2 passes; nothing for 2 parts.
  constexpr void relinearize(int parts) {
    if (parts != 3) return;
    ++stats.relinearizations;
    key_switch();
    stats.elementwise_passes += 2;
  }
  // A rescale: one pass (batched over the ciphertext's parts).
  constexpr void rescale() {
    ++stats.rescales;
    ++stats.elementwise_passes;
  }
  // One key switch that relinearizes and rescales (the evaluator's relinearize_rescale), counted as both steps.
  constexpr void relinearize_rescale(int parts) {
    relinearize(parts);
    rescale();
  }
  // A scale moved onto another one level down (the evaluator's adjust_scale): a scalar product per part and the
  // rescale's pass (not counted among the rescales, which are the expression's own).
  constexpr void adjust_scale(int parts) { stats.elementwise_passes += parts + 1; }
  // Rotations of one value sharing a ModUp, `switches` of them not trivial.
  constexpr void rotate_hoisted(int switches) {
    if (switches == 0) return;
    stats.key_switches += switches;
    stats.mod_ups += 1;
    stats.shared_rotations += switches - 1;
  }
  // A common subexpression's value copied where it occurs again.
  constexpr void reuse() { ++stats.shared_subexpressions; }

  // A term's product computed alone (a plain term: nothing, it is its value).
  constexpr int product(const TermShape& t) {
    switch (t.kind) {
      case TermKind::value: return t.parts;
      case TermKind::cipher_product: return tensor();
      case TermKind::plain_product:
      case TermKind::scalar_product: multiply(t.parts); return t.parts;
    }
    return t.parts;
  }
  // A sum term by term (plan/lower.hpp's sum_terms without fusion): each product computed, then added or
  // subtracted in order, the first negated if it is subtracted.
  constexpr int sum_in_order(std::span<const TermShape> terms) {
    int acc = 0;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      const int parts = product(terms[i]);
      if (i == 0) {
        if (terms[i].negated) negate(parts);
        acc = parts;
      } else {
        acc = add(acc, parts);
      }
    }
    return acc;
  }
  // The fused pass (plan/fused_sum.hpp): one linear combination per part of the products that join it, then the
  // other terms computed alone and added or subtracted.
  constexpr int fused_sum(std::span<const TermShape> terms) {
    int parts = 0;
    for (const auto& t : terms) {
      if (!fusable(t.kind, t.negated)) continue;
      if (t.kind == TermKind::cipher_product) ++stats.tensor_products;  // inside the pass
      parts = std::max(parts, t.parts);
    }
    ++stats.fused_sums;
    stats.elementwise_passes += parts;
    int acc = parts;
    for (const auto& t : terms)
      if (!fusable(t.kind, t.negated)) acc = add(acc, product(t));
    return acc;
  }
  // The same with the rescale folded in (folds_rescale): per part one pass over the dropped limbs and one that
  // writes the kept limbs divided (the transforms between them are not counted, as for a rescale alone).
  constexpr int fused_sum_rescaled(std::span<const TermShape> terms) {
    const int parts = fused_sum(terms);
    stats.elementwise_passes += 2 * parts - parts;
    ++stats.rescales;
    ++stats.folded_rescales;
    return parts;
  }
};

}  // namespace cerium::plan
