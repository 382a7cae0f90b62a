#pragma once
// Key types. Every key holds its context; all polynomials are in NTT form.
//
//  - SecretKey: s over Q_top u P (uniform ternary or fixed Hamming weight), with its small signed coefficients.
//  - PublicKey: (b, a) = (-a s + e, a) over Q_top.
//  - SwitchingKey from s' to s (hybrid key switching, dnum digits of alpha primes): rlwe::SwitchingKey
//    (rlwe/switching_key.hpp), seeded or expanded.
//  - RelinearizationKey: switches from s^2 to s. GaloisKeys: one switching key from sigma_k(s) to s per Galois
//    element k (rotations by r slots: k = 5^r mod 2N; conjugation: k = 2N - 1).

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/math/chacha20.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "cerium/rlwe/switching_key.hpp"
#include "cerium/rlwe/uniform.hpp"

namespace cerium::ckks {

// The RLWE key types CKKS keys are made of, under their CKKS names.
using rlwe::KeyStorage;
using rlwe::SwitchingKey;
using rlwe::expand_uniform;
using rlwe::expand_uniform_limb;
using rlwe::max_uniform_limbs;
using rlwe::max_uniform_stream;

// The secret s, in NTT form over Q_top u P, with its N coefficients (-1, 0 or 1). Move-only; clone() copies.
class SecretKey {
 public:
  SecretKey() = default;
  // MismatchError unless s is over context->key_basis() in NTT form and the N coefficients are -1, 0 or 1.
  SecretKey(ContextPtr context, ring::RnsPoly s, std::vector<std::int8_t> coefficients);
  // Moves hand the polynomial over; copies are explicit (clone).
  SecretKey(SecretKey&&) noexcept = default;
  SecretKey& operator=(SecretKey&&) noexcept = default;

  const ContextPtr& context() const { return context_; }  // null for an empty (default-made or moved) key
  // s over context()->key_basis() (Q_top u P), NTT form.
  const ring::RnsPoly& poly() const { return s_; }
  // The ternary coefficients of s.
  const std::vector<std::int8_t>& coefficients() const { return coefficients_; }
  // s over a basis whose primes all belong to key_basis() (Q_l, Q_l u P, P, ...), NTT form: the key's limbs
  // picked by prime. Throws MismatchError naming the first prime that is not in the key basis.
  ring::RnsPoly poly_over(const ring::RnsBasisPtr& basis) const;
  SecretKey clone() const;  // a deep copy

 private:
  ContextPtr context_;
  ring::RnsPoly s_;
  std::vector<std::int8_t> coefficients_;
};

// (b, a) = (-a s + e, a) over Q_top, NTT form: what an Encryptor needs to encrypt without the secret.
class PublicKey {
 public:
  PublicKey() = default;
  // MismatchError unless b and a are over the context's Q_top basis in NTT form.
  PublicKey(ContextPtr context, ring::RnsPoly b, ring::RnsPoly a);
  // Moves hand the polynomials over; copies are explicit (clone).
  PublicKey(PublicKey&&) noexcept = default;
  PublicKey& operator=(PublicKey&&) noexcept = default;

  const ContextPtr& context() const { return context_; }  // null for an empty (default-made or moved) key
  const ring::RnsPoly& b() const { return b_; }           // over Q_top, NTT form
  const ring::RnsPoly& a() const { return a_; }           // the uniform half, over Q_top, NTT form
  PublicKey clone() const;                                // a deep copy

