#pragma once
// Key types. Every key holds its context; all polynomials are in NTT form.
//
//  - SecretKey: s over Q_top u P (uniform ternary or fixed Hamming weight), with its small signed coefficients.
//  - PublicKey: (b, a) = (-a s + e, a) over Q_top.
//  - SwitchingKey from s' to s (hybrid key switching, dnum digits of alpha primes, alpha special primes P):
//    digit d is (b_d, a_d) = (-a_d s + e_d + P g_d s', a_d) over Q_top u P, with the gadget
//    g_d = (Q / Q_d) [(Q / Q_d)^{-1}]_{Q_d} for the digit's primes Q_d. The uniform halves a_d may be kept as a
//    seed only (KeyStorage::seeded), halving key memory; they are expanded where they are used (the CUDA
//    backend expands them on the device when a key is uploaded: half the transfer, the same words).
//  - RelinearizationKey: switches from s^2 to s. GaloisKeys: one switching key from sigma_k(s) to s per Galois
//    element k (rotations by r slots: k = 5^r mod 2N; conjugation: k = 2N - 1).

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/uniform_stream.hpp"
#include "cerium/math/chacha20.hpp"
#include "cerium/ring/rns_poly.hpp"

namespace cerium::ckks {

enum class KeyStorage { expanded, seeded };

class SecretKey {
 public:
  SecretKey() = default;
  SecretKey(ContextPtr context, ring::RnsPoly s, std::vector<std::int8_t> coefficients);
  SecretKey(SecretKey&&) noexcept = default;
  SecretKey& operator=(SecretKey&&) noexcept = default;

  const ContextPtr& context() const { return context_; }
  // s over context()->key_basis() (Q_top u P), NTT form.
  const ring::RnsPoly& poly() const { return s_; }
  // The ternary coefficients of s.
  const std::vector<std::int8_t>& coefficients() const { return coefficients_; }
  // s over a basis whose primes all belong to key_basis() (Q_l, Q_l u P, P, ...), NTT form: the key's limbs
  // picked by prime. Throws MismatchError naming the first prime that is not in the key basis.
  ring::RnsPoly poly_over(const ring::RnsBasisPtr& basis) const;
  SecretKey clone() const;

 private:
  ContextPtr context_;
  ring::RnsPoly s_;
  std::vector<std::int8_t> coefficients_;
};

class PublicKey {
 public:
  PublicKey() = default;
  PublicKey(ContextPtr context, ring::RnsPoly b, ring::RnsPoly a);
  PublicKey(PublicKey&&) noexcept = default;
  PublicKey& operator=(PublicKey&&) noexcept = default;

  const ContextPtr& context() const { return context_; }
  const ring::RnsPoly& b() const { return b_; }  // over Q_top, NTT form
  const ring::RnsPoly& a() const { return a_; }
  PublicKey clone() const;

 private:
  ContextPtr context_;
  ring::RnsPoly b_, a_;
};

class SwitchingKey {
 public:
  SwitchingKey() = default;
  // digits[d] = {b_d, a_d} over key_basis(); with storage seeded, a_d may be empty and is expanded from the seed
  // (stream base_stream + d).
  SwitchingKey(ContextPtr context, std::vector<std::array<ring::RnsPoly, 2>> digits, KeyStorage storage,
               std::optional<math::Seed> seed, std::uint64_t base_stream);
  SwitchingKey(SwitchingKey&&) noexcept = default;
  SwitchingKey& operator=(SwitchingKey&&) noexcept = default;

  const ContextPtr& context() const { return context_; }
  std::size_t digit_count() const { return digits_.size(); }
  KeyStorage storage() const { return storage_; }
  const ring::RnsPoly& b(std::size_t digit) const { return digits_.at(digit)[0]; }
  // a_d: the stored polynomial, or for seeded storage a fresh expansion of the seed.
  ring::RnsPoly a(std::size_t digit) const;
  // a_d without expansion: null for seeded storage that does not hold it.
  const ring::RnsPoly* stored_a(std::size_t digit) const;
  const std::optional<math::Seed>& seed() const { return seed_; }
  std::uint64_t base_stream() const { return base_stream_; }
  // Limb `limb` of a_d (a position in key_basis()) into out (N words): a copy of the stored limb, or its
  // expansion from the seed, so that key switching at a low level expands only the limbs it reads.
  void a_limb(std::size_t digit, std::size_t limb, std::span<std::uint32_t> out) const;
  SwitchingKey clone() const;

