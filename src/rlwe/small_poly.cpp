#include "cerium/rlwe/small_poly.hpp"

#include <vector>

#include "cerium/math/sampler.hpp"

namespace cerium::rlwe {
namespace {

template <class Int>
ring::RnsPoly to_rns(const ring::RnsBasisPtr& basis, std::span<const Int> values) {
  ring::RnsPoly poly(basis, ring::PolyOptions{.form = ring::PolyForm::coefficient, .init = BufferInit::uninitialized});
  for (std::size_t i = 0; i < basis->size(); ++i) {
    const std::uint32_t q = basis->prime(i);
    math::signed_to_rns(values, std::span<const std::uint32_t>(&q, 1), poly.limb(i));
  }
  poly.to_ntt();
  return poly;
}

}  // namespace

ring::RnsPoly small_poly(const ring::RnsBasisPtr& basis, std::span<const std::int8_t> values) {
  return to_rns(basis, values);
}
ring::RnsPoly small_poly(const ring::RnsBasisPtr& basis, std::span<const std::int32_t> values) {
  return to_rns(basis, values);
}

std::vector<std::int32_t> gaussian_coefficients(std::size_t n, const math::Seed& seed, std::uint64_t stream) {
  math::Prng prng(seed, stream);
  std::vector<std::int32_t> e(n);
  math::sample_gaussian(prng, e);
  return e;
}

ring::RnsPoly gaussian_poly(const ring::RnsBasisPtr& basis, const math::Seed& seed, std::uint64_t stream) {
  const std::vector<std::int32_t> e = gaussian_coefficients(basis->ring_degree(), seed, stream);
  return small_poly(basis, std::span<const std::int32_t>(e));
}

ring::RnsPoly ternary_poly(const ring::RnsBasisPtr& basis, const math::Seed& seed, std::uint64_t stream) {
  math::Prng prng(seed, stream);
  std::vector<std::int8_t> v(basis->ring_degree());
  math::sample_ternary(prng, v);
  return small_poly(basis, std::span<const std::int8_t>(v));
}

}  // namespace cerium::rlwe
