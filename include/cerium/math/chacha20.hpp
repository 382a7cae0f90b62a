#pragma once
// ChaCha20 (RFC 8439), the generator that expands 256-bit seeds into random words.
//
// One header for host and device: every function is constexpr and CERIUM_HD, on plain arrays, so a CUDA kernel
// that expands a seeded key computes the same words as the CPU. The state is the RFC's: four constants, the key
// as eight little-endian words, a 32-bit block counter and a 96-bit nonce as three little-endian words.

#include <cstdint>

#include "cerium/core/config.hpp"

namespace cerium::math {

// 256-bit key: the RFC's 32 key bytes read as eight little-endian words.
struct ChaCha20Key {
  std::uint32_t words[8] = {};  // bytes 4i .. 4i + 3 as word i, little-endian

  CERIUM_HD static constexpr ChaCha20Key from_bytes(const std::uint8_t* bytes);  // 32 bytes
  // Word-wise equality.
  friend constexpr bool operator==(const ChaCha20Key&, const ChaCha20Key&) = default;
};

// Seeds are ChaCha20 keys: whoever holds a seed can regenerate everything expanded from it.
using Seed = ChaCha20Key;

// 96-bit nonce: the RFC's 12 nonce bytes read as three little-endian words.
struct ChaCha20Nonce {
  std::uint32_t words[3] = {};  // bytes 4i .. 4i + 3 as word i, little-endian

  CERIUM_HD static constexpr ChaCha20Nonce from_bytes(const std::uint8_t* bytes);  // 12 bytes
  // Word-wise equality.
  friend constexpr bool operator==(const ChaCha20Nonce&, const ChaCha20Nonce&) = default;
};

// One 64-byte keystream block as 16 words; byte k of the keystream is byte (k mod 4) of word k / 4.
struct ChaCha20Block {
  std::uint32_t words[16] = {};  // in keystream order
};

namespace chacha20_detail {

CERIUM_HD CERIUM_FORCE_INLINE constexpr std::uint32_t rotl(std::uint32_t x, int bits) {
  return (x << bits) | (x >> (32 - bits));
}

CERIUM_HD CERIUM_FORCE_INLINE constexpr void quarter_round(std::uint32_t* s, int a, int b, int c, int d) {
  s[a] += s[b];
  s[d] = rotl(s[d] ^ s[a], 16);
  s[c] += s[d];
  s[b] = rotl(s[b] ^ s[c], 12);
  s[a] += s[b];
  s[d] = rotl(s[d] ^ s[a], 8);
  s[c] += s[d];
  s[b] = rotl(s[b] ^ s[c], 7);
}

CERIUM_HD CERIUM_FORCE_INLINE constexpr std::uint32_t load_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
         (std::uint32_t{p[3]} << 24);
}

}  // namespace chacha20_detail

CERIUM_HD constexpr ChaCha20Key ChaCha20Key::from_bytes(const std::uint8_t* bytes) {
  ChaCha20Key key;
  for (int i = 0; i < 8; ++i) key.words[i] = chacha20_detail::load_le32(bytes + 4 * i);
  return key;
}

CERIUM_HD constexpr ChaCha20Nonce ChaCha20Nonce::from_bytes(const std::uint8_t* bytes) {
  ChaCha20Nonce nonce;
  for (int i = 0; i < 3; ++i) nonce.words[i] = chacha20_detail::load_le32(bytes + 4 * i);
  return nonce;
}

