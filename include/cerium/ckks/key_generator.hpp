#pragma once
// Key generation: a secret key, and the public, relinearization, Galois and general switching keys derived
// from it (the key layouts are those of keys.hpp).
//
// Randomness. A generator holds one 256-bit master seed M: fresh from the operating system, or given explicitly
// (tests, reproducible set-ups). Everything is a deterministic function of M and the key's identity, not of
// the order of calls: the secret key, and for each key its errors and uniform halves. Concretely
//  - the secret's coefficients come from Prng(M, 0);
//  - uniform halves come from a public seed U = derive_seed(M, seed_domain::key_uniform) (U reveals nothing
//    about M, and U is what a seeded key stores), through expand_uniform(basis, U, key_stream(id) + digit);
//  - errors come from Prng(M, key_stream(id) + digit).
// Key identities: the public key 1, the relinearization key 2, the Galois key of element k 2^20 + k, and the
// t-th general switching_key() of this generator 2^32 + t. key_stream(id) = id * 2^8, so every (seed, stream)
// pair serves one purpose. Consequence of determinism: two generators with the same explicit seed (and the same
// secret) produce the same keys; an explicit seed must therefore never be reused for different secrets, and
// general switching keys are numbered per generator object.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/core/progress.hpp"
#include "cerium/math/chacha20.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "cerium/rlwe/switching_key.hpp"

namespace cerium::ckks {

// Makes a secret key (or takes one) and derives keys from it, deterministically from its master seed (see the
// file comment). Move-only.
class KeyGenerator {
 public:
  // A fresh secret key from a fresh OS seed.
  explicit KeyGenerator(ContextPtr context);
  // Deterministic: the same seed gives the same secret and the same key words on every run and machine.
  KeyGenerator(ContextPtr context, const math::Seed& seed);
  // More keys for an existing secret key; errors and uniform halves from `seed` (fresh from the OS if absent).
  explicit KeyGenerator(SecretKey secret_key, std::optional<math::Seed> seed = std::nullopt);

  // Moves hand the secret, the seeds and the switching-key counter over.
  KeyGenerator(KeyGenerator&&) noexcept = default;
  KeyGenerator& operator=(KeyGenerator&&) noexcept = default;

  const ContextPtr& context() const { return context_; }   // the secret's
  const SecretKey& secret_key() const { return secret_; }  // s: what a Decryptor is made from
  // The public seed of every uniform half this generator makes (what seeded keys store).
  const math::Seed& uniform_seed() const { return uniform_seed_; }

  // (b, a) = (-a s + e, a) over Q_top.
  PublicKey public_key() const;
  // Switches s^2 to s.
  RelinearizationKey relinearization_key(KeyStorage storage = KeyStorage::expanded) const;
  // One switching key from sigma_k(s) to s per distinct Galois element k among the rotations
  // (k = 5^step mod 2N; steps are taken mod N/2, so 3 and 3 + N/2 share a key) and, when `conjugation` is set,
  // k = 2N - 1. Step 0 (the identity) needs no key and gets none. `progress` hears once per key.
  GaloisKeys galois_keys(std::span<const std::int64_t> rotation_steps, bool conjugation = false,
                         KeyStorage storage = KeyStorage::expanded, ProgressCallback progress = {}) const;
  GaloisKeys galois_keys(std::initializer_list<std::int64_t> rotation_steps, bool conjugation = false,
                         KeyStorage storage = KeyStorage::expanded, ProgressCallback progress = {}) const {
    return galois_keys(std::span<const std::int64_t>(rotation_steps.begin(), rotation_steps.size()), conjugation,
                       storage, std::move(progress));
  }
  // The switching key from sigma_k(s) to s for one Galois element k (odd, below 2N).
  SwitchingKey galois_key(std::uint32_t galois_element, KeyStorage storage = KeyStorage::expanded) const;
  // The distinct Galois elements galois_keys makes keys for, ascending (the order it makes them in).
  static std::vector<std::uint32_t> galois_elements(std::span<const std::int64_t> rotation_steps, bool conjugation,
                                                    std::size_t ring_degree);
  // The seeds and streams the relinearization key and the Galois key of an element are drawn from (what
  // rlwe::make_switching_key is given): a maker of the same keys elsewhere (ckks/backend_keys.hpp, on a device)
  // makes the same words from them.
  rlwe::SwitchingKeyDraw relinearization_draw(KeyStorage storage = KeyStorage::expanded) const;
  rlwe::SwitchingKeyDraw galois_draw(std::uint32_t galois_element, KeyStorage storage = KeyStorage::expanded) const;
  // A switching key from any secret s' (over context()->key_basis(), NTT form) to this generator's s. Each call
  // is a distinct key with its own streams (the counter is per generator object).
  SwitchingKey switching_key(const ring::RnsPoly& from_secret, KeyStorage storage = KeyStorage::expanded);

 private:
  SwitchingKey make_switching_key(const ring::RnsPoly& from_secret, std::uint64_t id, KeyStorage storage) const;
  rlwe::SwitchingKeyDraw draw(std::uint64_t id, KeyStorage storage) const;

  ContextPtr context_;
  math::Seed master_seed_;
  math::Seed uniform_seed_;
  SecretKey secret_;
  std::uint64_t general_keys_ = 0;
};

}  // namespace cerium::ckks
