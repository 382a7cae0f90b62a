#pragma once
// How a seeded uniform polynomial's limbs map to ChaCha20 streams (rlwe::expand_uniform), in one header for host
// and device code: the CUDA backend expands seeded keys with the same streams (kernels/uniform_expansion.cu).

#include <cstddef>
#include <cstdint>

#include "cerium/core/config.hpp"

namespace cerium::rlwe {

// The limits of expand_uniform: limbs per basis and streams per seed, so that every limb stream fits in 64 bits.
inline constexpr std::uint64_t max_uniform_limbs = 256;
inline constexpr std::uint64_t max_uniform_stream = std::uint64_t{1} << 56;
// The Prng stream of limb `limb` of uniform stream `stream`: (stream << 8) | limb, injective on the valid range.
CERIUM_HD constexpr std::uint64_t uniform_limb_stream(std::uint64_t stream, std::size_t limb) {
  return (stream << 8) | static_cast<std::uint64_t>(limb);
}

}  // namespace cerium::rlwe
