#pragma once
// The fused sum of products: sum_t a_t * pt_t and sum_t a_t (x) b_t (and any plain terms) accumulated with one
// backend multiply_accumulate_many per polynomial instead of a multiply and an add per term.
//
// It must write the eager sequence's words (multiply each term, add left to right), so it runs only where the
// eager sequence would do no alignment: every operand at one level, one slot count, this evaluator's context,
// the plaintexts at that level, and every term's scale matching the running sum's (scales_match), so the eager
// adds would not move a level or adjust a scale. Then the parts are exact modular sums (any order agrees) and
// the scale is the eager one, replayed term by term (equal scales kept, matching ones averaged, as add does).
// The first product goes through the evaluator, which checks what a product needs (a level to spend, the
// scale's headroom); the others match its level and scale, so the same checks hold for them.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/scale.hpp"
#include "cerium/plan/terms.hpp"

namespace cerium::plan {

namespace fused_detail {

template <backend::PolyBackend B>
bool operand_fits(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& a, int level, std::size_t slots) {
  return a.context() == ev.context() && a.level() == level && a.slots() == slots;
}

// The scale of a term once multiplied.
inline double term_scale(const Term<ckks::Ciphertext>& t) {
  using Kind = Term<ckks::Ciphertext>::Kind;
  if (t.kind == Kind::plain_product) return t.a.scale() * t.plain->value->scale();
  if (t.kind == Kind::cipher_product) return t.a.scale() * t.b.scale();
  return t.a.scale();
}

inline std::size_t term_parts(const Term<ckks::Ciphertext>& t) {
  using Kind = Term<ckks::Ciphertext>::Kind;
  return t.kind == Kind::cipher_product ? 3 : t.a.size();
}

}  // namespace fused_detail

// Returns false, touching nothing, where the eager sequence would align operands (the caller then runs it).
template <backend::PolyBackend B>
bool fused_sum(const ckks::BasicEvaluator<B>& ev, std::span<Term<ckks::Ciphertext>> terms, ckks::Ciphertext& out) {
  using Kind = Term<ckks::Ciphertext>::Kind;
  using namespace fused_detail;
  std::size_t first = terms.size();
  for (std::size_t i = 0; i < terms.size() && first == terms.size(); ++i)
    if (terms[i].kind != Kind::value) first = i;
  if (first == terms.size()) return false;

  const int level = terms[first].a.level();
  const std::size_t slots = terms[first].a.slots();
  std::size_t parts = 0;
  double scale = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto& t = terms[i];
    if (!operand_fits(ev, t.a, level, slots)) return false;
    if (t.kind == Kind::cipher_product && !operand_fits(ev, t.b, level, slots)) return false;
    if (t.kind == Kind::plain_product) {
      const ckks::Plaintext& p = *t.plain->value;
      if (p.context() != ev.context() || p.level() != level || p.slots() != slots) return false;
    }
    const double s = term_scale(t);
    if (i > 0 && !ckks::scales_match(scale, s)) return false;
    scale = i == 0 || scale == s ? s : (scale + s) / 2;  // the eager add's rule, in the eager order
    if (t.kind != Kind::value) parts = std::max(parts, term_parts(t));  // plain terms are added by the evaluator
  }
  if (term_parts(terms[first]) != parts) return false;  // the output takes its parts from the first product

  const Term<ckks::Ciphertext>& head = terms[first];
  out = head.kind == Kind::plain_product ? ev.multiply(head.a, *head.plain->value)
                                         : ev.multiply_no_relin(head.a, head.b);
  std::vector<const ring::RnsPoly*> left, right;
  for (std::size_t j = 0; j < parts; ++j) {
    left.clear();
    right.clear();
    for (std::size_t i = first + 1; i < terms.size(); ++i) {
      const auto& t = terms[i];
      if (t.kind == Kind::plain_product && j < t.a.size()) {
        left.push_back(&t.a.part(j));
        right.push_back(&t.plain->value->poly());
      } else if (t.kind == Kind::cipher_product) {  // d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1
        if (j == 0 || j == 1) {
          left.push_back(&t.a.part(0));
          right.push_back(&t.b.part(j));
        }
        if (j == 1 || j == 2) {
          left.push_back(&t.a.part(1));
          right.push_back(&t.b.part(j - 1));
        }
      }
    }
    if (!left.empty()) ev.backend().multiply_accumulate_many(out.part(j), left, right, true);
  }
  for (std::size_t i = 0; i < terms.size(); ++i)
    if (terms[i].kind == Kind::value) ev.add_inplace(out, terms[i].a);  // same level, matching scale: no alignment
  out.set_scale(scale);
  out.set_c1_seed(std::nullopt);
  return true;
}

}  // namespace cerium::plan
