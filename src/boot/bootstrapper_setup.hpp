#pragma once
// Member definitions of BasicBootstrapper: construction (levels, scale chain, the DFTs as linear transforms, the
// EvalMod series), rotation steps and keys. Included by the instantiations (bootstrapper.cpp, cuda/).

#include <algorithm>
#include <bit>
#include <cmath>
#include <future>
#include <numbers>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/backend_keys.hpp"
#include "cerium/core/check.hpp"
#include "dft_matrices.hpp"

namespace cerium::boot {

// The function EvalMod interpolates: cos(2 pi (K x - 1/4) / 2^r). After r double-angle steps
// (c -> 2 c^2 - 1) it is sin(2 pi K x), and sin(2 pi K x) / (2 pi) = K x - round(K x) up to a cubic error.
inline circuits::Polynomial scaled_cosine(int k_range, int double_angle_steps, int degree) {
  const long double k = k_range;
  const long double divisor = std::ldexp(1.0L, double_angle_steps);
  return circuits::Polynomial::chebyshev_interpolant(
      [k, divisor](long double x) {
        return std::cos(2 * std::numbers::pi_v<long double> * (k * x - 0.25L) / divisor);
      },
      degree);
}

template <backend::PolyBackend B>
BasicBootstrapper<B>::BasicBootstrapper(ContextPtr context, BootstrapConfig config, B backend)
    : context_(std::move(context)),
      config_(config),
      evaluator_(context_, std::move(backend)),
      encoder_(context_) {
  const ckks::Parameters& params = context_->parameters();
  const std::size_t max_slots = params.max_slots();
  slots_ = config_.slots == 0 ? max_slots : config_.slots;
  require<ParameterError>(std::has_single_bit(slots_) && slots_ <= max_slots && slots_ >= 2,
                          "bootstrapping: slots = {} must be a power of two between 2 and N/2 = {} (0 means N/2)",
                          config_.slots, max_slots);
  joined_ = config_.join_halves && 2 * slots_ <= max_slots;
  require<ParameterError>(config_.k_range >= 1, "bootstrapping: k_range = {} must be at least 1", config_.k_range);
  const double log_q0 = context_->q_basis(0)->log2_product();
  require<ParameterError>(log_q0 < 63,
                          "bootstrapping: the base modulus q0 = 2^{:.1f} must stay below 2^63 (ModRaise lifts its "
                          "residues through 64-bit integers); use fewer or smaller base primes",
                          log_q0);
  if (config_.message_ratio_bits == 0) {
    config_.message_ratio_bits = automatic_message_ratio_bits(slots_);
  }
  // At least the evaluator's headroom above the scale, so that the scale-down's product keeps it.
  const int min_ratio = evaluator_.options().scale_headroom_bits + 1;
  require<ParameterError>(config_.message_ratio_bits >= min_ratio && config_.message_ratio_bits < log_q0 - 20,
                          "bootstrapping: message_ratio_bits = {} must be within {}..{:.0f}",
                          config_.message_ratio_bits, min_ratio, log_q0 - 21);
  levels_ = bootstrap_levels(params, config_);
  require<ParameterError>(std::isfinite(config_.message_bound) && config_.message_bound >= 1 &&
                              config_.message_bound <= 1e6,
                          "bootstrapping: message_bound = {} must be within 1..1e6", config_.message_bound);
  raise_scale_ = std::exp2(log_q0 - config_.message_ratio_bits) / config_.message_bound;

  // The scale chain of EvalMod, anchored at the output scale and built upwards.
  const double output_scale = config_.output_scale == 0 ? params.default_scale_at(levels_.output) : config_.output_scale;
  require<ParameterError>(std::isfinite(output_scale) && output_scale > 1,
                          "bootstrapping: output_scale = {} must be a finite scale above 1", config_.output_scale);
  // The output level must carry it (the chain above it, and the transforms' plaintext scales, grow from it).
  const double log_q_output = context_->q_basis(levels_.output)->log2_product();
  require<ParameterError>(std::log2(output_scale) + evaluator_.options().scale_headroom_bits < log_q_output,
                          "bootstrapping: output_scale = {} (2^{:.1f}) does not fit at the output level {}, whose "
                          "modulus is 2^{:.1f} ({} bits of headroom are kept above the scale)",
                          config_.output_scale, std::log2(output_scale), levels_.output, log_q_output,
                          evaluator_.options().scale_headroom_bits);
  output_scale_ = output_scale;
  // At a narrow output level (CkksConfig::narrow_levels) the output scale is about 2^30: EvalMod runs at the wide
  // levels' default scale instead (its precision needs it) and the last SlotToCoeff group lands on the output's.
  const double eval_mod_scale =
      levels_.output <= params.narrow_levels() && params.narrow_levels() > 0 ? params.default_scale() : output_scale;
  chain_ = circuits::ScaleChain::ascending(evaluator_, levels_.after_eval_mod, eval_mod_scale,
                                           levels_.after_coeff_to_slot);
  const circuits::Polynomial series = scaled_cosine(config_.k_range, config_.double_angle_steps, config_.eval_mod_degree);
  eval_mod_series_.clear();
  for (int shrink = 0; shrink <= max_shrink_bits; ++shrink) {
    circuits::Polynomial scaled = series;
    for (double& c : scaled.coefficients) c *= double_angle_factor(shrink, config_.double_angle_steps);
    eval_mod_series_.emplace_back(std::move(scaled));
  }
  plan_transforms();

  // SubSum's rotations are by multiples of the slot count, made on a ciphertext viewed with N/2 slots.
  std::set<std::int64_t> steps;
  for (std::size_t step = slots_; step < max_slots; step *= 2) steps.insert(static_cast<std::int64_t>(step));
  for (const auto* group : {&coeff_to_slot_, &slot_to_coeff_})
    for (const auto& t : *group)
      for (const auto step : t->rotation_steps()) steps.insert(step);
  rotation_steps_.assign(steps.begin(), steps.end());
  // The monomials that split and join the real and imaginary halves, encoded once (an NTT of every limb each).
  minus_i_ = monomial_plaintext(true, levels_.after_coeff_to_slot, joined_ ? 2 * slots_ : slots_);
  plus_i_ = monomial_plaintext(false, levels_.after_eval_mod, slots_);
}

template <backend::PolyBackend B>
void BasicBootstrapper<B>::plan_transforms() {
  const double q0 = std::exp2(context_->q_basis(0)->log2_product());
  const double gap = static_cast<double>(context_->parameters().max_slots() / slots_);
  const auto& tables = context_->fft(slots_);
  // CoeffToSlot: decoded z / raise_scale (times gap after SubSum) -> BR(u) / (2 K q0).
  const double cts_scalar = raise_scale_ / (2.0 * config_.k_range * q0 * gap);
  // SlotToCoeff: 2 pi BR(u_m) / q0 -> z_m / raise_scale.
  const double stc_scalar = q0 / (2.0 * std::numbers::pi * raise_scale_);

  // The groups of one transform: each scale-preserving (encoded at the primes the rescale divides by), except
  // that the last lands on `landing` from the group's input scale `input` (CoeffToSlot: from ModRaise's scale onto
  // EvalMod's chain; SlotToCoeff: from the chain onto a narrow output scale) where the two differ.
  auto build = [&](std::vector<circuits::DiagonalMatrix> matrices, int first_level, double input, double landing) {
    std::vector<std::shared_ptr<const Transform>> out;
    for (std::size_t g = 0; g < matrices.size(); ++g) {
      const int level = first_level - static_cast<int>(g);
      const double primes = evaluator_.level_prime_product(level);
      const bool last = g + 1 == matrices.size();
      const double plaintext_scale = last && landing != input ? landing * primes / input : primes;
      out.push_back(std::make_shared<const Transform>(
          evaluator_, std::move(matrices[g]),
          circuits::LinearTransformConfig{.level = level,
                                          .plaintext_scale = plaintext_scale,
                                          .slots = matrices[g].slots,
                                          .cache_plaintexts = config_.cache_plaintexts,
                                          .hoisting = config_.transform_hoisting}));
    }
    return out;
  };
  auto cts = dft::coeff_to_slot_matrices(tables, config_.coeff_to_slot_levels, cts_scalar);
  auto stc = dft::slot_to_coeff_matrices(tables, config_.slot_to_coeff_levels, stc_scalar);
  if (joined_) {  // BootstrapConfig::join_halves: the last CoeffToSlot level and the first SlotToCoeff level widened
    cts.back() = dft::lower_half_output(cts.back());
    stc.front() = dft::joined_input(stc.front());
  }
  coeff_to_slot_ = build(std::move(cts), levels_.top, raise_scale_, chain_.at(levels_.after_coeff_to_slot));
  slot_to_coeff_ = build(std::move(stc), levels_.after_eval_mod, chain_.at(levels_.after_eval_mod), output_scale_);
}

template <backend::PolyBackend B>
Plaintext BasicBootstrapper<B>::constant(std::complex<double> value, const ckks::EncodeOptions& options) const {
  return evaluator_.upload(encoder_.encode_constant(value, options));
}

template <backend::PolyBackend B>
const Plaintext& BasicBootstrapper<B>::monomial_i(bool negative, int level, std::size_t slots) const {
  const Plaintext& made = negative ? minus_i_ : plus_i_;
  if (!made.empty() && made.level() == level && made.slots() == slots) return made;
  const std::lock_guard lock(monomials_->mutex);
  auto [it, fresh] = monomials_->made.try_emplace({negative, level, slots});
  if (fresh) it->second = monomial_plaintext(negative, level, slots);
  return it->second;  // std::map: later insertions leave it where it is
}

template <backend::PolyBackend B>
Plaintext BasicBootstrapper<B>::monomial_plaintext(bool negative, int level, std::size_t slots) const {
  return constant(std::complex<double>(0.0, negative ? -1.0 : 1.0),
                  ckks::EncodeOptions{.level = level, .scale = 1.0, .slots = slots});
}

template <backend::PolyBackend B>
std::size_t BasicBootstrapper<B>::plaintext_bytes() const {
  std::size_t bytes = 0;
  for (const auto* group : {&coeff_to_slot_, &slot_to_coeff_})
    for (const auto& t : *group) bytes += t->plaintext_bytes();
  return bytes;
}

template <backend::PolyBackend B>
std::size_t BasicBootstrapper<B>::cached_plaintext_bytes() const {
  std::size_t bytes = 0;
  for (const auto* group : {&coeff_to_slot_, &slot_to_coeff_})
    for (const auto& t : *group) bytes += t->cached_plaintext_bytes(*context_);
  return bytes;
}

template <backend::PolyBackend B>
BootstrapKeys BasicBootstrapper<B>::generate_keys(const ckks::KeyGenerator& keygen, ProgressCallback progress,
                                                  ckks::KeyStorage storage) const {
  ckks::require_same_context(context_, keygen.context(), "bootstrapping key generation");
  BootstrapKeyRequest request{.rotation_steps = rotation_steps_,
                              .sparse_encapsulation = config_.sparse_encapsulation,
                              .ephemeral_hamming_weight = config_.ephemeral_hamming_weight,
                              .storage = storage,
                              .seed = std::nullopt};
  if constexpr (backend::UniformExpansion<B>) {
    // A device backend makes the relinearization and Galois keys itself from the generator's seeds (the host's
    // words in milliseconds a key; ckks/backend_keys.hpp), while a host thread makes the two encapsulation keys
    // (their level-0 restriction is host work).
    request.relinearization_and_galois = false;
    auto encapsulation = std::async(std::launch::async, [&] { return generate_bootstrap_keys(keygen, request); });
    const B& backend = evaluator_.backend();
    BootstrapKeys keys;
    try {
      keys.relinearization = std::make_shared<const ckks::RelinearizationKey>(ckks::relinearization_key_on(backend, keygen));
      keys.galois = std::make_shared<const ckks::GaloisKeys>(
          ckks::galois_keys_on(backend, keygen, rotation_steps_, /*conjugation=*/true, progress));
    } catch (...) {
      encapsulation.wait();  // it reads keygen and request
      throw;
    }
    BootstrapKeys sparse = encapsulation.get();
    keys.to_sparse = std::move(sparse.to_sparse);
    keys.from_sparse = std::move(sparse.from_sparse);
    if (config_.sparse_encapsulation && progress) progress({.task = "encapsulation keys", .done = 2, .total = 2});
    return keys;
  } else {
    return generate_bootstrap_keys(keygen, request, std::move(progress));
  }
}

template <backend::PolyBackend B>
void BasicBootstrapper<B>::set_keys(std::shared_ptr<const BootstrapKeys> keys) {
  require<MissingKeyError>(keys != nullptr && keys->relinearization && keys->galois,
                           "bootstrapping: set_keys needs the keys of generate_keys (relinearization and Galois)");
  require<MissingKeyError>(!config_.sparse_encapsulation || (keys->to_sparse && keys->from_sparse),
                           "bootstrapping: sparse_encapsulation is on but the keys lack the encapsulation keys; make "
                           "them with generate_keys of a bootstrapper with the same config");
  evaluator_.set_relinearization_key(keys->relinearization);
  evaluator_.set_galois_keys(keys->galois);
  // Aliasing pointers: the keys stay owned by `keys`; a device backend makes its own copies.
  const B& backend = evaluator_.backend();
  to_sparse_ = keys->to_sparse
                   ? backend.resident(std::shared_ptr<const ckks::SwitchingKey>(keys, &*keys->to_sparse))
                   : nullptr;
  from_sparse_ = keys->from_sparse
                     ? backend.resident(std::shared_ptr<const ckks::SwitchingKey>(keys, &*keys->from_sparse))
                     : nullptr;
  keys_ = std::move(keys);
}

}  // namespace cerium::boot
