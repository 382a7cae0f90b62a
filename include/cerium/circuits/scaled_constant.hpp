#pragma once
// A ciphertext times a real constant encoded at a scale the caller chooses, where the evaluator's constant product
// always encodes at P_l (the primes the next rescale divides by). Circuits that keep values on a scale chain need
// it: a constant encoded so that a product, or a sum's terms after their rescale, land exactly on the chain's
// scale. The words are those of multiplying by encode_constant(constant, {.scale = encoding_scale}), whose NTT form
// is one residue per prime: a per-limb scalar product on the backend, with no plaintext encoded or moved.

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/scale.hpp"
#include "cerium/core/check.hpp"

namespace cerium::circuits {

// The evaluator's rule for a product's scale: the headroom it keeps free in Q_level above the scale.
template <backend::PolyBackend B>
bool scale_fits(const ckks::BasicEvaluator<B>& ev, double scale, int level) {
  return std::isfinite(scale) && scale > 0 &&
         std::log2(scale) + ev.options().scale_headroom_bits < ev.context()->q_basis(level)->log2_product();
}

// a *= round(constant * encoding_scale) per limb; a's scale becomes a.scale() * encoding_scale. The same checks as
// the evaluator's product: a level to rescale afterwards, and the evaluator's headroom above the new scale.
template <backend::PolyBackend B>
void multiply_constant_at_scale(const ckks::BasicEvaluator<B>& ev, ckks::Ciphertext& a, double constant,
                                double encoding_scale) {
  require(std::isfinite(constant) && std::isfinite(encoding_scale) && encoding_scale > 0,
          "multiply by a constant: constant {} at scale {} is not finite and positive-scaled", constant,
          encoding_scale);
  require<LevelError>(a.level() >= 1, "multiply by a constant: level 0 leaves no rescale for the constant's scale");
  const double scale = a.scale() * encoding_scale;
  require<LevelError>(scale_fits(ev, scale, a.level()),
                      "multiply by a constant: scale {} leaves fewer than {} bits of Q at level {}",
                      ckks::format_scale(scale), ev.options().scale_headroom_bits, a.level());
  const auto& basis = *ev.context()->q_basis(a.level());
  std::vector<std::uint32_t> residues(basis.size());
  ckks::round_to_residues(constant * encoding_scale, basis, residues);
  for (auto& part : a.parts()) ev.backend().multiply_scalar(part, residues);
  a.set_scale(scale);
  a.set_c1_seed(std::nullopt);
}

}  // namespace cerium::circuits