 private:
  ContextPtr context_;
  std::vector<std::array<ring::RnsPoly, 2>> digits_;
  KeyStorage storage_ = KeyStorage::expanded;
  std::optional<math::Seed> seed_;
  std::uint64_t base_stream_ = 0;
};

// The uniform polynomial that stream `stream` of `seed` expands to over `basis`, directly in NTT form: how seeded
// keys and seeded ciphertexts regenerate their uniform halves.
//
// Limb i (the i-th prime of `basis`) is math::sample_uniform_mod over its prime, fed by its own ChaCha20 stream,
// math::Prng(seed, uniform_limb_stream(stream, i)). Limbs are therefore independent (a device expands them in
// parallel, and key switching at a low level expands only the limbs it reads), and the expansion over a prefix
// of a basis is the prefix of the expansion. A seed given to expand_uniform must serve nothing else: it is
// public once a seeded key or ciphertext is stored. Throws InvalidArgument for stream >= max_uniform_stream or a
// basis of more than max_uniform_limbs primes.
ring::RnsPoly expand_uniform(const ring::RnsBasisPtr& basis, const math::Seed& seed, std::uint64_t stream);

// max_uniform_limbs, max_uniform_stream and uniform_limb_stream: ckks/uniform_stream.hpp.
// One limb of expand_uniform: limb position `limb` of a basis whose prime there is q; out holds N words.
void expand_uniform_limb(const math::Seed& seed, std::uint64_t stream, std::size_t limb, std::uint32_t q,
                         std::span<std::uint32_t> out);

// Seeds derived from a master seed: the first 32 bytes of Prng(master, domain). Each component draws from its
// own domain, so one master seed may serve a KeyGenerator, an Encryptor and a Decryptor without two of them ever
// using the same (seed, stream) pair, and a derived seed that becomes public (the seed of uniform halves)
// reveals nothing about the master. A KeyGenerator also samples directly from streams 0 and >= 2^8 of its
// master, which no domain below uses.
namespace seed_domain {
inline constexpr std::uint64_t key_uniform = 1;        // KeyGenerator: uniform halves of keys (public)
inline constexpr std::uint64_t encryption_uniform = 2;  // Encryptor: c1 of secret-key encryptions (public)
inline constexpr std::uint64_t encryption_noise = 3;    // Encryptor: v, e0, e1, e
inline constexpr std::uint64_t decryption_flood = 4;    // Decryptor: flooding noise
}  // namespace seed_domain
math::Seed derive_seed(const math::Seed& master, std::uint64_t domain);

class RelinearizationKey {
 public:
  RelinearizationKey() = default;
  explicit RelinearizationKey(SwitchingKey key) : key_(std::move(key)) {}
  const SwitchingKey& key() const { return key_; }
  const ContextPtr& context() const { return key_.context(); }
  RelinearizationKey clone() const { return RelinearizationKey(key_.clone()); }

 private:
  SwitchingKey key_;
};

class GaloisKeys {
 public:
  GaloisKeys() = default;
  explicit GaloisKeys(ContextPtr context) : context_(std::move(context)) {}
  GaloisKeys(GaloisKeys&&) noexcept = default;
  GaloisKeys& operator=(GaloisKeys&&) noexcept = default;

  const ContextPtr& context() const { return context_; }
  void insert(std::uint32_t galois_element, SwitchingKey key);
  bool contains(std::uint32_t galois_element) const { return keys_.count(galois_element) != 0; }
  // Throws MissingKeyError naming the Galois element (and the rotation step, when `step` is given).
  const SwitchingKey& at(std::uint32_t galois_element, std::optional<std::int64_t> step = std::nullopt) const;
  std::vector<std::uint32_t> galois_elements() const;
  std::size_t size() const { return keys_.size(); }

 private:
  ContextPtr context_;
  std::map<std::uint32_t, SwitchingKey> keys_;
};

}  // namespace cerium::ckks
