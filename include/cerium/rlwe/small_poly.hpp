#pragma once
// Small random polynomials (secrets, encryption randomness, errors) as NTT-form RNS polynomials: shared by
// switching-key generation (rlwe) and a scheme's key generation and encryption.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/math/chacha20.hpp"
#include "cerium/ring/rns_poly.hpp"

namespace cerium::rlwe {

// Small signed values into every limb of basis (branch-free per value), then to NTT form.
ring::RnsPoly small_poly(const ring::RnsBasisPtr& basis, std::span<const std::int8_t> values);
ring::RnsPoly small_poly(const ring::RnsBasisPtr& basis, std::span<const std::int32_t> values);

// Discrete Gaussian (sigma 3.2) and uniform ternary polynomials from stream `stream` of `seed`.
ring::RnsPoly gaussian_poly(const ring::RnsBasisPtr& basis, const math::Seed& seed, std::uint64_t stream);
// gaussian_poly's n signed coefficients, before they are reduced into limbs: what a device lifts itself.
std::vector<std::int32_t> gaussian_coefficients(std::size_t n, const math::Seed& seed, std::uint64_t stream);
ring::RnsPoly ternary_poly(const ring::RnsBasisPtr& basis, const math::Seed& seed, std::uint64_t stream);

}  // namespace cerium::rlwe
