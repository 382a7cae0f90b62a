#pragma once
// Member definitions of BasicBootstrapper: construction (levels, scale chain, DFT plans and their diagonals),
// rotation steps and keys. Included by bootstrapper.cpp, which instantiates them.

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "cerium/ckks/bootstrap/bootstrapper.hpp"
#include "cerium/core/check.hpp"
#include "chebyshev.hpp"
#include "dft_matrices.hpp"
#include "transform.hpp"

namespace cerium::ckks {

template <backend::PolyBackend B>
BasicBootstrapper<B>::BasicBootstrapper(ContextPtr context, BootstrapConfig config, B backend)
    : context_(std::move(context)),
      config_(config),
      evaluator_(context_, std::move(backend)),
      encoder_(context_) {
  const Parameters& params = context_->parameters();
  const std::size_t max_slots = params.max_slots();
  slots_ = config_.slots == 0 ? max_slots : config_.slots;
  require<ParameterError>(std::has_single_bit(slots_) && slots_ <= max_slots && slots_ >= 2,
                          "bootstrapping: slots = {} must be a power of two between 2 and N/2 = {} (0 means N/2)",
                          config_.slots, max_slots);
  require<ParameterError>(config_.k_range >= 1, "bootstrapping: k_range = {} must be at least 1", config_.k_range);
  const double log_q0 = context_->q_basis(0)->log2_product();
  require<ParameterError>(log_q0 < 63,
                          "bootstrapping: the base modulus q0 = 2^{:.1f} must stay below 2^63 (ModRaise lifts its "
                          "residues through 64-bit integers); use fewer or smaller base primes",
                          log_q0);
  if (config_.message_ratio_bits == 0) {
    const double automatic = std::round(12.5 - std::log2(static_cast<double>(slots_)) / 2);
    config_.message_ratio_bits = static_cast<int>(std::clamp(automatic, 5.0, 12.0));
  }
  require<ParameterError>(config_.message_ratio_bits >= 1 && config_.message_ratio_bits < log_q0 - 20,
                          "bootstrapping: message_ratio_bits = {} must be within 1..{:.0f}", config_.message_ratio_bits,
                          log_q0 - 21);
  levels_ = bootstrap_levels(params, config_);
  raise_scale_ = std::exp2(log_q0 - config_.message_ratio_bits);
  const double q0 = std::exp2(log_q0);

  // The scale chain of EvalMod, anchored at the output scale and built upwards (Delta_l = sqrt(Delta_(l-1) P_l)),
  // which damps any deviation instead of doubling it at each level.
  const double output_scale = config_.output_scale == 0 ? params.default_scale() : config_.output_scale;
  require<ParameterError>(std::isfinite(output_scale) && output_scale > 1,
                          "bootstrapping: output_scale = {} must be a finite scale above 1", config_.output_scale);
  chain_.assign(static_cast<std::size_t>(levels_.top) + 1, 0.0);
  chain_[static_cast<std::size_t>(levels_.after_eval_mod)] = output_scale;
  for (int l = levels_.after_eval_mod + 1; l <= levels_.after_coeff_to_slot; ++l) {
    chain_[static_cast<std::size_t>(l)] =
        std::sqrt(chain_[static_cast<std::size_t>(l - 1)] * evaluator_.level_prime_product(l));
  }

  eval_mod_coefficients_ = bootstrap_detail::chebyshev_coefficients(
      bootstrap_detail::scaled_cosine(config_.k_range, config_.double_angle_steps), config_.eval_mod_degree);
  plan_transforms();

  // SubSum's rotations are by multiples of the slot count, made on a ciphertext viewed with N/2 slots.
  std::set<std::int64_t> steps;
  for (std::size_t step = slots_; step < max_slots; step *= 2) steps.insert(static_cast<std::int64_t>(step));
  for (const auto* group : {&coeff_to_slot_, &slot_to_coeff_}) {
    for (const auto& t : *group) {
      for (const auto b : t->plan.babies)
        if (b != 0) steps.insert(b);
      for (const auto& [g, babies] : t->plan.giants)
        if (g != 0) steps.insert(g);
    }
  }
  rotation_steps_.assign(steps.begin(), steps.end());
  // The monomials that split and join the real and imaginary halves, encoded once (an NTT of every limb each).
  Plaintext scratch;
  (void)monomial_i(true, levels_.after_coeff_to_slot, scratch);
  minus_i_ = std::move(scratch);
  (void)monomial_i(false, levels_.after_eval_mod, scratch);
  plus_i_ = std::move(scratch);
  (void)q0;
}

template <backend::PolyBackend B>
void BasicBootstrapper<B>::plan_transforms() {
  const double log_q0 = context_->q_basis(0)->log2_product();
  const double q0 = std::exp2(log_q0);
  const double gap = static_cast<double>(context_->parameters().max_slots() / slots_);
  const auto& tables = context_->fft(slots_);
  // CoeffToSlot: decoded z / raise_scale (times gap after SubSum) -> BR(u) / (2 K q0).
  const double cts_scalar = raise_scale_ / (2.0 * config_.k_range * q0 * gap);
  // SlotToCoeff: 2 pi BR(u_m) / q0 -> z_m / raise_scale.
  const double stc_scalar = q0 / (2.0 * std::numbers::pi * raise_scale_);

  auto build = [&](std::vector<bootstrap_detail::DiagonalMatrix> matrices, int first_level, bool lands_on_chain) {
    std::vector<std::shared_ptr<const Transform>> out;
    for (std::size_t g = 0; g < matrices.size(); ++g) {
      auto t = std::make_shared<Transform>();
      t->level = first_level - static_cast<int>(g);
      const double primes = evaluator_.level_prime_product(t->level);
      const bool last = g + 1 == matrices.size();
      // Scale-preserving (encoded at the primes the rescale divides by), except that the last CoeffToSlot group
      // lands on EvalMod's chain.
      t->plaintext_scale =
          lands_on_chain && last ? chain_[static_cast<std::size_t>(t->level - 1)] * primes / raise_scale_ : primes;
      t->matrix = std::move(matrices[g]);
      t->plan = bootstrap_detail::plan_bsgs(t->matrix);
      if (config_.cache_plaintexts) {
        for (const auto& [giant, babies] : t->plan.giants) {
          for (const auto baby : babies) {
            Plaintext encoded;
            diagonal_plaintext(*t, giant, baby, encoded);
            t->cached.emplace(std::pair{giant, baby}, evaluator_.upload(std::move(encoded)));
          }
        }
      }
      out.push_back(std::move(t));
    }
    return out;
  };
  coeff_to_slot_ = build(bootstrap_detail::coeff_to_slot_matrices(tables, config_.coeff_to_slot_levels, cts_scalar),
                         levels_.top, true);
  slot_to_coeff_ = build(bootstrap_detail::slot_to_coeff_matrices(tables, config_.slot_to_coeff_levels, stc_scalar),
                         levels_.after_eval_mod, false);
}

template <backend::PolyBackend B>
const Plaintext& BasicBootstrapper<B>::diagonal_plaintext(const Transform& t, std::int64_t giant, std::int64_t baby,
                                                          Plaintext& scratch) const {
  if (auto it = t.cached.find({giant, baby}); it != t.cached.end()) return it->second;
  const auto values = bootstrap_detail::bsgs_diagonal(t.matrix, giant, baby);
  scratch = evaluator_.upload(encoder_.encode(std::span<const std::complex<double>>(values),
                                              EncodeOptions{.level = t.level, .scale = t.plaintext_scale, .slots = slots_}));
  return scratch;
}

template <backend::PolyBackend B>
Plaintext BasicBootstrapper<B>::constant(std::complex<double> value, const EncodeOptions& options) const {
  return evaluator_.upload(encoder_.encode_constant(value, options));
}

template <backend::PolyBackend B>
void BasicBootstrapper<B>::multiply_by_constant(Ciphertext& ct, double value, double scale) const {
  std::vector<std::uint32_t> residues(ct.part(0).limb_count());
  round_to_residues(value * scale, *context_->q_basis(ct.level()), residues);
  const B& backend = evaluator_.backend();
  for (auto& part : ct.parts()) backend.multiply_scalar(part, residues);
  ct.set_scale(ct.scale() * scale);
  ct.set_c1_seed(std::nullopt);
}

template <backend::PolyBackend B>
const Plaintext& BasicBootstrapper<B>::monomial_i(bool negative, int level, Plaintext& scratch) const {
  const Plaintext& made = negative ? minus_i_ : plus_i_;
  if (!made.empty() && made.level() == level) return made;
  scratch = constant(std::complex<double>(0.0, negative ? -1.0 : 1.0),
                     EncodeOptions{.level = level, .scale = 1.0, .slots = slots_});
  return scratch;
}

template <backend::PolyBackend B>
std::size_t BasicBootstrapper<B>::plaintext_bytes() const {
  std::size_t bytes = 0;
  for (const auto* group : {&coeff_to_slot_, &slot_to_coeff_}) {
    for (const auto& t : *group) {
      for (const auto& [key, pt] : t->cached) bytes += pt.poly().limb_count() * pt.poly().n() * sizeof(std::uint32_t);
    }
  }
  return bytes;
}

template <backend::PolyBackend B>
BootstrapKeys BasicBootstrapper<B>::generate_keys(const KeyGenerator& keygen, ProgressCallback progress,
                                                  KeyStorage storage) const {
  require_same_context(context_, keygen.context(), "bootstrapping key generation");
  BootstrapKeyRequest request{.rotation_steps = rotation_steps_,
                              .sparse_encapsulation = config_.sparse_encapsulation,
                              .ephemeral_hamming_weight = config_.ephemeral_hamming_weight,
                              .storage = storage,
                              .seed = std::nullopt};
  return generate_bootstrap_keys(keygen, request, std::move(progress));
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
  to_sparse_ = keys->to_sparse ? backend.resident(std::shared_ptr<const SwitchingKey>(keys, &*keys->to_sparse)) : nullptr;
  from_sparse_ =
      keys->from_sparse ? backend.resident(std::shared_ptr<const SwitchingKey>(keys, &*keys->from_sparse)) : nullptr;
  keys_ = std::move(keys);
}

}  // namespace cerium::ckks
