#pragma once
// Member definitions of BasicEvaluator: the out-of-place forms. Where the operands already agree (one level, one
// scale), the result is written by one backend pass into new polynomials (PolyBackend's sum, product, ...): a copy
// followed by the in-place operation would read and write the first operand once more, which on the GPU is a
// third of an addition's time. Otherwise (operands to align first, a complex constant, ...) they are a copy and
// the in-place operation. Either way the words are those of the in-place forms. Included by evaluator.cpp and
// cuda/cuda_evaluator.cpp, which instantiate them.

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "cerium/ckks/evaluator.hpp"
#include "evaluator_arith.hpp"

namespace cerium::ckks {

namespace evaluator_detail {
// Two polynomials as a ciphertext's parts (a braced list would copy them, and polynomials only move).
inline std::vector<ring::RnsPoly> two_parts(ring::RnsPoly p0, ring::RnsPoly p1) {
  std::vector<ring::RnsPoly> parts;
  parts.reserve(2);
  parts.push_back(std::move(p0));
  parts.push_back(std::move(p1));
  return parts;
}
// The two parts of a sum over the terms a (their parts k = 0, 1), each a new polynomial over `basis` in NTT form
// computed by sum_part(out, the terms' part k): over a's level for sum_t a_t p_t, one level below for a rescaled
// sum (sum_part then holds the level's rescaler).
template <class Backend, class SumPart>
std::vector<ring::RnsPoly> sum_parts(const Backend& backend, const ring::RnsBasisPtr& basis,
                                     std::span<const Ciphertext* const> a, SumPart&& sum_part) {
  std::vector<ring::RnsPoly> parts;
  for (std::size_t k = 0; k < 2; ++k) {
    std::vector<const ring::RnsPoly*> terms;
    for (const Ciphertext* c : a) terms.push_back(&c->part(k));
    ring::RnsPoly part =
        backend.allocate(basis, ring::PolyOptions{.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
    sum_part(part, std::span<const ring::RnsPoly* const>(terms));
    parts.push_back(std::move(part));
  }
  return parts;
}

// InvalidArgument unless there are as many plaintexts as ciphertexts, and at least one of each.
inline void require_terms(std::size_t ciphertexts, std::size_t plaintexts, const char* operation) {
  require(ciphertexts == plaintexts && ciphertexts > 0,
          "{}: {} ciphertexts and {} plaintexts; give one plaintext per ciphertext, at least one term", operation,
          ciphertexts, plaintexts);
}

// The terms' unscaled plaintexts made compact (backend::CompactProductSum) where the terms qualify (plaintexts on
// the backend's device, one gap it keeps compact, ciphertexts of 2 parts at one level, slot count and scale,
// encoded at that level and slot count) and accept(level, product scale) agrees; otherwise nothing: the caller
// encodes them whole (the same words). check(ciphertext) is the evaluator's operand check; encode's checks run.
template <class Backend, class Check, class Accept>
std::optional<std::pair<backend::CompactPlaintexts, double>> compact_terms(
    const Backend& backend, const std::shared_ptr<const Context>& context, std::span<const Ciphertext* const> a,
    std::span<const UnscaledPlaintext* const> p, const EncodeOptions& options, const char* operation, Check&& check,
    Accept&& accept) {
  const Encoder encoder(context);
  bool compact = true;
  EncodeOptions resolved;
  std::vector<const DeviceWords*> words;
  std::vector<std::size_t> gaps;
  for (std::size_t t = 0; t < a.size() && compact; ++t) {
    require(a[t] != nullptr && p[t] != nullptr, "{}: term {} has a null operand", operation, t);
    check(*a[t]);
    const EncodeOptions r = encoder.resolve(*p[t], options);  // encode's checks, the range included
    compact = p[t]->device() == backend.device() && backend.compact_encoding(p[t]->gap()) &&
              p[t]->gap() == p[0]->gap() && a[t]->size() == 2 && a[t]->level() == a[0]->level() &&
              a[t]->slots() == a[0]->slots() && a[t]->scale() == a[0]->scale() && r.level == a[t]->level() &&
              r.slots == a[t]->slots() && (t == 0 || r.scale == resolved.scale);
    resolved = r;
    words.push_back(&p[t]->words());
    gaps.push_back(p[t]->gap());
  }
  const double scale = a[0]->scale() * resolved.scale;
  if (!compact || !accept(a[0]->level(), scale)) return std::nullopt;
  return std::pair{backend.encode_compact_batch(context->q_basis(a[0]->level()), words, gaps, resolved.scale), scale};
}

}  // namespace evaluator_detail

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::like(const Ciphertext& a, std::vector<ring::RnsPoly> parts, double scale) const {
  return Ciphertext(a.context(), std::move(parts), a.level(), scale, a.slots());
}

// --- Addition and subtraction ---

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::add(const Ciphertext& a, const Ciphertext& b) const {
  check_binary(a, b, "add");
  if (a.level() != b.level() || a.size() != 2 || b.size() != 2 || !scales_match(a.scale(), b.scale())) {
    Ciphertext out = a.clone();
    add_inplace(out, b);
    return out;
  }
  const double scale = a.scale() == b.scale() ? a.scale() : (a.scale() + b.scale()) / 2;  // as add_or_sub
  return like(a, evaluator_detail::two_parts(backend_.sum(a.part(0), b.part(0)), backend_.sum(a.part(1), b.part(1))), scale);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::sub(const Ciphertext& a, const Ciphertext& b) const {
  check_binary(a, b, "sub");
  if (a.level() != b.level() || a.size() != 2 || b.size() != 2 || !scales_match(a.scale(), b.scale())) {
    Ciphertext out = a.clone();
    sub_inplace(out, b);
    return out;
  }
  const double scale = a.scale() == b.scale() ? a.scale() : (a.scale() + b.scale()) / 2;
  return like(a,
              evaluator_detail::two_parts(backend_.difference(a.part(0), b.part(0)), backend_.difference(a.part(1), b.part(1))),
              scale);
}

// Plaintext and constant additions change c0 alone: a copy then the in-place form is what they cost anyway.
#define CERIUM_COPY_THEN_INPLACE(name, Arg)                              \
  template <backend::PolyBackend B>                                      \
  Ciphertext BasicEvaluator<B>::name(const Ciphertext& a, Arg b) const { \
    Ciphertext out = a.clone();                                          \
    name##_inplace(out, b);                                              \
    return out;                                                          \
  }

CERIUM_COPY_THEN_INPLACE(add, const Plaintext&)
CERIUM_COPY_THEN_INPLACE(sub, const Plaintext&)
CERIUM_COPY_THEN_INPLACE(add, double)
CERIUM_COPY_THEN_INPLACE(add, std::complex<double>)
CERIUM_COPY_THEN_INPLACE(sub, double)
CERIUM_COPY_THEN_INPLACE(sub, std::complex<double>)
CERIUM_COPY_THEN_INPLACE(multiply_integer, std::int64_t)

#undef CERIUM_COPY_THEN_INPLACE

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::negate(const Ciphertext& a) const {
  check_operand(a, "negate");
  std::vector<ring::RnsPoly> parts;
  for (const auto& part : a.parts()) parts.push_back(backend_.negation(part));
  return like(a, std::move(parts), a.scale());
}

// --- Products ---

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::multiply(const Ciphertext& a, const Plaintext& b) const {
  check_binary(a, b, "multiply by a plaintext");
  if (a.level() != b.level()) {
    Ciphertext out = a.clone();
    multiply_inplace(out, b);
    return out;
  }
  const double scale = a.scale() * b.scale();
  check_scale_fits(scale, a.level(), "multiply by a plaintext");
  std::vector<ring::RnsPoly> parts;
  for (const auto& part : a.parts()) parts.push_back(backend_.product(part, b.poly()));
  return like(a, std::move(parts), scale);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::multiply_plain_rescale_sum(std::span<const Ciphertext* const> a,
                                                         std::span<const Plaintext* const> p) const {
  constexpr const char* operation = "multiply_plain_rescale_sum";
  evaluator_detail::require_terms(a.size(), p.size(), operation);
  bool uniform = true;  // the fused form's conditions; otherwise the terms one by one
  for (std::size_t t = 0; t < a.size(); ++t) {
    require(a[t] != nullptr && p[t] != nullptr, "{}: term {} has a null operand", operation, t);
    check_binary(*a[t], *p[t], operation);
    // Each product is rescaled at the lower of its operands' levels, and keeps a scale of at least 1.
    const int term_level = std::min(a[t]->level(), p[t]->level());
    require<LevelError>(term_level >= 1,
                        "{}: term {} is at level {} (its plaintext at {}): no level left to rescale its product; "
                        "bootstrap or use more levels",
                        operation, t, a[t]->level(), p[t]->level());
    const double after = a[t]->scale() * p[t]->scale() / level_products_[static_cast<std::size_t>(term_level)];
    require<LevelError>(after >= 1,
                        "{}: term {}'s product scale {} divided by level {}'s primes would be {}, below 1: encode the "
                        "plaintexts at a larger scale",
                        operation, t, format_scale(a[t]->scale() * p[t]->scale()), term_level, after);
    uniform = uniform && a[t]->size() == 2 && a[t]->level() == a[0]->level() && p[t]->level() == a[0]->level() &&
              a[t]->slots() == a[0]->slots() && a[t]->scale() * p[t]->scale() == a[0]->scale() * p[0]->scale();
  }
  if constexpr (backend::RescaledProductSum<B>) {
    const int level = a[0]->level();
    const double scale = a[0]->scale() * p[0]->scale();
    if (uniform) {  // level >= 1 and a scale of at least 1 after the rescale: checked per term above
      check_scale_fits(scale, level, operation);
      const double after = scale / level_products_[static_cast<std::size_t>(level)];
      std::vector<const ring::RnsPoly*> plains;
      for (const Plaintext* q : p) plains.push_back(&q->poly());
      const ring::Rescaler& rescaler = context_->rescaler(level);
      auto parts = evaluator_detail::sum_parts(backend_, context_->q_basis(level - 1), a,
                                               [&](ring::RnsPoly& part, const auto& terms) {
                                                 backend_.sum_of_rescaled_products(rescaler, part, terms, plains);
                                               });
      return Ciphertext(a[0]->context(), std::move(parts), level - 1, after, a[0]->slots());
    }
  }
  Ciphertext sum = multiply(*a[0], *p[0]);
  rescale_inplace(sum);
  for (std::size_t t = 1; t < a.size(); ++t) {
    Ciphertext term = multiply(*a[t], *p[t]);
    rescale_inplace(term);
    add_inplace(sum, term);
  }
  return sum;
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::multiply_plain_rescale_sum(std::span<const Ciphertext* const> a,
                                                         std::span<const UnscaledPlaintext* const> p,
                                                         const EncodeOptions& options) const {
  constexpr const char* operation = "multiply_plain_rescale_sum";
  evaluator_detail::require_terms(a.size(), p.size(), operation);
  if constexpr (backend::CompactProductSum<B>) {
    const int level = a[0]->level();
    // Below a level or a scale of 1 after the rescale: the whole form below says so.
    const auto compact = evaluator_detail::compact_terms(
        backend_, context_, a, p, options, operation, [&](const Ciphertext& c) { check_operand(c, operation); },
        [&](int at, double scale) {
          if (at < 1 || scale / level_products_[static_cast<std::size_t>(at)] < 1) return false;
          check_scale_fits(scale, at, operation);
          return true;
        });
    if (compact.has_value()) {
      const backend::CompactPlaintexts& plains = compact->first;  // named, not bound: lambdas capture it
      const double scale = compact->second;
      const ring::Rescaler& rescaler = context_->rescaler(level);
      auto parts = evaluator_detail::sum_parts(backend_, context_->q_basis(level - 1), a,
                                               [&](ring::RnsPoly& part, const auto& terms) {
                                                 backend_.sum_of_rescaled_compact_products(rescaler, part, terms, plains);
                                               });
      return Ciphertext(a[0]->context(), std::move(parts), level - 1,
                        scale / level_products_[static_cast<std::size_t>(level)], a[0]->slots());
    }
  }
  const std::vector<Plaintext> plains = encode(p, options);
  std::vector<const Plaintext*> pointers;
  for (const Plaintext& q : plains) pointers.push_back(&q);
  return multiply_plain_rescale_sum(a, pointers);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::multiply_plain_sum(std::span<const Ciphertext* const> a,
                                                 std::span<const Plaintext* const> p) const {
  constexpr const char* operation = "multiply_plain_sum";
  evaluator_detail::require_terms(a.size(), p.size(), operation);
  for (std::size_t t = 0; t < a.size(); ++t) {
    require(a[t] != nullptr && p[t] != nullptr, "{}: term {} has a null operand", operation, t);
    check_binary(*a[t], *p[t], operation);
    require<MismatchError>(a[t]->size() == 2 && a[t]->slots() == a[0]->slots(),
                           "{}: term {} has {} parts and {} slots; every term needs 2 parts and term 0's {} slots "
                           "(relinearize first)",
                           operation, t, a[t]->size(), a[t]->slots(), a[0]->slots());
    require<LevelError>(a[t]->level() == a[0]->level() && p[t]->level() == a[0]->level() &&
                            a[t]->scale() * p[t]->scale() == a[0]->scale() * p[0]->scale(),
                        "{}: term {} (level {}, plaintext at level {}, product scale {}) differs from term 0 (level "
                        "{}, product scale {}): bring the terms to one level and encode the plaintexts there",
                        operation, t, a[t]->level(), p[t]->level(), format_scale(a[t]->scale() * p[t]->scale()),
                        a[0]->level(), format_scale(a[0]->scale() * p[0]->scale()));
  }
  const double scale = a[0]->scale() * p[0]->scale();
  check_scale_fits(scale, a[0]->level(), operation);
  std::vector<const ring::RnsPoly*> plains;
  for (const Plaintext* q : p) plains.push_back(&q->poly());
  auto parts = evaluator_detail::sum_parts(backend_, context_->q_basis(a[0]->level()), a,
                                           [&](ring::RnsPoly& part, const auto& terms) {
                                             backend_.multiply_accumulate_many(part, terms, plains, false);
                                           });
  return like(*a[0], std::move(parts), scale);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::multiply_plain_sum(std::span<const Ciphertext* const> a,
                                                 std::span<const UnscaledPlaintext* const> p,
                                                 const EncodeOptions& options) const {
  constexpr const char* operation = "multiply_plain_sum";
  evaluator_detail::require_terms(a.size(), p.size(), operation);
  if constexpr (backend::CompactProductSum<B>) {
    const auto compact = evaluator_detail::compact_terms(
        backend_, context_, a, p, options, operation, [&](const Ciphertext& c) { check_operand(c, operation); },
        [&](int at, double scale) {
          check_scale_fits(scale, at, operation);
          return true;
        });
    if (compact.has_value()) {
      const backend::CompactPlaintexts& plains = compact->first;  // named, not bound: lambdas capture it
      const double scale = compact->second;
      auto parts = evaluator_detail::sum_parts(backend_, context_->q_basis(a[0]->level()), a,
                                               [&](ring::RnsPoly& part, const auto& terms) {
                                                 backend_.sum_of_compact_products(part, terms, plains);
                                               });
      return like(*a[0], std::move(parts), scale);
    }
  }
  const std::vector<Plaintext> plains = encode(p, options);
  std::vector<const Plaintext*> pointers;
  for (const Plaintext& q : plains) pointers.push_back(&q);
  return multiply_plain_sum(a, pointers);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::multiply(const Ciphertext& a, std::complex<double> constant) const {
  if (constant.imag() != 0) {
    Ciphertext out = a.clone();
    multiply_inplace(out, constant);
    return out;
  }
  return multiply(a, constant.real());
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::multiply(const Ciphertext& a, double constant) const {
  check_operand(a, "multiply by a constant");
  require(std::isfinite(constant), "multiply: the constant ({}, {}) is not finite", constant, 0.0);
  check_level_left(a, "multiply by a constant");
  // As multiply_inplace: encoded at P_l, the primes the next rescale divides by.
  const double encoding_scale = level_products_[static_cast<std::size_t>(a.level())];
  const double scale = a.scale() * encoding_scale;
  check_scale_fits(scale, a.level(), "multiply by a constant");
  const auto residues = evaluator_detail::rounded_residues(constant * encoding_scale, *context_->q_basis(a.level()),
                                                          "multiply by a constant");
  std::vector<ring::RnsPoly> parts;
  for (const auto& part : a.parts()) parts.push_back(backend_.scalar_product(part, residues));
  return like(a, std::move(parts), scale);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::tensor_product(const Ciphertext& a, const Ciphertext& b) const {
  const double scale = tensor_scale(a, b);
  if (a.level() != b.level()) {
    Ciphertext out = a.clone();
    tensor(out, b);
    return out;
  }
  auto [d0, d1, d2] = backend_.tensor_product(a.part(0), a.part(1), b.part(0), b.part(1));
  std::vector<ring::RnsPoly> parts;
  parts.push_back(std::move(d0));
  parts.push_back(std::move(d1));
  parts.push_back(std::move(d2));
  return like(a, std::move(parts), scale);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::multiply_no_relin(const Ciphertext& a, const Ciphertext& b) const {
  return tensor_product(a, b);
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::multiply(const Ciphertext& a, const Ciphertext& b) const {
  require_relinearization_key("multiply");
  Ciphertext out = tensor_product(a, b);
  relinearize_inplace(out);
  return out;
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::multiply_rescale(const Ciphertext& a, const Ciphertext& b) const {
  require_relinearization_key("multiply_rescale");
  check_binary(a, b, "multiply_rescale");
  check_level_left(a, "multiply_rescale");
  check_level_left(b, "multiply_rescale");
  evaluator_detail::require_product_rescalable(*this, a, b);
  Ciphertext out = tensor_product(a, b);
  relinearize_rescale_inplace(out);
  return out;
}

// --- Relinearization and levels: the key switch writes new polynomials anyway, so nothing is copied first ---

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::relinearize(const Ciphertext& a) const {
  check_operand(a, "relinearize");
  if (a.size() == 2) return a.clone();
  require_relinearization_key("relinearize");
  auto switched = relinearized(a.part(2), a.level(), {&a.part(0), &a.part(1)}, nullptr);
  return like(a, evaluator_detail::two_parts(std::move(switched[0]), std::move(switched[1])), a.scale());
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::relinearize_rescale(const Ciphertext& a) const {
  check_operand(a, "relinearize_rescale");
  check_rescalable(a, "relinearize_rescale");
  if (a.size() == 2) return rescale(a);
  require_relinearization_key("relinearize_rescale");
  const int level = a.level();
  auto switched = relinearized(a.part(2), level, {&a.part(0), &a.part(1)}, &context_->rescaler(level));
  const auto& kept = context_->q_basis(level - 1);
  for (auto& part : switched) backend_.drop_to(part, kept);  // the same primes: shares the context's basis object
  return Ciphertext(a.context(), evaluator_detail::two_parts(std::move(switched[0]), std::move(switched[1])), level - 1,
                    a.scale() / level_products_[static_cast<std::size_t>(level)], a.slots());
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::level_down(const Ciphertext& a, int level) const {
  check_operand(a, "level_down");
  require<LevelError>(level >= 0 && level <= a.level(),
                      "level_down: cannot go from level {} to level {}: the target must be between 0 and the "
                      "ciphertext's level {}",
                      a.level(), level, a.level());
  if (level == a.level()) return a.clone();
  const auto& basis = context_->q_basis(level);
  std::vector<ring::RnsPoly> parts;
  for (const auto& part : a.parts()) parts.push_back(backend_.prefix(part, basis));
  Ciphertext out(a.context(), std::move(parts), level, a.scale(), a.slots());
  out.set_c1_seed(a.c1_seed());  // valid over a prefix of its basis (as in level_down_inplace)
  return out;
}

}  // namespace cerium::ckks
