#pragma once
// The uniform polynomial that stream `stream` of `seed` expands to over `basis`, directly in NTT form: how seeded
// keys and seeded ciphertexts regenerate their uniform halves.
//
// Limb i (the i-th prime of `basis`) is math::sample_uniform_mod over its prime, fed by its own ChaCha20 stream,
// math::Prng(seed, uniform_limb_stream(stream, i)). Limbs are therefore independent (a device expands them in
// parallel, and key switching at a low level expands only the limbs it reads), and the expansion over a prefix
// of a basis is the prefix of the expansion. A seed given to expand_uniform must serve nothing else: it is
// public once a seeded key or ciphertext is stored. Throws InvalidArgument for stream >= max_uniform_stream or a
// basis of more than max_uniform_limbs primes (uniform_stream.hpp).

#include <cstddef>
#include <cstdint>
#include <span>

#include "cerium/math/chacha20.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "cerium/rlwe/uniform_stream.hpp"

namespace cerium::rlwe {

// The uniform polynomial of stream `stream` of seed over basis, in NTT form (see the file comment).
ring::RnsPoly expand_uniform(const ring::RnsBasisPtr& basis, const math::Seed& seed, std::uint64_t stream);

// One limb of expand_uniform: limb position `limb` of a basis whose prime there is q; out holds N words.
void expand_uniform_limb(const math::Seed& seed, std::uint64_t stream, std::size_t limb, std::uint32_t q,
                         std::span<std::uint32_t> out);

}  // namespace cerium::rlwe
