#pragma once
// The fused sum of products: sum_t a_t * pt_t, sum_t a_t (x) b_t and sum_t +-a_t * c_t (real or integer
// constants), and any other terms, accumulated with one backend linear_combination per polynomial instead of a
// multiply and an add per term.
//
// It must write the eager sequence's words (multiply each term, add or subtract left to right), so it runs only
// where the eager sequence would do no alignment: every operand at one level, one slot count, this evaluator's
// context, the plaintexts at that level, and every term's scale matching the running sum's (scales_match), so
// the eager adds would not move a level or adjust a scale. Then the parts are exact modular sums (any order
// agrees; a subtracted constant product is a product by the negated constant, the same residues) and the scale
// is the eager one, replayed term by term (equal scales kept, matching ones averaged, as add does). The checks
// the evaluator makes before a product (a level to spend, the scale's headroom) are made here first: where one
// fails, nothing is done and the eager sequence runs, raising the evaluator's own error. Terms that do not join
// the pass (plain terms, subtracted plaintext or ciphertext products) are computed alone and added after.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/scale.hpp"
#include "cerium/circuits/scaled_constant.hpp"
#include "cerium/plan/terms.hpp"
#include "cerium/ring/rns_poly.hpp"

namespace cerium::plan {

namespace fused_detail {

template <backend::PolyBackend B>
bool operand_fits(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& a, int level, std::size_t slots) {
  return a.context() == ev.context() && a.level() == level && a.slots() == slots;
}

// The scale of a term once multiplied (a constant is encoded at the level's primes, as the evaluator does).
template <backend::PolyBackend B>
double term_scale(const ckks::BasicEvaluator<B>& ev, const Term<ckks::Ciphertext>& t) {
  switch (t.kind) {
    case TermKind::value: return t.first().scale();
    case TermKind::plain_product: return t.first().scale() * t.plain->value->scale();
    case TermKind::cipher_product: return t.first().scale() * t.second().scale();
    case TermKind::scalar_product:  // an integer leaves the scale as it is
      return t.constant != nullptr ? t.first().scale() * ev.level_prime_product(t.first().level()) : t.first().scale();
  }
  return t.first().scale();
}

inline std::size_t term_parts(const Term<ckks::Ciphertext>& t) {
  using Kind = Term<ckks::Ciphertext>::Kind;
  return t.kind == Kind::cipher_product ? 3 : t.first().size();
}

// What the evaluator checks before this product; false where it would throw.
template <backend::PolyBackend B>
bool product_allowed(const ckks::BasicEvaluator<B>& ev, const Term<ckks::Ciphertext>& t, double scale) {
  using Kind = Term<ckks::Ciphertext>::Kind;
  const int level = t.first().level();
  if (t.kind == Kind::cipher_product && (t.first().size() != 2 || t.second().size() != 2 || level < 1)) return false;
  if (t.kind == Kind::scalar_product && t.constant != nullptr && (level < 1 || t.constant->value.imag() != 0))
    return false;  // complex constants are not a scalar per limb: the eager sequence multiplies them
  if (t.kind == Kind::scalar_product && t.integer != nullptr) return true;  // the scale is unchanged
  return circuits::scale_fits(ev, scale, level);
}

// The scalar per limb of a constant or integer product, negated when the term is subtracted.
template <backend::PolyBackend B>
void append_scalars(const ckks::BasicEvaluator<B>& ev, const Term<ckks::Ciphertext>& t,
                    std::vector<std::uint32_t>& out) {
  const int level = t.first().level();
  const auto& basis = *ev.context()->q_basis(level);
  const std::size_t at = out.size();
  out.resize(at + basis.size());
  const std::span<std::uint32_t> residues(out.data() + at, basis.size());
  if (t.constant != nullptr) {
    const double c = t.constant->value.real() * ev.level_prime_product(level);
    ckks::round_to_residues(t.negated ? -c : c, basis, residues);
  } else {
    const std::int64_t c = t.integer->value;
    for (std::size_t i = 0; i < basis.size(); ++i) residues[i] = ring::reduce_signed(t.negated ? -c : c, basis.prime(i));
  }
}

}  // namespace fused_detail

// Where the terms meet and what the fused pass makes: the eager sequence's level, slots and scale, the parts of
// the products' sum, whether any term is left out of the pass. Nothing when the eager sequence would align
// operands or an evaluator check would fail.
struct FusedShape {
  int level = 0;          // every operand's level
  std::size_t slots = 0;  // every operand's slot count
  std::size_t parts = 0;  // 2, or 3 where a tensor product joins the pass
  double scale = 0;       // the sum's scale, as the eager adds would leave it
  bool all_fused = true;  // false: some term is computed alone and added after the pass
};

// The FusedShape of these terms, or nothing where the fused pass must not run (no term joins it, the eager
// sequence would align operands, or an evaluator check would fail).
template <backend::PolyBackend B>
std::optional<FusedShape> fused_shape(const ckks::BasicEvaluator<B>& ev, std::span<const Term<ckks::Ciphertext>> terms) {
  using Kind = Term<ckks::Ciphertext>::Kind;
  using namespace fused_detail;
  const Term<ckks::Ciphertext>* head = nullptr;
  for (const auto& t : terms)
    if (head == nullptr && fusable(t)) head = &t;
  if (head == nullptr) return std::nullopt;
  FusedShape shape{head->first().level(), head->first().slots()};
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto& t = terms[i];
    if (!operand_fits(ev, t.first(), shape.level, shape.slots)) return std::nullopt;
    if (t.kind == Kind::cipher_product && !operand_fits(ev, t.second(), shape.level, shape.slots)) return std::nullopt;
    if (t.kind == Kind::plain_product) {
      const ckks::Plaintext& p = *t.plain->value;
      if (p.context() != ev.context() || p.level() != shape.level || p.slots() != shape.slots) return std::nullopt;
    }
    const double s = term_scale(ev, t);
    if (i > 0 && !ckks::scales_match(shape.scale, s)) return std::nullopt;
    shape.scale = i == 0 || shape.scale == s ? s : (shape.scale + s) / 2;  // the eager add's rule, in order
    if (!fusable(t)) {
      shape.all_fused = false;
      continue;
    }
    if (!product_allowed(ev, t, s)) return std::nullopt;
    shape.parts = std::max(shape.parts, term_parts(t));
  }
  return shape;
}

