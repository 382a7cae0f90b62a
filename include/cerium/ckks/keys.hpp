#pragma once
// Key types. Every key holds its context; all polynomials are in NTT form.
//
//  - SecretKey: s over Q_top u P (uniform ternary or fixed Hamming weight), with its small signed coefficients.
//  - PublicKey: (b, a) = (-a s + e, a) over Q_top.
//  - SwitchingKey from s' to s (hybrid key switching, dnum digits of alpha primes, alpha special primes P):
//    digit d is (b_d, a_d) = (-a_d s + e_d + P g_d s', a_d) over Q_top u P, with the gadget
//    g_d = (Q / Q_d) [(Q / Q_d)^{-1}]_{Q_d} for the digit's primes Q_d. The uniform halves a_d may be kept as a
//    seed only (KeyStorage::seeded), halving key memory; they are expanded where they are used.
//  - RelinearizationKey: switches from s^2 to s. GaloisKeys: one switching key from sigma_k(s) to s per Galois
//    element k (rotations by r slots: k = 5^r mod 2N; conjugation: k = 2N - 1).

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/context.hpp"
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

 private:
  ContextPtr context_;
  std::vector<std::array<ring::RnsPoly, 2>> digits_;
  KeyStorage storage_ = KeyStorage::expanded;
  std::optional<math::Seed> seed_;
  std::uint64_t base_stream_ = 0;
};

// The uniform polynomial that stream `stream` of `seed` expands to over `basis`, directly in NTT form: how seeded
// keys and seeded ciphertexts regenerate their uniform halves.
ring::RnsPoly expand_uniform(const ring::RnsBasisPtr& basis, const math::Seed& seed, std::uint64_t stream);

class RelinearizationKey {
 public:
  RelinearizationKey() = default;
  explicit RelinearizationKey(SwitchingKey key) : key_(std::move(key)) {}
  const SwitchingKey& key() const { return key_; }
  const ContextPtr& context() const { return key_.context(); }

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