// The ChaCha20 block function (RFC 8439 section 2.3): 20 rounds, then the input state added back.
CERIUM_HD constexpr ChaCha20Block chacha20_block(const ChaCha20Key& key, std::uint32_t counter,
                                                 const ChaCha20Nonce& nonce) {
  // "expand 32-byte k" as four little-endian words.
  const std::uint32_t input[16] = {0x61707865u,   0x3320646eu,   0x79622d32u,    0x6b206574u,
                                   key.words[0],  key.words[1],  key.words[2],   key.words[3],
                                   key.words[4],  key.words[5],  key.words[6],   key.words[7],
                                   counter,       nonce.words[0], nonce.words[1], nonce.words[2]};
  ChaCha20Block block;
  for (int i = 0; i < 16; ++i) block.words[i] = input[i];
  std::uint32_t* s = block.words;
  for (int double_round = 0; double_round < 10; ++double_round) {
    chacha20_detail::quarter_round(s, 0, 4, 8, 12);  // columns
    chacha20_detail::quarter_round(s, 1, 5, 9, 13);
    chacha20_detail::quarter_round(s, 2, 6, 10, 14);
    chacha20_detail::quarter_round(s, 3, 7, 11, 15);
    chacha20_detail::quarter_round(s, 0, 5, 10, 15);  // diagonals
    chacha20_detail::quarter_round(s, 1, 6, 11, 12);
    chacha20_detail::quarter_round(s, 2, 7, 8, 13);
    chacha20_detail::quarter_round(s, 3, 4, 9, 14);
  }
  for (int i = 0; i < 16; ++i) block.words[i] += input[i];
  return block;
}

// The block as the RFC's 64 serialized keystream bytes (each word little-endian).
CERIUM_HD constexpr void chacha20_serialize(const ChaCha20Block& block, std::uint8_t* bytes) {
  for (int i = 0; i < 16; ++i)
    for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<std::uint8_t>(block.words[i] >> (8 * b));
}

// The nonce of numbered stream `stream` of one key. Word 0 stays zero for the counter's carry (see
// ChaCha20Stream), so each stream has 2^64 blocks; words 1 and 2 hold the stream number, so streams never overlap.
CERIUM_HD constexpr ChaCha20Nonce chacha20_stream_nonce(std::uint64_t stream) {
  ChaCha20Nonce nonce;
  nonce.words[1] = static_cast<std::uint32_t>(stream);
  nonce.words[2] = static_cast<std::uint32_t>(stream >> 32);
  return nonce;
}

// The keystream of (key, nonce) from a starting block counter, word by word; a UniformRandomBitGenerator.
//
// Words come in keystream order: all 16 words of block `counter`, then block counter + 1, and so on. A 64-bit
// draw is two consecutive words, the first one low. When the 32-bit counter wraps, the carry goes into nonce
// word 0 (the original 64-bit-counter ChaCha layout), so the stream continues instead of repeating: block b of
// the stream (b a 64-bit index) is chacha20_block(key, b mod 2^32, {nonce[0] + b / 2^32, nonce[1], nonce[2]}).
class ChaCha20Stream {
 public:
  using result_type = std::uint32_t;  // one keystream word per draw

  // Starts at block `counter` of (key, nonce); the first block is generated at the first draw.
  CERIUM_HD constexpr ChaCha20Stream(const ChaCha20Key& key, const ChaCha20Nonce& nonce, std::uint32_t counter = 0)
      : key_(key), nonce_(nonce), next_counter_(counter) {}

  // The next keystream word.
  CERIUM_HD constexpr std::uint32_t next_u32() {
    if (position_ == 16) refill();
    return block_.words[position_++];
  }
  // The next two keystream words, the first one low.
  CERIUM_HD constexpr std::uint64_t next_u64() {
    const std::uint64_t low = next_u32();
    return low | (std::uint64_t{next_u32()} << 32);
  }

  // The UniformRandomBitGenerator interface: operator() is next_u32(), over every 32-bit value.
  CERIUM_HD constexpr result_type operator()() { return next_u32(); }
  CERIUM_HD static constexpr result_type min() { return 0; }
  CERIUM_HD static constexpr result_type max() { return ~std::uint32_t{0}; }

 private:
  CERIUM_HD constexpr void refill() {
    block_ = chacha20_block(key_, next_counter_, nonce_);
    ++next_counter_;
    nonce_.words[0] += static_cast<std::uint32_t>(next_counter_ == 0);
    position_ = 0;
  }

  ChaCha20Key key_;
  ChaCha20Nonce nonce_;
  std::uint32_t next_counter_;  // the block after the buffered one
  ChaCha20Block block_;
  int position_ = 16;  // next word of block_; 16: empty, generated on first use
};

}  // namespace cerium::math
