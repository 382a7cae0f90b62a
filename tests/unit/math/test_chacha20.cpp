#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cerium/math/chacha20.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium::math;

namespace {

// RFC 8439 sections 2.3.2 and 2.4.2: key bytes 00 01 02 .. 1f.
ChaCha20Key rfc_key() {
  std::uint8_t bytes[32];
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<std::uint8_t>(i);
  return ChaCha20Key::from_bytes(bytes);
}

// Section 2.3.2: nonce 00:00:00:09:00:00:00:4a:00:00:00:00, block count 1.
constexpr std::uint8_t block_test_nonce[12] = {0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x4a, 0x00, 0x00, 0x00, 0x00};

constexpr ChaCha20Key constexpr_rfc_key() {
  ChaCha20Key key;
  for (std::uint32_t i = 0; i < 8; ++i) key.words[i] = (4 * i) | ((4 * i + 1) << 8) | ((4 * i + 2) << 16) | ((4 * i + 3) << 24);
  return key;
}

// The block function runs at compile time (the same code runs in CUDA kernels, which needs constexpr-friendliness).
static_assert(chacha20_block(constexpr_rfc_key(), 1, ChaCha20Nonce::from_bytes(block_test_nonce)).words[0] ==
              0xe4e7f110u);

}  // namespace

TEST_CASE("ChaCha20 block function matches RFC 8439 section 2.3.2", "[math][chacha20]") {
  const ChaCha20Key key = rfc_key();
  const ChaCha20Nonce nonce = ChaCha20Nonce::from_bytes(block_test_nonce);
  // The state after setup, as the RFC prints it: key and nonce words are little-endian reads of the bytes.
  CHECK(key.words[0] == 0x03020100u);
  CHECK(key.words[7] == 0x1f1e1d1cu);
  CHECK(nonce.words[0] == 0x09000000u);
  CHECK(nonce.words[1] == 0x4a000000u);
  CHECK(nonce.words[2] == 0x00000000u);

  const std::uint32_t expected_words[16] = {0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3,  //
                                            0xc7f4d1c7, 0x0368c033, 0x9aaa2204, 0x4e6cd4c3,  //
                                            0x466482d2, 0x09aa9f07, 0x05d7c214, 0xa2028bd9,  //
                                            0xd19c12b5, 0xb94e16de, 0xe883d0cb, 0x4e3c50a2};
  const ChaCha20Block block = chacha20_block(key, 1, nonce);
  for (int i = 0; i < 16; ++i) {
    INFO("word " << i);
    CHECK(block.words[i] == expected_words[i]);
  }

  const std::uint8_t expected_bytes[64] = {
      0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20, 0x71, 0xc4,
      0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22, 0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e,
      0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa, 0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2,
      0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e};
  std::uint8_t bytes[64];
  chacha20_serialize(block, bytes);
  CHECK(std::memcmp(bytes, expected_bytes, 64) == 0);
}

TEST_CASE("ChaCha20 block function matches RFC 8439 appendix A.1 test vector 1 (all-zero input)",
          "[math][chacha20]") {
  const std::uint32_t expected[16] = {0xade0b876, 0x903df1a0, 0xe56a5d40, 0x28bd8653,  //
                                      0xb819d2bd, 0x1aed8da0, 0xccef36a8, 0xc70d778b,  //
                                      0x7c5941da, 0x8d485751, 0x3fe02477, 0x374ad8b8,  //
                                      0xf4b8436a, 0x1ca11815, 0x69b687c3, 0x8665eeb2};
  const ChaCha20Block block = chacha20_block(ChaCha20Key{}, 0, ChaCha20Nonce{});
  for (int i = 0; i < 16; ++i) CHECK(block.words[i] == expected[i]);
}

