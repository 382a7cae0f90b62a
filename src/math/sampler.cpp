#include "cerium/math/sampler.hpp"

#include <bit>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/math/os_random.hpp"

namespace cerium::math {

Prng Prng::from_os(std::uint64_t stream) { return Prng(os_random_seed(), stream); }

void sample_uniform_mod(Prng& prng, std::span<std::uint32_t> out, std::uint32_t q) {
  require(q != 0, "uniform sampling needs a modulus q >= 1, got 0");
  const std::uint64_t bound = uniform_acceptance_bound(q);
  for (auto& x : out) {
    std::uint32_t word = prng.next_u32();
    while (word >= bound) word = prng.next_u32();  // a rejected word is discarded: it decides no value
    x = word % q;
  }
}

void sample_ternary(Prng& prng, std::span<std::int8_t> out) {
  std::size_t filled = 0;
  while (filled < out.size()) {
    std::uint32_t word = prng.next_u32();
    for (int chunk_index = 0; chunk_index < 16 && filled < out.size(); ++chunk_index, word >>= 2) {
      const std::uint32_t chunk = word & 3u;
      // Always written, kept only when the chunk is not 3 (then overwritten by the next one): the value never
      // steers control flow, only the public count of accepted chunks does.
      out[filled] = ternary_from_chunk(chunk);
      filled += static_cast<std::size_t>(chunk != 3u);
    }
  }
}

namespace {

// a < b for 64-bit unsigned values as 0 or 1, from the borrow bit (Hacker's Delight 2-12), not a comparison
// the compiler might turn into a branch.
constexpr std::uint64_t less_than(std::uint64_t a, std::uint64_t b) {
  return ((~a & b) | ((~a | b) & (a - b))) >> 63;
}

// Sorts keys ascending (keys.size() a power of two) with a bitonic network: the sequence of compared indices
// depends only on the size, and each compare-exchange is a masked swap.
void bitonic_sort(std::span<std::uint64_t> keys) {
  const std::size_t size = keys.size();
  for (std::size_t block = 2; block <= size; block <<= 1) {
    for (std::size_t distance = block >> 1; distance > 0; distance >>= 1) {
      for (std::size_t i = 0; i < size; ++i) {
        const std::size_t partner = i ^ distance;
        if (partner <= i) continue;
        const bool ascending = (i & block) == 0;  // public: a function of the index only
        const std::uint64_t a = keys[i], b = keys[partner];
        const std::uint64_t out_of_order = ascending ? less_than(b, a) : less_than(a, b);
        const std::uint64_t swap = (a ^ b) & (0 - out_of_order);
        keys[i] = a ^ swap;
        keys[partner] = b ^ swap;
      }
    }
  }
}

// A key's low two bits carry the value (0: zero, 1: +1, 2: -1); the high 62 bits are random and decide the order.
constexpr std::uint64_t value_bits = 3;
// Padding up to a power of two sorts after every real key.
constexpr std::uint64_t padding_key = ~std::uint64_t{0};

}  // namespace

void sample_hamming_weight(Prng& prng, std::span<std::int8_t> out, std::size_t weight) {
  const std::size_t n = out.size();
  require(weight <= n, "Hamming weight {} exceeds the {} coefficients to fill", weight, n);
  if (n == 0) return;
  std::vector<std::uint64_t> keys(std::bit_ceil(n));
  for (;;) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::uint64_t word = prng.next_u64();
      const std::uint64_t value = static_cast<std::uint64_t>(i < weight) * (1 + (word & 1));  // i, weight public
      keys[i] = i < n ? (word & ~value_bits) | value : padding_key;
    }
    bitonic_sort(keys);
    // Equal random parts would order their values by the value bits (a bias of about n^2 / 2^63): redraw then.
    // The test looks only at the random parts, which are thrown away.
    std::uint64_t ties = 0;
    for (std::size_t i = 0; i + 1 < n; ++i) ties |= static_cast<std::uint64_t>((keys[i] >> 2) == (keys[i + 1] >> 2));
    if (ties == 0) break;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t value = keys[i] & value_bits;
    out[i] = static_cast<std::int8_t>(static_cast<std::int32_t>(value & 1) - static_cast<std::int32_t>(value >> 1));
  }
}

void sample_gaussian(Prng& prng, std::span<std::int32_t> out) {
  for (auto& x : out) x = gaussian_from_word(prng.next_u64());
}

namespace {

template <class Int>
void signed_to_rns_impl(std::span<const Int> values, std::span<const std::uint32_t> moduli,
                        std::span<std::uint32_t> out) {
  const std::size_t n = values.size();
  require(out.size() == n * moduli.size(), "RNS output has {} words, {} values times {} moduli need {}", out.size(),
          n, moduli.size(), n * moduli.size());
  for (std::size_t limb = 0; limb < moduli.size(); ++limb) {
    const std::uint32_t q = moduli[limb];
    // OR of (q - 1 - |x|) over all values: its sign bit is set iff some |x| >= q. One check at the end, so no
    // branch depends on any single value.
    std::int64_t out_of_range = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::int32_t x = values[i];
      const auto bits = static_cast<std::uint32_t>(x);
      const std::uint32_t sign = 0u - (bits >> 31);
      const std::int64_t magnitude = (bits ^ sign) - sign;  // |x|, in unsigned arithmetic (no overflow)
      out_of_range |= static_cast<std::int64_t>(q) - 1 - magnitude;
      out[limb * n + i] = signed_to_residue(x, q);
    }
    require(out_of_range >= 0, "a value to reduce mod {} (limb {}) has magnitude >= the modulus", q, limb);
  }
}

}  // namespace

void signed_to_rns(std::span<const std::int8_t> values, std::span<const std::uint32_t> moduli,
                   std::span<std::uint32_t> out) {
  signed_to_rns_impl(values, moduli, out);
}

void signed_to_rns(std::span<const std::int32_t> values, std::span<const std::uint32_t> moduli,
                   std::span<std::uint32_t> out) {
  signed_to_rns_impl(values, moduli, out);
}

}  // namespace cerium::math
