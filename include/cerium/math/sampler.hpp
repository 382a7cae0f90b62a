#pragma once
// The samplers behind keys, encryption randomness and errors, driven by a ChaCha20 Prng.
//
// No sampler branches on, or indexes memory by, a secret value. Rejection sampling does decide on random words,
// but only on words that are then thrown away: an accepted word says nothing about the value it becomes. The
// per-value maps (uniform_acceptance_bound, ternary_from_chunk, gaussian_from_word, signed_to_residue) are
// constexpr CERIUM_HD so device code can expand a seed into the same values as the host.
//
// Small signed values (secrets, errors) are written as int8_t or int32_t; signed_to_rns turns them into the
// limb-major residues of an RNS polynomial.

#include <cstddef>
#include <cstdint>
#include <span>

#include "cerium/core/config.hpp"
#include "cerium/math/chacha20.hpp"

namespace cerium::math {

// A ChaCha20 generator keyed by a 256-bit seed: stream `stream` of the seed, from block 0, with nonce
// chacha20_stream_nonce(stream). The same seed and stream give the same words on every machine; different
// streams of one seed are independent. A UniformRandomBitGenerator of 32-bit words.
class Prng {
 public:
  using result_type = std::uint32_t;  // one keystream word per draw

  // Stream `stream` of seed, from its first word.
  explicit Prng(const Seed& seed, std::uint64_t stream = 0)
      : seed_(seed), stream_id_(stream), stream_(seed, chacha20_stream_nonce(stream)) {}
  // Keyed by a fresh seed from the operating system (getrandom).
  static Prng from_os(std::uint64_t stream = 0);

  const Seed& seed() const { return seed_; }           // the key: whoever holds it can replay every stream
  std::uint64_t stream() const { return stream_id_; }  // the stream number

  // The next keystream word, or (next_u64) the next two, the first one low.
  std::uint32_t next_u32() { return stream_.next_u32(); }
  std::uint64_t next_u64() { return stream_.next_u64(); }
  // The UniformRandomBitGenerator interface: operator() is next_u32(), over every 32-bit value.
  result_type operator()() { return next_u32(); }
  static constexpr result_type min() { return ChaCha20Stream::min(); }
  static constexpr result_type max() { return ChaCha20Stream::max(); }

 private:
  Seed seed_;
  std::uint64_t stream_id_;
  ChaCha20Stream stream_;
};

// --- Per-value maps, shared with device code ---

// Words below this bound are accepted and reduced mod q; it is the largest multiple of q not above 2^32, so each
// residue has exactly floor(2^32 / q) preimages. 64-bit because it is 2^32 itself when q is a power of two.
CERIUM_HD constexpr std::uint64_t uniform_acceptance_bound(std::uint32_t q) {
  constexpr std::uint64_t two32 = std::uint64_t{1} << 32;
  return two32 - two32 % q;
}

// A 2-bit chunk c in {0, 1, 2} becomes c - 1 in {-1, 0, 1}; chunk 3 is rejected before this is used.
CERIUM_HD constexpr std::int8_t ternary_from_chunk(std::uint32_t chunk) {
  return static_cast<std::int8_t>(static_cast<std::int32_t>(chunk) - 1);
}

// The discrete Gaussian: P(x) proportional to exp(-x^2 / (2 sigma^2)) for |x| <= 19 (6 sigma), zero beyond.
inline constexpr double gaussian_sigma = 3.2;
inline constexpr int gaussian_tail_bound = 19;

// threshold[k] = round(2^63 P(|x| <= k)) for k = 0 .. 18 (computed offline at 60 digits).
struct GaussianCdt {
  std::uint64_t threshold[gaussian_tail_bound] = {};  // nondecreasing in k, all below 2^63
};

// The thresholds for gaussian_sigma and gaussian_tail_bound.
CERIUM_HD constexpr GaussianCdt gaussian_cdt() {
  return {{0x0ff52b40a5917f1dull, 0x2e5a25d4bf0e400eull, 0x489ae26955b04bd6ull, 0x5d2bc20f621bf185ull,
           0x6bc8694c3cc80ff5ull, 0x7532d89ac6ba7dcfull, 0x7ab396cb74436799ull, 0x7d9e4e916643eb08ull,
           0x7f05495819eb2051ull, 0x7fa1ce9c0039a957ull, 0x7fdfb3f212e8c4e9ull, 0x7ff5e6f9d2314fccull,
           0x7ffd1f97bc4406a3ull, 0x7fff40fa0088d11eull, 0x7fffd2e835e1c57eull, 0x7ffff6524386ff1eull,
           0x7ffffe1db4769da5ull, 0x7fffffac0a1dcb09ull, 0x7ffffff428673853ull}};
}

// One Gaussian sample from one uniform 64-bit word. The high 63 bits r pick the magnitude |x| = #{k : r >=
// threshold[k]}, comparing against every entry (the borrow of r - threshold[k], no early exit); the low bit is
// the sign, applied arithmetically. -0 = 0, so P(0) is the table's P(|x| = 0) and each sign gets half the rest.
CERIUM_HD constexpr std::int32_t gaussian_from_word(std::uint64_t word) {
  constexpr GaussianCdt table = gaussian_cdt();  // a local, so device code may index it
  const std::uint64_t r = word >> 1;
  std::uint32_t magnitude = gaussian_tail_bound;
  for (int k = 0; k < gaussian_tail_bound; ++k)
    magnitude -= static_cast<std::uint32_t>((r - table.threshold[k]) >> 63);  // 1 when r < threshold[k]
  const auto negate = -static_cast<std::int32_t>(word & 1);  // 0 or -1
  return (static_cast<std::int32_t>(magnitude) ^ negate) - negate;
}

// x mod q in [0, q) for |x| < q: a negative x gets q added through a mask, not a branch.
CERIUM_HD constexpr std::uint32_t signed_to_residue(std::int32_t x, std::uint32_t q) {
  const auto bits = static_cast<std::uint32_t>(x);
  return bits + (q & (0u - (bits >> 31)));
}

// --- Samplers ---

// Uniform residues mod q (1 <= q < 2^32), by rejection against uniform_acceptance_bound: no modulo bias.
void sample_uniform_mod(Prng& prng, std::span<std::uint32_t> out, std::uint32_t q);

// Uniform ternary: -1, 0, 1 with probability exactly 1/3 each (2-bit chunks of random words, chunk 3 rejected).
void sample_ternary(Prng& prng, std::span<std::int8_t> out);

// Exactly `weight` nonzero entries, each +1 or -1 with probability 1/2, on a uniformly random set of positions.
// The positions come from sorting (random key, value) pairs with a branch-free bitonic network: a Fisher-Yates
// shuffle would index memory by secret positions. Throws InvalidArgument when weight > out.size().
void sample_hamming_weight(Prng& prng, std::span<std::int8_t> out, std::size_t weight);

// Discrete Gaussian with sigma 3.2 cut at |x| <= 19 (gaussian_from_word on one 64-bit word each).
void sample_gaussian(Prng& prng, std::span<std::int32_t> out);

// values -> residues mod each modulus, limb-major: out[l * n + i] = values[i] mod moduli[l], n = values.size().
// Needs out.size() == n * moduli.size(), and |values[i]| < moduli[l] (checked without branching per value).
void signed_to_rns(std::span<const std::int8_t> values, std::span<const std::uint32_t> moduli,
                   std::span<std::uint32_t> out);
void signed_to_rns(std::span<const std::int32_t> values, std::span<const std::uint32_t> moduli,
                   std::span<std::uint32_t> out);

}  // namespace cerium::math