// The factors of part j of the fused pass: polynomial products (left, right) and scalar products (scaled with
// one scalar per limb each).
template <backend::PolyBackend B>
void fused_factors(const ckks::BasicEvaluator<B>& ev, std::span<const Term<ckks::Ciphertext>> terms, std::size_t j,
                   std::vector<const ring::RnsPoly*>& left, std::vector<const ring::RnsPoly*>& right,
                   std::vector<const ring::RnsPoly*>& scaled, std::vector<std::uint32_t>& scalars) {
  using Kind = Term<ckks::Ciphertext>::Kind;
  left.clear();
  right.clear();
  scaled.clear();
  scalars.clear();
  for (const auto& t : terms) {
    if (!fusable(t)) continue;
    if (t.kind == Kind::plain_product && j < t.first().size()) {
      left.push_back(&t.first().part(j));
      right.push_back(&t.plain->value->poly());
    } else if (t.kind == Kind::scalar_product && j < t.first().size()) {
      scaled.push_back(&t.first().part(j));
      fused_detail::append_scalars(ev, t, scalars);
    } else if (t.kind == Kind::cipher_product) {  // d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1
      if (j == 0 || j == 1) {
        left.push_back(&t.first().part(0));
        right.push_back(&t.second().part(j));
      }
      if (j == 1 || j == 2) {
        left.push_back(&t.first().part(1));
        right.push_back(&t.second().part(j - 1));
      }
    }
  }
}

// Returns false, touching nothing, where the eager sequence would align operands (the caller then runs it).
template <backend::PolyBackend B>
bool fused_sum(const ckks::BasicEvaluator<B>& ev, std::span<Term<ckks::Ciphertext>> terms, ckks::Ciphertext& out) {
  using Kind = Term<ckks::Ciphertext>::Kind;
  const auto shape = fused_shape(ev, std::span<const Term<ckks::Ciphertext>>(terms));
  if (!shape) return false;
  const auto& basis = ev.context()->q_basis(shape->level);
  std::vector<ring::RnsPoly> sums;
  std::vector<const ring::RnsPoly*> left, right, scaled;
  std::vector<std::uint32_t> scalars;
  for (std::size_t j = 0; j < shape->parts; ++j) {
    fused_factors(ev, std::span<const Term<ckks::Ciphertext>>(terms), j, left, right, scaled, scalars);
    sums.push_back(ev.backend().allocate(basis, ring::PolyOptions{.form = ring::PolyForm::ntt,
                                                                  .init = BufferInit::uninitialized}));
    ev.backend().linear_combination(sums.back(), left, right, scaled, scalars, false);
  }
  out = ckks::Ciphertext(ev.context(), std::move(sums), shape->level, shape->scale, shape->slots);
  for (auto& t : terms) {  // same level, matching scale: no alignment
    if (fusable(t)) continue;
    ckks::Ciphertext v;
    if (t.kind == Kind::plain_product) v = ev.multiply(t.first(), *t.plain->value);
    else if (t.kind == Kind::cipher_product) v = ev.multiply_no_relin(t.first(), t.second());
    else v = std::move(t.a);
    if (t.negated) ev.sub_inplace(out, v); else ev.add_inplace(out, v);
  }
  out.set_scale(shape->scale);
  return true;
}

// rescale(sum) with the rescale folded into the pass (backend linear_combination_rescaled): the words of
// fused_sum then the evaluator's rescale. Only for a 2-part sum whose terms all join the pass (a 3-part one is
// relinearized before its rescale; a term computed alone would have to be added before it); false otherwise,
// touching nothing.
template <backend::PolyBackend B>
bool fused_sum_rescaled(const ckks::BasicEvaluator<B>& ev, std::span<Term<ckks::Ciphertext>> terms,
                        ckks::Ciphertext& out) {
  const auto shape = fused_shape(ev, std::span<const Term<ckks::Ciphertext>>(terms));
  if (!shape || !shape->all_fused || shape->parts != 2 || shape->level < 1) return false;
  const auto& rescaler = ev.context()->rescaler(shape->level);
  const auto& kept = ev.context()->q_basis(shape->level - 1);
  std::vector<ring::RnsPoly> parts;
  std::vector<const ring::RnsPoly*> left, right, scaled;
  std::vector<std::uint32_t> scalars;
  for (std::size_t j = 0; j < shape->parts; ++j) {
    fused_factors(ev, std::span<const Term<ckks::Ciphertext>>(terms), j, left, right, scaled, scalars);
    parts.push_back(ev.backend().allocate(kept, ring::PolyOptions{.form = ring::PolyForm::ntt,
                                                                  .init = BufferInit::uninitialized}));
    ev.backend().linear_combination_rescaled(rescaler, parts.back(), left, right, scaled, scalars);
    ev.backend().drop_to(parts.back(), kept);  // the context's basis object, as the evaluator's rescale leaves
  }
  out = ckks::Ciphertext(ev.context(), std::move(parts), shape->level - 1,
                         shape->scale / ev.level_prime_product(shape->level), shape->slots);
  return true;
}

}  // namespace cerium::plan
