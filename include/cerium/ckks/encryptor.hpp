#pragma once
// Encryption of plaintexts into fresh ciphertexts at the plaintext's level (and with its scale and slot count).
//
//  - Public key (b, a) = (-a s + e, a):  c = (v b + e0 + m, v a + e1), v uniform ternary, e0, e1 Gaussian.
//    Noise of c0 + c1 s - m: v e + e0 + e1 s.
//  - Secret key s:  c = (-a s + e + m, a), a uniform, expanded from a seed that the ciphertext records
//    (Ciphertext::c1_seed), so serialization may store the seed instead of c1. Noise: e.
// The keys live over Q_top; a plaintext at level l uses their first limbs_at(l) limbs.
//
// Randomness: each Encryptor takes a master seed E (fresh from the OS, or explicit for reproducible tests),
// derives a secret noise seed E_n = derive_seed(E, seed_domain::encryption_noise) and a public seed
// U = derive_seed(E, seed_domain::encryption_uniform) (keys.hpp), and numbers its encryptions t = 0, 1, ...:
// encryption t draws its small values from Prng(E_n, t 2^8 + j) and (secret-key mode) its c1 from
// expand_uniform(Q_l, U, t).
// Same seed, same keys and same sequence of plaintexts: the same ciphertexts. encrypt() is thread-safe (the
// counter is atomic).

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/math/chacha20.hpp"

namespace cerium::ckks {

// Encrypts plaintexts under a public key or a secret key (see the file comment for the two modes and the
// randomness). Move-only; encrypt() is thread-safe.
class Encryptor {
 public:
  // The key is copied (keys are small next to the work); a fresh OS seed, or an explicit one.
  explicit Encryptor(const PublicKey& key);
  Encryptor(const PublicKey& key, const math::Seed& seed);
  explicit Encryptor(const SecretKey& key);
  Encryptor(const SecretKey& key, const math::Seed& seed);

  // Moves hand the key, the seeds and the encryption counter over.
  Encryptor(Encryptor&&) noexcept = default;
  Encryptor& operator=(Encryptor&&) noexcept = default;

  const ContextPtr& context() const { return context_; }            // the key's
  bool uses_public_key() const { return public_key_.has_value(); }  // public-key mode (else secret-key mode)
  // How many encryptions this object has made.
  std::uint64_t encryptions() const { return counter_->load(); }

  // Throws MismatchError when the plaintext belongs to another context (or is empty).
  Ciphertext encrypt(const Plaintext& plaintext) const;

 private:
  Encryptor(ContextPtr context, const math::Seed& seed);

  ContextPtr context_;
  std::optional<PublicKey> public_key_;
  std::optional<SecretKey> secret_key_;
  math::Seed noise_seed_;
  math::Seed uniform_seed_;
  std::unique_ptr<std::atomic<std::uint64_t>> counter_;
};

// Worst-case bounds on the coefficients of the noise of a fresh encryption (what decrypt_public needs as B),
// with 19 the Gaussian's tail cut and ||s||_1 = N (uniform ternary) or h (fixed Hamming weight):
//   secret key: 19;  public key: 19 (1 + N + ||s||_1)  (|v e| <= 19 N, |e1 s| <= 19 ||s||_1, |e0| <= 19).
double fresh_noise_bound_secret_key(const Context& context);
double fresh_noise_bound_public_key(const Context& context);

}  // namespace cerium::ckks
