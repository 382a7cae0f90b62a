#include "cerium/ckks/periodic_plaintext.hpp"

#include <algorithm>

#include "cerium/core/check.hpp"

namespace cerium::ckks {

Plaintext PeriodicPlaintext::expand() const {
  require<MismatchError>(context != nullptr, "periodic plaintext: no context");
  require<LevelError>(level >= 0 && level <= context->max_level(),
                      "periodic plaintext: level {} does not exist: levels run from 0 to {}", level,
                      context->max_level());
  const ring::RnsBasisPtr& basis = context->q_basis(level);
  const std::size_t n = context->ring_degree();
  // The gap is checked before anything divides by it.
  require<MismatchError>(gap >= 1 && n % gap == 0 && words.size() == basis->size() * (n / gap),
                         "periodic plaintext: {} words in blocks of {} for {} limbs of degree {}", words.size(), gap,
                         basis->size(), n);
  const std::size_t per_limb = words_per_limb();
  ring::RnsPoly poly(basis, ring::PolyOptions{.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
  for (std::size_t i = 0; i < basis->size(); ++i) {
    const auto limb = poly.limb(i);
    for (std::size_t k = 0; k < per_limb; ++k) {
      std::fill_n(limb.begin() + static_cast<std::ptrdiff_t>(k * gap), gap, words[i * per_limb + k]);
    }
  }
  return Plaintext(context, std::move(poly), level, scale, slots);
}

}  // namespace cerium::ckks
