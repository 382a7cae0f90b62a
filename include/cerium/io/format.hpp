#pragma once
// The Cerium binary format, version 1. Every object is a 24-byte header followed by its payload, all integers
// little-endian and doubles as their IEEE-754 bit patterns:
//
//   offset 0  4 bytes  magic "CERI"
//   offset 4  u16      format version (format_version)
//   offset 6  u16      object type (ObjectType)
//   offset 8  u64      parameter fingerprint (ckks::Parameters::fingerprint() of the object's parameters)
//   offset 16 u64      payload length in bytes (exactly what follows; no more, no less)
//
// Payloads (RNS polynomials are written limb after limb, N u32 words each, in NTT form, every word below its
// prime; "basis" counts are checked against the context before anything is allocated):
//   parameters:  config fields (i32 x8, u8 secret, i32 hamming weight, u16 security, u8 insecure opt-out),
//                u32 |Q| + Q primes, u32 |P| + P primes
//   plaintext:   i32 level, u32 limbs, u32 N, f64 scale, u64 slots, poly
//   ciphertext:  i32 level, u32 parts, u32 limbs, u32 N, f64 scale, u64 slots, u8 seeded,
//                [seeded: 32-byte seed, u64 stream], the parts (c1 left out when seeded: it is re-expanded)
//   secret key:  u32 N, N signed bytes in {-1, 0, 1} (s is recomputed over the key basis)
//   public key:  u32 limbs, u32 N, b, a (over Q_top)
//   switching key (inside relinearization and Galois keys): u32 digits, u32 limbs, u32 N, u8 storage,
//                u8 has seed, [32-byte seed, u64 base stream], then per digit b and (expanded storage only) a
//   relinearization key: one switching key
//   Galois keys: u32 count, then per key u32 Galois element (odd, < 2N, strictly increasing) + switching key

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cerium::io {

// The header's fixed values: its magic, the format version this library writes, its size in bytes.
inline constexpr std::array<char, 4> format_magic = {'C', 'E', 'R', 'I'};
inline constexpr std::uint16_t format_version = 1;
inline constexpr std::size_t header_size = 24;

// What a payload holds (the header's object type; the values are the file's codes).
enum class ObjectType : std::uint16_t {
  parameters = 1,
  plaintext = 2,
  ciphertext = 3,
  secret_key = 4,
  public_key = 5,
  relinearization_key = 6,
  galois_keys = 7,
};

// "ciphertext", "Galois keys", ...; "unknown" for a value outside the enum.
std::string_view to_string(ObjectType type);

// A header's fields after the magic (the table above).
struct Header {
  std::uint16_t version = format_version;    // of the format
  ObjectType type = ObjectType::parameters;  // what the payload holds
  std::uint64_t fingerprint = 0;             // ckks::Parameters::fingerprint() of the object's parameters
  std::uint64_t payload_length = 0;          // bytes after the header
};

}  // namespace cerium::io
