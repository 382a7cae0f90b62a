#pragma once
// Member definitions of BasicBootstrapper: the pipeline and its linear stages (scale-down, encapsulation and
// ModRaise, SubSum, CoeffToSlot, SlotToCoeff). Included by bootstrapper.cpp, which instantiates them.

#include <array>
#include <cmath>
#include <complex>
#include <map>
#include <utility>
#include <vector>

#include "cerium/ckks/bootstrap/bootstrapper.hpp"
#include "cerium/core/check.hpp"
#include "transform.hpp"

namespace cerium::ckks {

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::bootstrap(const Ciphertext& input) const {
  Ciphertext raised = sub_sum(mod_raise(scale_down(input)));
  auto halves = coeff_to_slot(raised);
  const Ciphertext real_half = eval_mod(halves[0]);
  const Ciphertext imaginary_half = eval_mod(halves[1]);
  return slot_to_coeff(real_half, imaginary_half);
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::scale_down(const Ciphertext& input) const {
  require_same_context(context_, input.context(), "bootstrap");
  require<LevelError>(input.level() >= 1,
                      "bootstrap: the input is at level 0; bootstrapping spends one level bringing the message "
                      "below q0, so pass it at level 1 or above");
  require(input.slots() == slots_,
          "bootstrap: the input has {} slots and this bootstrapper was made for {} (BootstrapConfig::slots)",
          input.slots(), slots_);
  require(input.size() == 2, "bootstrap: the input has {} parts; relinearize it first", input.size());
  Ciphertext ct = evaluator_.level_down(input, 1);
  // 1 encoded so that the rescale by P_1 lands on raise_scale_: the message keeps its value, its integer
  // representation shrinks to about q0 / 2^ratio.
  const double scale = raise_scale_ * evaluator_.level_prime_product(1) / ct.scale();
  multiply_by_constant(ct, 1.0, scale);
  evaluator_.rescale_inplace(ct);
  return ct;
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::key_switch(const Ciphertext& input, const SwitchingKey& key) const {
  const B& backend = evaluator_.backend();
  const DecomposedPoly digits = backend.mod_up(*context_, input.part(1), input.level());
  auto switched = backend.key_switch_apply(*context_, digits, key, static_cast<const ring::Automorphism*>(nullptr),
                                           std::array<const ring::RnsPoly*, 2>{&input.part(0), nullptr});
  std::vector<ring::RnsPoly> parts;
  parts.push_back(std::move(switched[0]));
  parts.push_back(std::move(switched[1]));
  return Ciphertext(context_, std::move(parts), input.level(), input.scale(), input.slots());
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::mod_raise(const Ciphertext& level_zero) const {
  require<LevelError>(level_zero.level() == 0, "mod_raise: the ciphertext is at level {}; ModRaise starts at level 0",
                      level_zero.level());
  require(level_zero.size() == 2, "mod_raise: the ciphertext has {} parts; relinearize it first", level_zero.size());
  if (config_.sparse_encapsulation) {
    require<MissingKeyError>(keys_ != nullptr && keys_->to_sparse && keys_->from_sparse,
                             "mod_raise: sparse encapsulation needs the keys of generate_keys; call set_keys");
  }
  const Ciphertext under_sparse =
      config_.sparse_encapsulation ? key_switch(level_zero, *to_sparse_) : level_zero.clone();
  // The centered lift of each part modulo q0, reduced into every prime of the top level: the plaintext becomes
  // m + q0 I for a small integer polynomial I.
  const B& backend = evaluator_.backend();
  const auto& top_basis = context_->q_basis(levels_.top);
  std::vector<ring::RnsPoly> parts;
  for (const auto& part : under_sparse.parts()) parts.push_back(backend.mod_raise(part, top_basis));
  Ciphertext raised(context_, std::move(parts), levels_.top, under_sparse.scale(), under_sparse.slots());
  if (config_.sparse_encapsulation) return key_switch(raised, *from_sparse_);
  return raised;
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::sub_sum(const Ciphertext& raised) const {
  const std::size_t max_slots = context_->parameters().max_slots();
  Ciphertext sum = raised.clone();
  if (slots_ == max_slots) return sum;
  // The automorphisms X -> X^(5^(k n)) fix the subring of the slots; their sum keeps gap * (the subring part)
  // and cancels the rest. Rotating by multiples of n needs the ciphertext viewed with N/2 slots.
  sum.set_slots(max_slots);
  for (std::size_t step = slots_; step < max_slots; step *= 2) {
    evaluator_.add_inplace(sum, evaluator_.rotate(sum, static_cast<std::int64_t>(step)));
  }
  sum.set_slots(slots_);
  return sum;
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::apply_transform(const Transform& t, const Ciphertext& input) const {
  require<LevelError>(input.level() >= t.level, "bootstrap: a DFT stage expects level {} and got {}", t.level,
                      input.level());
  const Ciphertext ct = evaluator_.level_down(input, t.level);
  const std::vector<Ciphertext> rotated = evaluator_.rotate_hoisted(ct, t.plan.babies);
  std::map<std::int64_t, const Ciphertext*> by_baby;
  for (std::size_t i = 0; i < t.plan.babies.size(); ++i) by_baby[t.plan.babies[i]] = &rotated[i];

  Ciphertext sum;
  const B& backend = evaluator_.backend();
  const auto& basis = context_->q_basis(t.level);
  for (const auto& [giant, babies] : t.plan.giants) {
    // The inner sum sum_b rot_b(ct) * diag_(g, b) as one fused pass per part (the backend's linear combination):
    // the words of the eager multiply-and-add sequence, each rotation and diagonal read once.
    std::vector<Plaintext> scratch(babies.size());
    std::array<std::vector<const ring::RnsPoly*>, 2> left;
    std::vector<const ring::RnsPoly*> right;
    double plaintext_scale = 0;
    for (std::size_t i = 0; i < babies.size(); ++i) {
      const Ciphertext& rotated_ct = *by_baby.at(babies[i]);
      const Plaintext& diagonal = diagonal_plaintext(t, giant, babies[i], scratch[i]);
      left[0].push_back(&rotated_ct.part(0));
      left[1].push_back(&rotated_ct.part(1));
      right.push_back(&diagonal.poly());
      plaintext_scale = diagonal.scale();
    }
    std::vector<ring::RnsPoly> parts;
    for (std::size_t p = 0; p < 2; ++p) {
      parts.push_back(backend.allocate(basis, ring::PolyOptions{.form = ring::PolyForm::ntt,
                                                                .init = BufferInit::uninitialized}));
      backend.multiply_accumulate_many(parts.back(), left[p], right, false);
    }
    Ciphertext inner(context_, std::move(parts), t.level, ct.scale() * plaintext_scale, ct.slots());
    if (giant != 0) inner = evaluator_.rotate(inner, giant);
    if (sum.empty()) {
      sum = std::move(inner);
    } else {
      evaluator_.add_inplace(sum, inner);
    }
  }
  evaluator_.rescale_inplace(sum);
  return sum;
}

template <backend::PolyBackend B>
std::array<Ciphertext, 2> BasicBootstrapper<B>::coeff_to_slot(const Ciphertext& raised) const {
  Ciphertext ct = raised.clone();
  for (const auto& t : coeff_to_slot_) ct = apply_transform(*t, ct);
  // Slots hold w = BR(u) / (2 K q0) with u_k = t_k + i t_(k + N/2): w + conj(w) and -i (w - conj(w)) are the
  // two real halves.
  const Ciphertext conjugated = evaluator_.conjugate(ct);
  Ciphertext imaginary = evaluator_.sub(ct, conjugated);
  Plaintext scratch;
  evaluator_.multiply_inplace(imaginary, monomial_i(true, imaginary.level(), scratch));  // the monomial -X^(N/2): exact, scale unchanged
  evaluator_.add_inplace(ct, conjugated);
  return {std::move(ct), std::move(imaginary)};
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::slot_to_coeff(const Ciphertext& real_half, const Ciphertext& imaginary_half) const {
  Ciphertext ct = imaginary_half.clone();
  Plaintext scratch;
  evaluator_.multiply_inplace(ct, monomial_i(false, ct.level(), scratch));  // the monomial X^(N/2)
  evaluator_.add_inplace(ct, real_half);
  for (const auto& t : slot_to_coeff_) ct = apply_transform(*t, ct);
  return ct;
}

}  // namespace cerium::ckks
