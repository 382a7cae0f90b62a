#pragma once
// Multiply-accumulate over one limb, the inner loops of the CPU backend's fused sums (linear transforms'
// diagonals, polynomial evaluation's linear combinations). Vectorized with runtime dispatch (core/simd.hpp); each
// word is the canonical residue, so the words equal those of a multiply then an add.

#include <cstdint>
#include <span>

#include "cerium/math/modarith.hpp"

namespace cerium::ring {

// acc[k] = (acc[k] + x[k] y[k]) mod q; x, y and acc below q, all of acc.size() words.
void multiply_accumulate_limb(std::span<std::uint32_t> acc, std::span<const std::uint32_t> x,
                              std::span<const std::uint32_t> y, const math::Modulus& m);
// acc[k] = (acc[k] + x[k] s) mod q for one s < q.
void multiply_accumulate_limb(std::span<std::uint32_t> acc, std::span<const std::uint32_t> x, std::uint32_t s,
                              const math::Modulus& m);

}  // namespace cerium::ring
