#pragma once
// Member definitions of BasicEvaluator: construction, keys, and the checks every operation starts with (typed
// errors whose messages name the values and the fix). Included by evaluator.cpp, which instantiates them.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/core/check.hpp"

namespace cerium::ckks {

template <backend::PolyBackend B>
BasicEvaluator<B>::BasicEvaluator(ContextPtr context, B backend, EvaluatorOptions options)
    : context_(std::move(context)), backend_(std::move(backend)), options_(options) {
  require(context_ != nullptr, "evaluator: no context given");
  require(options_.scale_headroom_bits >= 0, "evaluator: scale_headroom_bits = {} must not be negative",
          options_.scale_headroom_bits);
  const auto& params = context_->parameters();
  const auto primes = params.q_primes();
  level_products_.assign(static_cast<std::size_t>(params.max_level()) + 1, 1.0);
  for (int level = 1; level <= params.max_level(); ++level) {
    double product = 1.0;
    for (std::size_t i = params.limbs_at(level - 1); i < params.limbs_at(level); ++i) product *= primes[i];
    level_products_[static_cast<std::size_t>(level)] = product;
  }
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::set_relinearization_key(std::shared_ptr<const RelinearizationKey> key) {
  if (key) require_same_context(context_, key->context(), "set_relinearization_key");
  relin_key_ = resident(backend_, std::move(key));
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::set_galois_keys(std::shared_ptr<const GaloisKeys> keys) {
  if (keys) require_same_context(context_, keys->context(), "set_galois_keys");
  galois_keys_ = resident(backend_, std::move(keys));
}

template <backend::PolyBackend B>
double BasicEvaluator<B>::level_prime_product(int level) const {
  require<LevelError>(level >= 1 && level <= context_->max_level(),
                      "level {} has no primes to rescale by: levels 1 to {} do", level, context_->max_level());
  return level_products_[static_cast<std::size_t>(level)];
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::check_operand(const Ciphertext& a, const char* operation) const {
  require_same_context(context_, a.context(), operation);
  // Ciphertext::parts() is mutable: a ciphertext whose parts were taken away is refused before any is read.
  require(a.size() == 2 || a.size() == 3, "{}: the ciphertext has {} parts; a ciphertext has 2 (or 3 before "
          "relinearization)", operation, a.size());
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::check_binary(const Ciphertext& a, const Ciphertext& b, const char* operation) const {
  check_operand(a, operation);
  check_operand(b, operation);
  require<MismatchError>(a.slots() == b.slots(),
                         "{}: the operands have {} and {} slots; encode both with the same EncodeOptions::slots",
                         operation, a.slots(), b.slots());
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::check_binary(const Ciphertext& a, const Plaintext& b, const char* operation) const {
  check_operand(a, operation);
  require_same_context(context_, b.context(), operation);
  require<MismatchError>(a.slots() == b.slots(),
                         "{}: the ciphertext has {} slots and the plaintext {}; encode the plaintext with "
                         "EncodeOptions::slots = {}",
                         operation, a.slots(), b.slots(), a.slots());
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::check_level_left(const Ciphertext& a, const char* operation) const {
  require<LevelError>(a.level() >= 1,
                      "{}: no level left: the ciphertext is at level 0 (scale {}); bootstrap or use more levels "
                      "(CkksConfig::levels = {} now)",
                      operation, format_scale(a.scale()), context_->max_level());
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::check_rescalable(const Ciphertext& a, const char* operation) const {
  check_level_left(a, operation);
  const double after = a.scale() / level_products_[static_cast<std::size_t>(a.level())];
  require<LevelError>(after >= 1,
                      "{}: the scale {} divided by the level's primes (2^{:.1f}) would be {}, below 1: the message "
                      "would be lost; rescale only after a product (its scale is the operands' scales multiplied)",
                      operation, format_scale(a.scale()), std::log2(level_products_[static_cast<std::size_t>(a.level())]),
                      after);
}

template <backend::PolyBackend B>
void BasicEvaluator<B>::check_scale_fits(double scale, int level, const char* operation) const {
  require<LevelError>(std::isfinite(scale) && scale > 0, "{}: the result's scale {} is not a positive number",
                      operation, scale);
  const double log_q = context_->q_basis(level)->log2_product();
  const double log_scale = std::log2(scale);
  require<LevelError>(log_scale + options_.scale_headroom_bits < log_q,
                      "{}: the result's scale {} does not fit at level {}, whose modulus Q is 2^{:.1f}: "
                      "{} bits of headroom are needed above the scale and {:.1f} are left; rescale the operands "
                      "first (each rescale divides the scale by about 2^{:.0f}) or encode at a smaller scale",
                      operation, format_scale(scale), level, log_q, options_.scale_headroom_bits, log_q - log_scale,
                      std::log2(level_products_.size() > 1 ? level_products_[1] : 1.0));
}

// --- Placement ---

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::upload(const Ciphertext& a) const {
  require(!a.empty(), "upload: the ciphertext is empty");
  require_same_context(context_, a.context(), "upload");
  std::vector<ring::RnsPoly> parts;
  for (const auto& part : a.parts()) {
    parts.push_back(part.host_accessible() ? backend_.place(part.clone()) : backend_.clone(part));
  }
  Ciphertext out(context_, std::move(parts), a.level(), a.scale(), a.slots());
  out.set_c1_seed(a.c1_seed());
  return out;
}

template <backend::PolyBackend B>
Plaintext BasicEvaluator<B>::upload(const Plaintext& a) const {
  require(!a.empty(), "upload: the plaintext is empty");
  require_same_context(context_, a.context(), "upload");
  ring::RnsPoly poly = a.poly().host_accessible() ? backend_.place(a.poly().clone()) : backend_.clone(a.poly());
  return Plaintext(context_, std::move(poly), a.level(), a.scale(), a.slots());
}

template <backend::PolyBackend B>
Plaintext BasicEvaluator<B>::upload(Plaintext&& a) const {
  require(!a.empty(), "upload: the plaintext is empty");
  require_same_context(context_, a.context(), "upload");
  const int level = a.level();
  const double scale = a.scale();
  const std::size_t slots = a.slots();
  ring::RnsPoly poly = std::move(a).take_poly();
  poly = poly.host_accessible() ? backend_.place(std::move(poly)) : backend_.clone(poly);
  return Plaintext(context_, std::move(poly), level, scale, slots);
}

template <backend::PolyBackend B>
Plaintext BasicEvaluator<B>::upload(const PeriodicPlaintext& a) const {
  require(a.context != nullptr, "upload: the periodic plaintext is empty");
  require_same_context(context_, a.context, "upload");
  // A backend that computes elsewhere expands the compressed words there; the host expands them itself.
  if constexpr (requires { backend_.place_blocks(a.context->q_basis(a.level), std::span(a.words), a.gap); }) {
    require<LevelError>(a.level >= 0 && a.level <= context_->max_level(),
                        "upload: a periodic plaintext at level {}; levels run from 0 to {}", a.level,
                        context_->max_level());
    const std::size_t n = context_->ring_degree();
    require<MismatchError>(a.gap >= 1 && n % a.gap == 0 &&
                               a.words.size() == a.context->q_basis(a.level)->size() * a.words_per_limb(),
                           "upload: a periodic plaintext of {} words in blocks of {} for {} limbs at level {}",
                           a.words.size(), a.gap, a.context->q_basis(a.level)->size(), a.level);
    ring::RnsPoly poly = backend_.place_blocks(a.context->q_basis(a.level), std::span(a.words), a.gap);
    return Plaintext(context_, std::move(poly), a.level, a.scale, a.slots);
  } else {
    return upload(a.expand());
  }
}

template <backend::PolyBackend B>
UnscaledPlaintext BasicEvaluator<B>::upload(const UnscaledPlaintext& a) const {
  require(!a.empty(), "upload: the unscaled plaintext is empty");
  require_same_context(context_, a.context(), "upload");
  if constexpr (backend::CoefficientEncoding<B>) {
    if (a.device() != backend_.device()) return a.copy_to(backend_.device());
  }
  return a.copy_to(a.device());
}

template <backend::PolyBackend B>
UnscaledPlaintext BasicEvaluator<B>::unscaled(std::span<const std::complex<double>> period, std::size_t slots) const {
  const Encoder encoder(context_);
  if constexpr (backend::SlotTransform<B> && backend::CoefficientEncoding<B>) {
    slots = encoder.unscaled_slots(period, slots, "unscaled");  // every check, before the device works
    const std::size_t p = period.size();
    DeviceWords host(Device::cpu(), 4 * p, BufferInit::uninitialized);
    std::memcpy(host.data(), period.data(), p * sizeof(std::complex<double>));
    DeviceWords values = host.copy_to(backend_.device(), 4 * p);
    DeviceWords out(backend_.device(), 4 * p, BufferInit::uninitialized);
    const double largest = backend_.special_ifft_split(context_->fft(p), values, out);
    return UnscaledPlaintext(context_, slots, p, largest, std::move(out));
  } else {
    return upload(encoder.unscaled(period, slots));
  }
}

template <backend::PolyBackend B>
Plaintext BasicEvaluator<B>::encode(const UnscaledPlaintext& a, const EncodeOptions& options) const {
  const Encoder encoder(context_);
  const EncodeOptions resolved = encoder.resolve(a, options);  // every check, before the device works
  if constexpr (backend::CoefficientEncoding<B>) {
    if (a.device() == backend_.device()) {
      ring::RnsPoly poly = backend_.encode_scaled(context_->q_basis(resolved.level), a.words(), a.count(), a.gap(),
                                                  resolved.scale);
      return Plaintext(context_, std::move(poly), resolved.level, resolved.scale, resolved.slots);
    }
  }
  if (a.device().host_accessible()) return upload(encoder.encode(a, resolved));
  return upload(encoder.encode(a.copy_to(Device::cpu()), resolved));
}

template <backend::PolyBackend B>
ring::RnsPoly BasicEvaluator<B>::encode_extended(const UnscaledPlaintext& a, const EncodeOptions& options) const {
  const Encoder encoder(context_);
  const EncodeOptions resolved = encoder.resolve(a, options);  // every check, before the device works
  if constexpr (backend::CoefficientEncoding<B>) {
    if (a.device() == backend_.device()) {
      return backend_.encode_scaled(context_->qp_basis(resolved.level), a.words(), a.count(), a.gap(),
                                    resolved.scale);
    }
  }
  if (a.device().host_accessible()) return backend_.place(encoder.encode_extended(a, resolved));
  return backend_.place(encoder.encode_extended(a.copy_to(Device::cpu()), resolved));
}

template <backend::PolyBackend B>
std::vector<Plaintext> BasicEvaluator<B>::encode(std::span<const UnscaledPlaintext* const> many,
                                                 const EncodeOptions& options) const {
  std::vector<Plaintext> out;
  out.reserve(many.size());
  if constexpr (backend::CoefficientEncoding<B>) {
    const Encoder encoder(context_);
    std::vector<const DeviceWords*> words;
    std::vector<std::size_t> gaps;
    EncodeOptions resolved;
    bool together = true;  // every one on this device, with the same resolved options
    for (std::size_t t = 0; t < many.size() && together; ++t) {
      require(many[t] != nullptr, "encode: unscaled plaintext {} of {} is null", t, many.size());
      const EncodeOptions r = encoder.resolve(*many[t], options);  // every check, before the device works
      together = many[t]->device() == backend_.device() &&
                 (t == 0 || (r.level == resolved.level && r.scale == resolved.scale && r.slots == resolved.slots));
      resolved = r;
      words.push_back(&many[t]->words());
      gaps.push_back(many[t]->gap());
    }
    if (together && !many.empty()) {
      std::vector<ring::RnsPoly> polys =
          backend_.encode_scaled_batch(context_->q_basis(resolved.level), words, gaps, resolved.scale);
      for (auto& poly : polys) out.emplace_back(context_, std::move(poly), resolved.level, resolved.scale, resolved.slots);
      return out;
    }
  }
  for (std::size_t t = 0; t < many.size(); ++t) {
    require(many[t] != nullptr, "encode: unscaled plaintext {} of {} is null", t, many.size());
    out.push_back(encode(*many[t], options));
  }
  return out;
}

template <backend::PolyBackend B>
Ciphertext BasicEvaluator<B>::download(const Ciphertext& a) const {
  require(!a.empty(), "download: the ciphertext is empty");
  std::vector<ring::RnsPoly> parts;
  for (const auto& part : a.parts()) parts.push_back(backend_.download(part));
  Ciphertext out(a.context(), std::move(parts), a.level(), a.scale(), a.slots());
  out.set_c1_seed(a.c1_seed());
  return out;
}

template <backend::PolyBackend B>
Plaintext BasicEvaluator<B>::download(const Plaintext& a) const {
  require(!a.empty(), "download: the plaintext is empty");
  return Plaintext(a.context(), backend_.download(a.poly()), a.level(), a.scale(), a.slots());
}

}  // namespace cerium::ckks
