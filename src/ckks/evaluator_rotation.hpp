#pragma once
// Member definitions of BasicEvaluator: rotations, conjugation and hoisted rotations. Included by evaluator.cpp,
// which instantiates them.
//
// A rotation by r is the automorphism sigma = X -> X^(5^r): (sigma(c0), sigma(c1)) decrypts under sigma(s), and a
// key switch of sigma(c1) from sigma(s) back to s finishes it. Every rotation here switches through
// key_switch_apply with sigma applied to the ModUp digits of c1 (sigma(ModUp(c1)), a permutation in NTT form),
// rather than ModUp(sigma(c1)): the two differ in the fast-conversion term (noise-sized, not bit-equal), and
// taking the hoisted path for single rotations too makes rotate and rotate_hoisted (and any fused plan that
// shares a ModUp) agree word for word, at no extra cost.

#include <bit>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "cerium/ckks/evaluator.hpp"
#include "cerium/core/check.hpp"
#include "cerium/ring/automorphism.hpp"

namespace cerium::ckks {

namespace evaluator_detail {

// steps mod slots in [0, slots).
inline std::int64_t reduce_steps(std::int64_t steps, std::size_t slots) {
  const auto n = static_cast<std::int64_t>(slots);
  return ((steps % n) + n) % n;
}

inline void require_two_parts(const Ciphertext& a, const char* operation) {
  require(a.size() == 2, "{}: the ciphertext has {} parts and {} needs 2; relinearize it first", operation, a.size(),
          operation);
}

}  // namespace evaluator_detail

template <backend::PolyBackend B>
typename BasicEvaluator<B>::RotationKey BasicEvaluator<B>::rotation_key(std::int64_t steps, std::size_t slots) const {
  const std::size_t n = context_->ring_degree();
  // The slot count is the period steps are reduced by (a division): a power of two up to N/2, as encoded.
  require(std::has_single_bit(slots) && slots <= n / 2,
          "rotation_key({}, {}): {} slots; the slot count must be a power of two in [1, N/2 = {}] (Ciphertext::slots)",
          steps, slots, slots, n / 2);
  require<MissingKeyError>(galois_keys_ != nullptr,
                           "rotate by {} steps: no Galois keys; call set_galois_keys with the keys of "
                           "key_generator.galois_keys({{{}}})",
                           steps, steps);
  const std::uint32_t element = ring::rotation_galois_element(steps, n);
  if (galois_keys_->contains(element)) return {element, &galois_keys_->at(element, steps)};
  // With sparse packing the slots repeat with period `slots`, so steps that agree mod slots rotate alike: accept a
  // key made for an equivalent step.
  const std::int64_t reduced = evaluator_detail::reduce_steps(steps, slots);
  for (const std::int64_t equivalent : {reduced, reduced - static_cast<std::int64_t>(slots)}) {
    const std::uint32_t other = ring::rotation_galois_element(equivalent, n);
    if (galois_keys_->contains(other)) return {other, &galois_keys_->at(other, equivalent)};
  }
  throw MissingKeyError(fmt::format(
      "rotate by {} steps: no rotation key for Galois element {} (5^{} mod 2N, N = {}) among the {} Galois keys "
      "given; generate it with key_generator.galois_keys({{{}}}) and pass the keys to set_galois_keys",
      steps, element, evaluator_detail::reduce_steps(steps, n / 2), n, galois_keys_->size(), steps));
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::apply_galois(const Ciphertext& a, const rlwe::DecomposedPoly& c1_digits,
                                           std::uint32_t galois_element, const SwitchingKey& key) const {
  const ring::Automorphism& automorphism = context_->automorphism(galois_element);
  const ring::RnsPoly c0 = backend_.automorphism(automorphism, a.part(0));
  auto switched = backend_.key_switch_apply(*context_, c1_digits, key, &automorphism,
                                            std::array<const ring::RnsPoly*, 2>{&c0, nullptr});
  std::vector<ring::RnsPoly> parts;
  parts.reserve(2);
  parts.push_back(std::move(switched[0]));
  parts.push_back(std::move(switched[1]));
  return Ciphertext(context_, std::move(parts), a.level(), a.scale(), a.slots());
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::rotate(const Ciphertext& a, std::int64_t steps) const {
  check_operand(a, "rotate");
  evaluator_detail::require_two_parts(a, "rotate");
  if (evaluator_detail::reduce_steps(steps, a.slots()) == 0) return a.clone();
  const RotationKey key = rotation_key(steps, a.slots());
  const rlwe::DecomposedPoly digits = backend_.mod_up(*context_, a.part(1), a.level());
  return apply_galois(a, digits, key.element, *key.key);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::rotate_inplace(Ciphertext& a, std::int64_t steps) const {
  a = rotate(a, steps);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::conjugate(const Ciphertext& a) const {
  check_operand(a, "conjugate");
  evaluator_detail::require_two_parts(a, "conjugate");
  const std::uint32_t element = ring::conjugation_galois_element(context_->ring_degree());
  require<MissingKeyError>(galois_keys_ != nullptr && galois_keys_->contains(element),
                           "conjugate: no conjugation key (Galois element {}); generate Galois keys with "
                           "key_generator.galois_keys(steps, /*conjugation=*/true) and pass them to set_galois_keys",
                           element);
  const rlwe::DecomposedPoly digits = backend_.mod_up(*context_, a.part(1), a.level());
  return apply_galois(a, digits, element, galois_keys_->at(element));
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::conjugate_inplace(Ciphertext& a) const {
  a = conjugate(a);
}

template <backend::PolyBackend B>
std::vector<Ciphertext> BasicEvaluator<B>::rotate_hoisted(const Ciphertext& a,
                                                          std::span<const std::int64_t> steps) const {
  check_operand(a, "rotate_hoisted");
  evaluator_detail::require_two_parts(a, "rotate_hoisted");
  // Find every key before any work, so that a missing one fails fast.
  std::vector<RotationKey> plans(steps.size());  // key null: a multiple of the slot count, a plain copy
  bool any = false;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (evaluator_detail::reduce_steps(steps[i], a.slots()) == 0) continue;
    plans[i] = rotation_key(steps[i], a.slots());
    any = true;
  }
  std::optional<rlwe::DecomposedPoly> digits;
  if (any) digits = backend_.mod_up(*context_, a.part(1), a.level());  // the one ModUp all rotations share
  std::vector<Ciphertext> out;
  out.reserve(steps.size());
  for (const RotationKey& plan : plans) {
    out.push_back(plan.key == nullptr ? a.clone() : apply_galois(a, *digits, plan.element, *plan.key));
  }
  return out;
}

}  // namespace cerium::ckks
