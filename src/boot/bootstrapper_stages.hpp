#pragma once
// Member definitions of BasicBootstrapper: the pipeline and its stages (scale-down, encapsulation and ModRaise,
// SubSum, CoeffToSlot, EvalMod, SlotToCoeff). Included by the instantiations (bootstrapper.cpp, cuda/).

#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <utility>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/circuits/scaled_constant.hpp"
#include "cerium/core/check.hpp"

namespace cerium::boot {

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::bootstrap(const Ciphertext& input) const {
  return bootstrap(input, 0);
}

template <backend::PolyBackend B>
void BasicBootstrapper<B>::require_output_factor(const char* what, int log2_factor) {
  require(log2_factor <= 0 && log2_factor >= -max_shrink_bits,
          "{}: an output factor of 2^{} is outside 2^-{} .. 1 (a larger one is an integer product after it)", what,
          log2_factor, max_shrink_bits);
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::bootstrap(const Ciphertext& input, int log2_factor) const {
  require_output_factor("bootstrap", log2_factor);  // before the work
  Ciphertext scaled = scale_down(input);  // checks the input (level, slots, parts) first
  require<MissingKeyError>(keys_ != nullptr,
                           "bootstrap: no bootstrapping keys; call set_keys(std::make_shared<const BootstrapKeys>("
                           "bootstrapper.generate_keys(key_generator))) first");
  Ciphertext raised = sub_sum(mod_raise(scaled));
  auto halves = coeff_to_slot(raised);
  if (joined_) return slot_to_coeff(eval_mod(join_halves(halves), log2_factor));
  const Ciphertext real_half = eval_mod(halves[0], log2_factor);
  const Ciphertext imaginary_half = eval_mod(halves[1], log2_factor);
  return slot_to_coeff(real_half, imaginary_half);
}

template <backend::PolyBackend B>
std::array<Ciphertext, 2> BasicBootstrapper<B>::bootstrap_pair(const Ciphertext& a, const Ciphertext& b,
                                                               int log2_factor) const {
  require(log2_factor <= 0 && log2_factor - 1 >= -max_shrink_bits,
          "bootstrap_pair: a factor of 2^{}; give 2^{} to 2^0 (one bit of EvalMod's range halves the pair)",
          log2_factor, 1 - max_shrink_bits);
  ckks::require_same_context(context_, a.context(), "bootstrap_pair");
  ckks::require_same_context(context_, b.context(), "bootstrap_pair");
  require<MismatchError>(a.level() == b.level() && a.slots() == b.slots() && ckks::scales_match(a.scale(), b.scale()),
                         "bootstrap_pair: the inputs are at levels {} and {}, with {} and {} slots and scales {} and "
                         "{}; bring them to one level and scale first",
                         a.level(), b.level(), a.slots(), b.slots(), ckks::format_scale(a.scale()),
                         ckks::format_scale(b.scale()));
  Ciphertext i_b = b.clone();
  evaluator_.multiply_inplace(i_b, monomial_i(false, i_b.level(), i_b.slots()));  // i b, exact
  // a + i b + conj(a - i b) = 2 (Re a + i Re b); read at twice its scale (the same words), Re a + i Re b.
  Ciphertext packed = evaluator_.add(a, i_b);
  evaluator_.add_inplace(packed, evaluator_.conjugate(evaluator_.sub(a, i_b)));
  packed.set_scale(2 * packed.scale());
  // w = (Re a + i Re b) / 2: its real part doubled is Re a, its imaginary part doubled is Re b.
  const Ciphertext w = bootstrap(packed, log2_factor - 1);
  const Ciphertext conjugated = evaluator_.conjugate(w);
  Ciphertext real = evaluator_.add(w, conjugated);
  Ciphertext imaginary = evaluator_.sub(w, conjugated);
  evaluator_.multiply_inplace(imaginary, monomial_i(true, imaginary.level(), imaginary.slots()));
  return {std::move(real), std::move(imaginary)};
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::scale_down(const Ciphertext& input) const {
  ckks::require_same_context(context_, input.context(), "bootstrap");
  require<LevelError>(input.level() >= 1,
                      "bootstrap: the input is at level 0; bootstrapping spends one level bringing the message "
                      "below q0, so pass it at level 1 or above");
  require<MismatchError>(input.slots() == slots_,
                         "bootstrap: the input has {} slots and this bootstrapper was made for {} "
                         "(BootstrapConfig::slots): encode it with {} slots or make a bootstrapper for {}",
                         input.slots(), slots_, slots_, input.slots());
  require(input.size() == 2, "bootstrap: the input has {} parts; relinearize it first", input.size());
  Ciphertext ct = evaluator_.level_down(input, 1);
  // 1 encoded so that the rescale by P_1 lands on raise_scale_: the message keeps its value, its integer
  // representation shrinks to about q0 / 2^ratio.
  const double scale = raise_scale_ * evaluator_.level_prime_product(1) / ct.scale();
  circuits::multiply_constant_at_scale(evaluator_, ct, 1.0, scale);
  evaluator_.rescale_inplace(ct);
  return ct;
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::key_switch(const Ciphertext& input, const ckks::SwitchingKey& key) const {
  const B& backend = evaluator_.backend();
  const rlwe::DecomposedPoly digits = backend.mod_up(*context_, input.part(1), input.level());
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
  require<MismatchError>(!raised.empty(), "sub_sum: the ciphertext is empty (default-constructed or moved from)");
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
std::array<Ciphertext, 2> BasicBootstrapper<B>::coeff_to_slot(const Ciphertext& raised) const {
  Ciphertext ct = raised.clone();
  for (const auto& t : coeff_to_slot_) {
    ct.set_slots(t->slots());  // joined halves: the last level's 2n slots read [x, x] (period n) as they are
    ct = t->apply(evaluator_, ct);
  }
  // Slots hold w = BR(u) / (2 K q0) with u_k = t_k + i t_(k + N/2): w + conj(w) and -i (w - conj(w)) are the
  // two real halves.
  const Ciphertext conjugated = evaluator_.conjugate(ct);
  Ciphertext imaginary = evaluator_.sub(ct, conjugated);
  // The monomial -X^(N/2): exact, scale unchanged.
  evaluator_.multiply_inplace(imaginary, monomial_i(true, imaginary.level(), imaginary.slots()));
  evaluator_.add_inplace(ct, conjugated);
  return {std::move(ct), std::move(imaginary)};
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::eval_mod(const Ciphertext& half, int log2_factor) const {
  require_output_factor("eval_mod", log2_factor);
  require<LevelError>(half.level() == levels_.after_coeff_to_slot,
                      "eval_mod: the ciphertext is at level {}; EvalMod starts at level {} (after CoeffToSlot)",
                      half.level(), levels_.after_coeff_to_slot);
  require<LevelError>(ckks::scales_match(half.scale(), chain_.at(levels_.after_coeff_to_slot)),
                      "eval_mod: the ciphertext's scale {} is not EvalMod's {} at level {} (where CoeffToSlot lands)",
                      ckks::format_scale(half.scale()), ckks::format_scale(chain_.at(levels_.after_coeff_to_slot)),
                      levels_.after_coeff_to_slot);
  // The result times c = 2^log2_factor: z_k = c_k cos(2^k t) with c_k = c^(1 / 2^(r - k)) for r double angles,
  // so that c_k^2 = c_(k+1) and z_(k+1) = 2 z_k^2 - c_(k+1) (cos 2t = 2 cos^2 t - 1): z_0 is the series times c_0.
  const int shrink = -log2_factor, r = config_.double_angle_steps;
  Ciphertext y = eval_mod_series_[static_cast<std::size_t>(shrink)].evaluate(evaluator_, half, chain_);
  for (int step = 0; step < r; ++step) {
    y = chain_.multiply(evaluator_, y, y);
    evaluator_.multiply_integer_inplace(y, 2);
    evaluator_.sub_inplace(y, double_angle_factor(shrink, r - step - 1));  // exactly 1 for shrink = 0
  }
  chain_.bring_to(evaluator_, y, levels_.after_eval_mod);
  return y;
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::slot_to_coeff(const Ciphertext& real_half, const Ciphertext& imaginary_half) const {
  if (joined_) return slot_to_coeff(join_halves({real_half.clone(), imaginary_half.clone()}));
  Ciphertext ct = imaginary_half.clone();
  evaluator_.multiply_inplace(ct, monomial_i(false, ct.level(), ct.slots()));  // the monomial X^(N/2)
  evaluator_.add_inplace(ct, real_half);
  for (const auto& t : slot_to_coeff_) ct = t->apply(evaluator_, ct);
  return ct;
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::join_halves(const std::array<Ciphertext, 2>& halves) const {
  require(joined_, "join_halves: this bootstrapper keeps its halves apart (BootstrapConfig::join_halves, at N/4 "
                   "slots or fewer)");
  require(halves[0].slots() == 2 * slots_ && halves[1].slots() == 2 * slots_,
          "join_halves: halves of {} and {} slots; coeff_to_slot gives {}", halves[0].slots(), halves[1].slots(),
          2 * slots_);
  // [re, 0] + R^n [im, 0] = [re, im]: rotating a vector of period 2n by n (SubSum's key) swaps its halves.
  return evaluator_.add(halves[0], evaluator_.rotate(halves[1], static_cast<std::int64_t>(slots_)));
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::slot_to_coeff(const Ciphertext& joined) const {
  require(joined_, "slot_to_coeff: this bootstrapper keeps its halves apart; pass the real and imaginary halves");
  Ciphertext ct = joined.clone();
  for (const auto& t : slot_to_coeff_) {
    ct.set_slots(t->slots());  // after the first level the result has period n again
    ct = t->apply(evaluator_, ct);
  }
  return ct;
}

}  // namespace cerium::boot
