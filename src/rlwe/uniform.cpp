#include "cerium/rlwe/uniform.hpp"

#include "cerium/core/check.hpp"
#include "cerium/math/sampler.hpp"

namespace cerium::rlwe {

void expand_uniform_limb(const math::Seed& seed, std::uint64_t stream, std::size_t limb, std::uint32_t q,
                         std::span<std::uint32_t> out) {
  require(stream < max_uniform_stream, "uniform stream {} is out of range: streams are below 2^56", stream);
  require(limb < max_uniform_limbs, "limb {} is out of range: uniform expansion covers {} limbs", limb,
          max_uniform_limbs);
  math::Prng prng(seed, uniform_limb_stream(stream, limb));
  // Uniform residues are uniform in either domain (the NTT is a bijection), so they are NTT-form values as drawn.
  math::sample_uniform_mod(prng, out, q);
}

ring::RnsPoly expand_uniform(const ring::RnsBasisPtr& basis, const math::Seed& seed, std::uint64_t stream) {
  require(basis != nullptr, "uniform expansion needs a basis");
  require(basis->size() <= max_uniform_limbs, "uniform expansion covers {} limbs; the basis has {}",
          max_uniform_limbs, basis->size());
  ring::RnsPoly out(basis, ring::PolyOptions{.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
  for (std::size_t i = 0; i < basis->size(); ++i) expand_uniform_limb(seed, stream, i, basis->prime(i), out.limb(i));
  return out;
}

}  // namespace cerium::rlwe
