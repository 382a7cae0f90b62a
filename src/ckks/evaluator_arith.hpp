#pragma once
// Member definitions of BasicEvaluator: addition, subtraction, negation, the multiplications, relinearization,
// rescaling and level/scale alignment. Included by evaluator.cpp, which instantiates them.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/core/check.hpp"

namespace cerium::ckks {

namespace evaluator_detail {

// The residues of round(value) modulo every prime of basis (exact for any magnitude). A value that is not finite or
// reaches Q/2 (a constant times a scale: "scale overflow") is round_to_residues' InvalidArgument, naming `operation`.
inline std::vector<std::uint32_t> rounded_residues(double value, const ring::RnsBasis& basis, const char* operation) {
  std::vector<std::uint32_t> residues(basis.size());
  try {
    round_to_residues(value, basis, residues);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(fmt::format("{}: {}", operation, e.what()));
  }
  return residues;
}

// multiply_rescale's checks on top of the product's: its scale must stay at least 1 after the rescale at the lower
// operand's level. Checked before either operand is touched, so that the in-place form leaves a as it was.
template <class Evaluator>
void require_product_rescalable(const Evaluator& ev, const Ciphertext& a, const Ciphertext& b) {
  const int level = std::min(a.level(), b.level());
  const double primes = ev.level_prime_product(level);
  const double after = a.scale() * b.scale() / primes;
  require<LevelError>(after >= 1,
                      "multiply_rescale: the product's scale {} divided by level {}'s primes (2^{:.1f}) would be {}, "
                      "below 1: the message would be lost; multiply operands of larger scales, or multiply without "
                      "rescaling",
                      format_scale(a.scale() * b.scale()), level, std::log2(primes), after);
}

}  // namespace evaluator_detail

// --- Levels and scales ---

template <backend::PolyBackend B>
void BasicEvaluator<B>::level_down_inplace(Ciphertext& a, int level) const {
  check_operand(a, "level_down");
  require<LevelError>(level >= 0 && level <= a.level(),
                      "level_down: cannot go from level {} to level {}: the target must be between 0 and the "
                      "ciphertext's level {}",
                      a.level(), level, a.level());
  if (level == a.level()) return;
  const auto& basis = context_->q_basis(level);
  for (auto& part : a.parts()) backend_.drop_to(part, basis);
  a.set_level(level);
  // The seed of c1 stays valid: the expansion over a prefix of a basis is the prefix of the expansion.
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::rescale_inplace(Ciphertext& a) const {
  check_operand(a, "rescale");
  check_rescalable(a, "rescale");
  const int level = a.level();
  backend_.rescale(context_->rescaler(level), std::span<ring::RnsPoly>(a.parts()));
  finish_rescale(a, level);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::finish_rescale(Ciphertext& a, int level) const {
  const auto& kept = context_->q_basis(level - 1);
  for (auto& part : a.parts()) backend_.drop_to(part, kept);  // the same primes: shares the context's basis object
  a.set_level(level - 1);
  a.set_scale(a.scale() / level_products_[static_cast<std::size_t>(level)]);
  a.set_c1_seed(std::nullopt);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::rescale(const Ciphertext& a) const {
  Ciphertext out = a.clone();
  rescale_inplace(out);
  return out;
}

template <backend::PolyBackend B>
double BasicEvaluator<B>::scale_factor(double scale, double target_scale, int level, const char* operation) const {
  const double p = level_products_[static_cast<std::size_t>(level)];
  // k = round(target P / scale): after the rescale by P the scale is scale k / P, within scale / (2P) of target.
  const double k = std::round(target_scale * p / scale);
  const double landing = scale * k / p;
  require<LevelError>(k >= 1 && scales_match(landing, target_scale),
                      "{}: scale {} at level {} cannot be brought onto {}: the nearest integer factor "
                      "k = {} over the level's primes (2^{:.1f}) lands on {}; rescale the ciphertext first so that "
                      "its scale is at most about the target",
                      operation, format_scale(scale), level, format_scale(target_scale), k, std::log2(p),
                      format_scale(landing));
  return k;
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::adjust_scale_inplace(Ciphertext& a, double target_scale) const {
  check_operand(a, "adjust_scale");
  require(std::isfinite(target_scale) && target_scale > 0, "adjust_scale: the target scale {} is not positive",
          target_scale);
  check_level_left(a, "adjust_scale");
  const int level = a.level();
  const double k = scale_factor(a.scale(), target_scale, level, "adjust_scale");
  check_scale_fits(a.scale() * k, level, "adjust_scale");
  // The rescale below would refuse a scale under 1 after a had been multiplied: refused here, a untouched.
  const double landing = a.scale() * k / level_products_[static_cast<std::size_t>(level)];
  require<LevelError>(landing >= 1,
                      "adjust_scale: the target scale {} lands on {}, below 1: the message would be lost",
                      target_scale, landing);
  const auto residues = evaluator_detail::rounded_residues(k, *context_->q_basis(level), "adjust_scale");
  for (auto& part : a.parts()) backend_.multiply_scalar(part, residues);
  a.set_scale(a.scale() * k);
  rescale_inplace(a);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::adjust_scale(const Ciphertext& a, double target_scale) const {
  Ciphertext out = a.clone();
  adjust_scale_inplace(out, target_scale);
  return out;
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::bring_to(Ciphertext& a, int level, double scale, const char* operation) const {
  if (scales_match(a.scale(), scale)) {
    level_down_inplace(a, level);
    return;
  }
  require<LevelError>(a.level() > level,
                      "{}: both operands are at level {} but their scales differ: {} and {}; bring one onto the "
                      "other's scale with adjust_scale (it spends one level), or arrange the computation so that "
                      "they meet at different levels, where the evaluator aligns them for free",
                      operation, level, format_scale(a.scale()), format_scale(scale));
  scale_factor(a.scale(), scale, level + 1, operation);  // throws before a is touched when the scales cannot meet
  level_down_inplace(a, level + 1);
  adjust_scale_inplace(a, scale);
}

template <backend::PolyBackend B>
const Ciphertext& BasicEvaluator<B>::align(Ciphertext& a, const Ciphertext& b, Ciphertext& copy, bool match_scales,
                                           const char* operation) const {
  if (&a == &b) return b;        // one object: nothing to align
  if (a.level() >= b.level()) {  // a comes down (in place); at equal levels this only checks the scales
    if (match_scales) {
      bring_to(a, b.level(), b.scale(), operation);
    } else {
      level_down_inplace(a, b.level());
    }
    return b;
  }
  copy = b.clone();
  if (match_scales) {
    bring_to(copy, a.level(), a.scale(), operation);
  } else {
    level_down_inplace(copy, a.level());
  }
  return copy;
}

template <backend::PolyBackend B>
const ring::RnsPoly& BasicEvaluator<B>::align(Ciphertext& a, const Plaintext& b, ring::RnsPoly& copy,
                                              const char* /*operation*/) const {
  if (b.level() < a.level()) level_down_inplace(a, b.level());
  if (b.level() == a.level()) return b.poly();
  copy = backend_.clone(b.poly());
  backend_.drop_to(copy, context_->q_basis(a.level()));
  return copy;
}

// --- Addition, subtraction, negation ---

template <backend::PolyBackend B>
void BasicEvaluator<B>::add_or_sub(Ciphertext& a, const Ciphertext& b, bool subtract) const {
  const char* operation = subtract ? "sub" : "add";
  check_binary(a, b, operation);
  Ciphertext copy;
  const Ciphertext& rhs = align(a, b, copy, true, operation);
  // Matching scales (scales_match) may differ in their last bits; the mean keeps the operation symmetric.
  const double scale = a.scale() == rhs.scale() ? a.scale() : (a.scale() + rhs.scale()) / 2;
  const std::size_t common = std::min(a.size(), rhs.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (subtract) {
      backend_.sub(a.part(i), rhs.part(i));
    } else {
      backend_.add(a.part(i), rhs.part(i));
    }
  }
  if (rhs.size() > a.size()) {  // a 3-part operand: the sum keeps its s^2 part (lazy relinearization)
    ring::RnsPoly extra = backend_.clone(rhs.part(2));
    if (subtract) backend_.negate(extra);
    a.parts().push_back(std::move(extra));
  }
  a.set_scale(scale);
  a.set_c1_seed(std::nullopt);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::add_inplace(Ciphertext& a, const Ciphertext& b) const {
  add_or_sub(a, b, false);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::sub_inplace(Ciphertext& a, const Ciphertext& b) const {
  add_or_sub(a, b, true);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::add_or_sub_plain(Ciphertext& a, const Plaintext& b, bool subtract) const {
  const char* operation = subtract ? "sub" : "add";
  check_binary(a, b, operation);
  require<LevelError>(scales_match(a.scale(), b.scale()),
                      "{}: the plaintext's scale {} differs from the ciphertext's {}; encode the plaintext with "
                      "EncodeOptions{{.level = {}, .scale = ciphertext.scale()}}",
                      operation, format_scale(b.scale()), format_scale(a.scale()), a.level());
  ring::RnsPoly copy;
  const ring::RnsPoly& aligned = align(a, b, copy, operation);
  if (subtract) {
    backend_.sub(a.part(0), aligned);
  } else {
    backend_.add(a.part(0), aligned);
  }
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::add_inplace(Ciphertext& a, const Plaintext& b) const {
  add_or_sub_plain(a, b, false);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::sub_inplace(Ciphertext& a, const Plaintext& b) const {
  add_or_sub_plain(a, b, true);
}

template <backend::PolyBackend B>
const ring::RnsPoly& BasicEvaluator<B>::half_monomial() const {
  std::call_once(half_monomial_->made, [&] {
    const auto& basis = context_->q_basis(context_->max_level());
    ring::RnsPoly poly(basis, ring::PolyOptions{.form = ring::PolyForm::coefficient});
    const std::size_t half = context_->ring_degree() / 2;
    for (std::size_t i = 0; i < basis->size(); ++i) poly.limb(i)[half] = 1;
    ring::RnsPoly placed = backend_.place(std::move(poly));
    backend_.to_ntt(placed);
    half_monomial_->poly = std::move(placed);
  });
  return half_monomial_->poly;
}

template <backend::PolyBackend B>
ring::RnsPoly BasicEvaluator<B>::constant_poly(std::complex<double> value, double scale, int level,
                                               const char* operation) const {
  // A constant slot vector z is the polynomial Re z + Im z X^(N/2): X^(N/2) is i at every slot's root. In NTT
  // form (linear, and the NTT of 1 is 1 everywhere) that is Re z + Im z NTT(X^(N/2)), word for word.
  const auto& basis = context_->q_basis(level);
  const auto re = evaluator_detail::rounded_residues(value.real() * scale, *basis, operation);
  const auto im = evaluator_detail::rounded_residues(value.imag() * scale, *basis, operation);
  ring::RnsPoly poly = backend_.prefix(half_monomial(), basis);
  backend_.multiply_scalar(poly, im);
  backend_.add_scalar(poly, re);
  return poly;
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::add_constant(Ciphertext& a, std::complex<double> constant, const char* operation) const {
  check_operand(a, operation);
  require(std::isfinite(constant.real()) && std::isfinite(constant.imag()), "{}: the constant ({}, {}) is not finite",
          operation, constant.real(), constant.imag());
  if (constant.imag() == 0) {  // a real constant is the same residue in every NTT slot of c0
    const auto residues =
        evaluator_detail::rounded_residues(constant.real() * a.scale(), *context_->q_basis(a.level()), operation);
    backend_.add_scalar(a.part(0), residues);
  } else {
    backend_.add(a.part(0), constant_poly(constant, a.scale(), a.level(), operation));
  }
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::add_inplace(Ciphertext& a, double constant) const {
  add_constant(a, {constant, 0.0}, "add a constant");
}
template <backend::PolyBackend B>
void BasicEvaluator<B>::add_inplace(Ciphertext& a, std::complex<double> constant) const {
  add_constant(a, constant, "add a constant");
}
template <backend::PolyBackend B>
void BasicEvaluator<B>::sub_inplace(Ciphertext& a, double constant) const {
  add_constant(a, {-constant, 0.0}, "sub a constant");
}
template <backend::PolyBackend B>
void BasicEvaluator<B>::sub_inplace(Ciphertext& a, std::complex<double> constant) const {
  add_constant(a, -constant, "sub a constant");
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::negate_inplace(Ciphertext& a) const {
  check_operand(a, "negate");
  for (auto& part : a.parts()) backend_.negate(part);
  a.set_c1_seed(std::nullopt);
}

// --- Multiplications ---

template <backend::PolyBackend B>
double BasicEvaluator<B>::tensor_scale(const Ciphertext& a, const Ciphertext& b) const {
  check_binary(a, b, "multiply");
  require(a.size() == 2 && b.size() == 2,
          "multiply: a product needs 2-part ciphertexts and an operand has 3 parts (the operands have {} and {}); "
          "relinearize it first",
          a.size(), b.size());
  const int level = std::min(a.level(), b.level());
  require<LevelError>(level >= 1,
                      "multiply: no level left: an operand is at level 0 (scales {} and {}); bootstrap or use more "
                      "levels (CkksConfig::levels = {} now)",
                      format_scale(a.scale()), format_scale(b.scale()), context_->max_level());
  const double scale = a.scale() * b.scale();
  check_scale_fits(scale, level, "multiply");
  return scale;
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::tensor(Ciphertext& a, const Ciphertext& b) const {
  const double scale = tensor_scale(a, b);
  Ciphertext copy;
  const Ciphertext& rhs = align(a, b, copy, false, "multiply");
  // (a0 + a1 s)(b0 + b1 s) = a0 b0 + (a0 b1 + a1 b0) s + a1 b1 s^2. Every read of a part happens before a0 is
  // overwritten, so a and b may be one object (squaring).
  auto [d1, d2] = backend_.tensor(a.part(0), a.part(1), rhs.part(0), rhs.part(1));
  a.part(1) = std::move(d1);
  a.parts().push_back(std::move(d2));
  a.set_scale(scale);
  a.set_c1_seed(std::nullopt);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::multiply_no_relin_inplace(Ciphertext& a, const Ciphertext& b) const {
  tensor(a, b);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::require_relinearization_key(const char* operation) const {
  require<MissingKeyError>(relin_key_ != nullptr,
                           "{}: no relinearization key; call set_relinearization_key with "
                           "std::make_shared<RelinearizationKey>(key_generator.relinearization_key()), or use "
                           "multiply_no_relin",
                           operation);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::multiply_inplace(Ciphertext& a, const Ciphertext& b) const {
  require_relinearization_key("multiply");
  tensor(a, b);
  relinearize_inplace(a);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::multiply_rescale_inplace(Ciphertext& a, const Ciphertext& b) const {
  require_relinearization_key("multiply_rescale");
  check_binary(a, b, "multiply_rescale");
  check_level_left(a, "multiply_rescale");
  check_level_left(b, "multiply_rescale");
  evaluator_detail::require_product_rescalable(*this, a, b);
  tensor(a, b);
  relinearize_rescale_inplace(a);
}

template <backend::PolyBackend B>
std::array<ring::RnsPoly, 2> BasicEvaluator<B>::relinearized(const ring::RnsPoly& c2, int level,
                                                             std::array<const ring::RnsPoly*, 2> addends,
                                                             const ring::Rescaler* rescaler) const {
  const SwitchingKey& key = relin_key_->key();
  if constexpr (backend::FusedKeySwitch<B>) {
    return backend_.key_switch(*context_, c2, level, key, addends, rescaler);
  } else {
    const rlwe::DecomposedPoly digits = backend_.mod_up(*context_, c2, level);
    if (rescaler != nullptr) return backend_.key_switch_apply(*context_, digits, key, nullptr, addends, *rescaler);
    return backend_.key_switch_apply(*context_, digits, key, nullptr, addends);
  }
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::relinearize_inplace(Ciphertext& a) const {
  check_operand(a, "relinearize");
  if (a.size() == 2) return;
  require_relinearization_key("relinearize");
  // (c0, c1) + the key-switched c2, the sums added in the backend's ModDown (one pass fewer on the GPU).
  auto switched = relinearized(a.part(2), a.level(), {&a.part(0), &a.part(1)}, nullptr);
  a.parts().pop_back();
  a.part(0) = std::move(switched[0]);
  a.part(1) = std::move(switched[1]);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::relinearize_rescale_inplace(Ciphertext& a) const {
  check_operand(a, "relinearize_rescale");
  check_rescalable(a, "relinearize_rescale");
  if (a.size() == 2) return rescale_inplace(a);
  require_relinearization_key("relinearize_rescale");
  const int level = a.level();
  auto switched = relinearized(a.part(2), level, {&a.part(0), &a.part(1)}, &context_->rescaler(level));
  a.parts().pop_back();
  a.part(0) = std::move(switched[0]);
  a.part(1) = std::move(switched[1]);
  finish_rescale(a, level);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::multiply_inplace(Ciphertext& a, const Plaintext& b) const {
  check_binary(a, b, "multiply by a plaintext");
  const int level = std::min(a.level(), b.level());
  const double scale = a.scale() * b.scale();
  check_scale_fits(scale, level, "multiply by a plaintext");
  ring::RnsPoly copy;
  const ring::RnsPoly& poly = align(a, b, copy, "multiply by a plaintext");
  for (auto& part : a.parts()) backend_.multiply(part, poly);
  a.set_scale(scale);
  a.set_c1_seed(std::nullopt);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::multiply_inplace(Ciphertext& a, std::complex<double> constant) const {
  check_operand(a, "multiply by a constant");
  require(std::isfinite(constant.real()) && std::isfinite(constant.imag()),
          "multiply: the constant ({}, {}) is not finite", constant.real(), constant.imag());
  check_level_left(a, "multiply by a constant");
  // Encoded at P_l, the primes the next rescale divides by, so that the rescale restores a's scale.
  const double encoding_scale = level_products_[static_cast<std::size_t>(a.level())];
  const double scale = a.scale() * encoding_scale;
  check_scale_fits(scale, a.level(), "multiply by a constant");
  if (constant.imag() == 0) {
    const auto residues =
        evaluator_detail::rounded_residues(constant.real() * encoding_scale, *context_->q_basis(a.level()),
                                           "multiply by a constant");
    for (auto& part : a.parts()) backend_.multiply_scalar(part, residues);
  } else {
    const ring::RnsPoly poly = constant_poly(constant, encoding_scale, a.level(), "multiply by a constant");
    for (auto& part : a.parts()) backend_.multiply(part, poly);
  }
  a.set_scale(scale);
  a.set_c1_seed(std::nullopt);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::multiply_inplace(Ciphertext& a, double constant) const {
  multiply_inplace(a, std::complex<double>(constant, 0.0));
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::multiply_integer_inplace(Ciphertext& a, std::int64_t c) const {
  check_operand(a, "multiply_integer");
  for (auto& part : a.parts()) backend_.multiply_integer(part, c);
  a.set_c1_seed(std::nullopt);
}

}  // namespace cerium::ckks
