#pragma once
// The keys bootstrapping needs: relinearization, the Galois keys of exactly its rotations (and conjugation), and
// for sparse-secret encapsulation the switching keys between the secret s and an ephemeral sparse secret s'.
//
// Security of encapsulation: the key from s to s' is an RLWE sample under the sparse s', so it only holds the
// limbs of level 0 and P (Q_0 P, the modulus it is used at); every other limb is zero. The key from s' back to s
// is an ordinary key under the dense s.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "cerium/ckks/key_generator.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/core/progress.hpp"
#include "cerium/math/chacha20.hpp"

namespace cerium::boot {

// The keys of one bootstrapper (BasicBootstrapper::generate_keys); the encapsulation keys are absent without
// sparse encapsulation.
struct BootstrapKeys {
  std::shared_ptr<const ckks::RelinearizationKey> relinearization;  // for EvalMod's ciphertext products
  std::shared_ptr<const ckks::GaloisKeys> galois;                   // its rotation steps and the conjugation
  std::optional<ckks::SwitchingKey> to_sparse;                      // s -> s', level 0 limbs and P only
  std::optional<ckks::SwitchingKey> from_sparse;                    // s' -> s
  // Bytes of every key polynomial stored (seeded halves count zero).
  std::size_t memory_bytes() const;
};

// What generate_bootstrap_keys makes; BasicBootstrapper::generate_keys fills it in from its config.
struct BootstrapKeyRequest {
  std::span<const std::int64_t> rotation_steps;           // the Galois keys' steps (the conjugation's key comes too)
  bool sparse_encapsulation = true;                       // make to_sparse and from_sparse
  int ephemeral_hamming_weight = 32;                      // h of the ephemeral secret s'
  ckks::KeyStorage storage = ckks::KeyStorage::expanded;  // seeded: the uniform halves as their seed
  // Seed of the ephemeral secret and of the encapsulation keys' randomness; fresh from the OS when absent.
  std::optional<math::Seed> seed;
  // Make the relinearization and Galois keys too (false: the encapsulation keys only, for a caller that makes
  // the others where it computes: ckks/backend_keys.hpp).
  bool relinearization_and_galois = true;
};

// The progress callback hears "galois keys" once per key, then "encapsulation keys".
BootstrapKeys generate_bootstrap_keys(const ckks::KeyGenerator& keygen, const BootstrapKeyRequest& request,
                                      ProgressCallback progress = {});

// Bytes of a switching key's stored polynomials.
std::size_t switching_key_bytes(const ckks::SwitchingKey& key);

}  // namespace cerium::boot