TEST_CASE("ChaCha20 keystream encrypts the RFC 8439 section 2.4.2 sunscreen text", "[math][chacha20]") {
  const char plaintext[] =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would "
      "be it.";
  const std::size_t length = sizeof(plaintext) - 1;
  REQUIRE(length == 114);
  const std::uint8_t expected[114] = {
      0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d, 0x69, 0x81,
      0xe9, 0x7e, 0x7a, 0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc, 0xfd, 0x9f, 0xae, 0x0b,
      0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47, 0x33, 0xab, 0x8f, 0x59, 0x3d, 0xab, 0xcd, 0x62, 0xb3, 0x57,
      0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab, 0x8f, 0x53, 0x0c, 0x35, 0x9f, 0x08, 0x61, 0xd8,
      0x07, 0xca, 0x0d, 0xbf, 0x50, 0x0d, 0x6a, 0x61, 0x56, 0xa3, 0x8e, 0x08, 0x8a, 0x22, 0xb6, 0x5e,
      0x52, 0xbc, 0x51, 0x4d, 0x16, 0xcc, 0xf8, 0x06, 0x81, 0x8c, 0xe9, 0x1a, 0xb7, 0x79, 0x37, 0x36,
      0x5a, 0xf9, 0x0b, 0xbf, 0x74, 0xa3, 0x5b, 0xe6, 0xb4, 0x0b, 0x8e, 0xed, 0xf2, 0x78, 0x5e, 0x42,
      0x87, 0x4d};
  const std::uint8_t nonce_bytes[12] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4a, 0x00, 0x00, 0x00, 0x00};
  const ChaCha20Key key = rfc_key();
  const ChaCha20Nonce nonce = ChaCha20Nonce::from_bytes(nonce_bytes);

  SECTION("from serialized blocks with counters 1, 2") {
    std::vector<std::uint8_t> keystream(128);
    chacha20_serialize(chacha20_block(key, 1, nonce), keystream.data());
    chacha20_serialize(chacha20_block(key, 2, nonce), keystream.data() + 64);
    for (std::size_t i = 0; i < length; ++i) {
      INFO("byte " << i);
      CHECK((static_cast<std::uint8_t>(plaintext[i]) ^ keystream[i]) == expected[i]);
    }
  }
  SECTION("from the word stream starting at counter 1") {
    ChaCha20Stream stream(key, nonce, 1);
    std::uint32_t word = 0;
    for (std::size_t i = 0; i < length; ++i) {
      if (i % 4 == 0) word = stream.next_u32();
      const auto key_byte = static_cast<std::uint8_t>(word >> (8 * (i % 4)));
      INFO("byte " << i);
      CHECK((static_cast<std::uint8_t>(plaintext[i]) ^ key_byte) == expected[i]);
    }
  }
}

TEST_CASE("ChaCha20 stream continues across block counters", "[math][chacha20]") {
  auto rng = cerium_test::make_rng(20);
  INFO("seed = " << cerium_test::test_seed());
  ChaCha20Key key;
  for (auto& w : key.words) w = static_cast<std::uint32_t>(rng());
  ChaCha20Nonce nonce;
  for (auto& w : nonce.words) w = static_cast<std::uint32_t>(rng());
  const auto start = static_cast<std::uint32_t>(rng() % 1000);

  SECTION("32-bit words are the blocks' words in order") {
    ChaCha20Stream stream(key, nonce, start);
    for (std::uint32_t b = 0; b < 5; ++b) {
      const ChaCha20Block block = chacha20_block(key, start + b, nonce);
      for (int i = 0; i < 16; ++i) REQUIRE(stream.next_u32() == block.words[i]);
    }
  }
  SECTION("64-bit words join consecutive words, the first one low, also across a block boundary") {
    ChaCha20Stream words(key, nonce, start);
    ChaCha20Stream pairs(key, nonce, start);
    words.next_u32();  // shift by one word so pairs straddle blocks in the second stream
    pairs.next_u32();
    for (int i = 0; i < 40; ++i) {
      const std::uint64_t low = words.next_u32();
      const std::uint64_t high = words.next_u32();
      REQUIRE(pairs.next_u64() == (low | (high << 32)));
    }
  }
  SECTION("starting at a later counter skips whole blocks") {
    ChaCha20Stream from_start(key, nonce, start);
    for (int i = 0; i < 3 * 16; ++i) from_start.next_u32();
    ChaCha20Stream later(key, nonce, start + 3);
    for (int i = 0; i < 50; ++i) REQUIRE(from_start.next_u32() == later.next_u32());
  }
  SECTION("counter overflow carries into nonce word 0 instead of repeating block 0") {
    ChaCha20Stream stream(key, nonce, 0xffffffffu);
    const ChaCha20Block last = chacha20_block(key, 0xffffffffu, nonce);
    for (int i = 0; i < 16; ++i) REQUIRE(stream.next_u32() == last.words[i]);
    ChaCha20Nonce carried = nonce;
    carried.words[0] += 1;
    const ChaCha20Block next = chacha20_block(key, 0, carried);
    for (int i = 0; i < 16; ++i) REQUIRE(stream.next_u32() == next.words[i]);
  }
}

TEST_CASE("ChaCha20 streams of one key with different stream numbers differ", "[math][chacha20]") {
  const ChaCha20Key key = rfc_key();
  const ChaCha20Nonce a = chacha20_stream_nonce(0), b = chacha20_stream_nonce(1),
                      c = chacha20_stream_nonce(std::uint64_t{1} << 32);
  CHECK(a.words[0] == 0);
  CHECK(b.words[1] == 1);
  CHECK(c.words[2] == 1);
  ChaCha20Stream sa(key, a), sb(key, b), sc(key, c);
  int equal = 0;
  for (int i = 0; i < 64; ++i) {
    const auto x = sa.next_u32(), y = sb.next_u32(), z = sc.next_u32();
    equal += (x == y) + (x == z) + (y == z);
  }
  CHECK(equal <= 1);
}

TEST_CASE("ChaCha20Stream is a UniformRandomBitGenerator", "[math][chacha20]") {
  static_assert(std::uniform_random_bit_generator<ChaCha20Stream>);
  ChaCha20Stream stream(rfc_key(), ChaCha20Nonce{});
  std::uniform_int_distribution<int> die(1, 6);
  for (int i = 0; i < 100; ++i) {
    const int roll = die(stream);
    REQUIRE((roll >= 1 && roll <= 6));
  }
}