 private:
  ContextPtr context_;
  ring::RnsPoly b_, a_;
};

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
// The seed of one domain (a seed_domain constant) of a master seed: the first 32 bytes of Prng(master, domain).
math::Seed derive_seed(const math::Seed& master, std::uint64_t domain);

// Keys are held through shared pointers so that a backend's resident copy (rlwe::SwitchingKey uploaded to a
// device) can replace one key without copying the others.
class RelinearizationKey {
 public:
  RelinearizationKey() = default;
  // MismatchError unless the key was made over the context's moduli.
  RelinearizationKey(ContextPtr context, SwitchingKey key);
  RelinearizationKey(ContextPtr context, std::shared_ptr<const SwitchingKey> key);
  const SwitchingKey& key() const { return *key_; }                               // from s^2 to s
  const std::shared_ptr<const SwitchingKey>& shared_key() const { return key_; }  // the same, shared
  const ContextPtr& context() const { return context_; }                          // null for a default-made key
  RelinearizationKey clone() const { return RelinearizationKey(context_, key_->clone()); }  // a deep copy

 private:
  ContextPtr context_;
  std::shared_ptr<const SwitchingKey> key_;
};

// Switching keys from sigma_k(s) to s by Galois element k (rotations: k = 5^r mod 2N; conjugation: k = 2N - 1),
// each held through a shared pointer.
class GaloisKeys {
 public:
  GaloisKeys() = default;
  // No keys yet: insert adds them.
  explicit GaloisKeys(ContextPtr context) : context_(std::move(context)) {}
  // Moves hand the keys over; the keys themselves are shared, never copied.
  GaloisKeys(GaloisKeys&&) noexcept = default;
  GaloisKeys& operator=(GaloisKeys&&) noexcept = default;

  const ContextPtr& context() const { return context_; }  // null for default-made keys
  // Adds (or replaces) the key of one Galois element. MismatchError for an empty key or one made over other
  // moduli; InvalidArgument unless the element is odd and below 2N.
  void insert(std::uint32_t galois_element, SwitchingKey key);
  void insert(std::uint32_t galois_element, std::shared_ptr<const SwitchingKey> key);
  bool contains(std::uint32_t galois_element) const { return keys_.count(galois_element) != 0; }  // a key is held
  // Throws MissingKeyError naming the Galois element (and the rotation step, when `step` is given).
  const SwitchingKey& at(std::uint32_t galois_element, std::optional<std::int64_t> step = std::nullopt) const {
    return *shared_at(galois_element, step);
  }
  const std::shared_ptr<const SwitchingKey>& shared_at(std::uint32_t galois_element,
                                                       std::optional<std::int64_t> step = std::nullopt) const;
  std::vector<std::uint32_t> galois_elements() const;  // the elements held, in increasing order
  std::size_t size() const { return keys_.size(); }      // keys held

 private:
  ContextPtr context_;
  std::map<std::uint32_t, std::shared_ptr<const SwitchingKey>> keys_;
};

// Keys where a backend computes (backend.resident of each switching key): the same object when every key is
// there already, else a copy that shares the keys that were.
template <class Backend>
std::shared_ptr<const RelinearizationKey> resident(const Backend& backend,
                                                   std::shared_ptr<const RelinearizationKey> key) {
  if (key == nullptr) return key;
  auto switching = backend.resident(key->shared_key());
  if (switching == key->shared_key()) return key;
  return std::make_shared<const RelinearizationKey>(key->context(), std::move(switching));
}

// The same for Galois keys, key by key: the keys already there are shared, not copied.
template <class Backend>
std::shared_ptr<const GaloisKeys> resident(const Backend& backend, std::shared_ptr<const GaloisKeys> keys) {
  if (keys == nullptr) return keys;
  auto out = std::make_shared<GaloisKeys>(keys->context());
  bool moved = false;
  for (const auto element : keys->galois_elements()) {
    const auto& held = keys->shared_at(element);
    auto placed = backend.resident(held);
    moved = moved || placed != held;
    out->insert(element, std::move(placed));
  }
  return moved ? std::shared_ptr<const GaloisKeys>(std::move(out)) : keys;
}

// key_switch_noise_bound (rlwe/key_switch.hpp) for the secret these parameters draw (||s||_1 = N for a uniform
// ternary secret, h for a fixed Hamming weight h).
double key_switch_noise_bound(const Context& context, int level);

}  // namespace cerium::ckks
