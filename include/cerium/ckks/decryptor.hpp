#pragma once
// Decryption: m + e = c0 + c1 s (+ c2 s^2 for a 3-part ciphertext), at the ciphertext's level, with its scale
// and slot count, as a Plaintext in NTT form.
//
// Public decryption (IND-CPA-D). Li and Micciancio (EUROCRYPT 2021) showed that publishing m + e lets anyone
// who holds the ciphertext solve for the secret key; Guo et al. (USENIX Security 2024) showed that flooding
// sized from average-case (rather than worst-case) noise estimates is still attackable. decrypt_public therefore
// adds fresh Gaussian noise to every coefficient, of standard deviation
//
//     sigma_flood = 2^(statistical_security / 2) * sqrt(query_budget) * B,
//
// where B is a WORST-CASE bound on the infinity norm of the ciphertext's noise coefficients (not an estimate).
//  - Why this works: two flooded results whose noises differ by a shift of at most B per coefficient are
//    Gaussians of std sigma_flood with means at most B apart; over q decryptions the divergence between them
//    (KL, or Renyi in the bit-security framework of Micciancio-Walter used by Li, Micciancio, Schultz and Sorrell,
//    CRYPTO 2022) grows as q B^2 / sigma_flood^2 = 2^-statistical_security. That paper's bound carries a further
//    small constant factor; the formula here is the one this project fixed.
//  - Assumption: the bound is per coefficient. The divergences of the N coefficients of one decryption also
//    add up; whoever wants the guarantee for whole polynomials in the plain statistical-distance sense should add
//    log2(N) to statistical_security.
//  - Query budget: the number of decryptions whose results are published, of ciphertexts that are related
//    (computed from the same secret key, e.g. repeated or derived ciphertexts of one computation). Each
//    decrypt_public call spends one; the Decryptor counts its calls and logs a warning past the budget of the
//    call. The default covers 2^10 decryptions at 30 bits (sigma_flood = 2^20 B).
// B comes from the caller: a ciphertext does not record its noise. fresh_noise_bound_*_key (encryptor.hpp) and
// key_switch_noise_bound (key_switch.hpp) give worst-case bounds for the basic steps.
//
// Sampling the flood: for each coefficient, X = round(sigma_main z0) + round(sigma_fine z1), where (z0, z1) is one
// Box-Muller pair of standard normals in double precision driven by ChaCha20 (two 53-bit uniforms per pair),
// sigma_fine = sigma_flood 2^-24 and sigma_main^2 + sigma_fine^2 = sigma_flood^2. A rounded continuous Gaussian
// is acceptable for a flood this wide (sigma_flood >= 2^15 B): its divergence from the discrete Gaussian is far
// below 2^-statistical_security. The fine term smooths the granularity of sigma_main z0 in double precision
// (about sigma_flood 2^-49) so the sum covers every integer. The tail is cut where the 53-bit uniform is at its
// smallest (|z| <= 8.6, mass about 2^-57). Call i of a Decryptor draws from Prng(F, i), with
// F = derive_seed(seed, seed_domain::decryption_flood). The noise is secret: it is added to the residues without
// branches, but libm's log, sqrt, sin, cos and llround are not guaranteed to run in constant time.

#include <atomic>
#include <cstdint>
#include <memory>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/math/chacha20.hpp"

namespace cerium::ckks {

// The parameters of decrypt_public's flood (see the file comment): sigma_flood = 2^(s/2) sqrt(q) B.
struct NoiseFlooding {
  double noise_bound = 0;                          // B > 0: worst-case |noise coefficient| of the ciphertext
  int statistical_security = 30;                   // s, in bits: 1 .. 128
  std::uint64_t query_budget = std::uint64_t{1} << 10;  // q >= 1: related decryptions covered
};

// 2^(s/2) sqrt(q) B. Throws InvalidArgument for B <= 0 (or not finite), s outside 1..128, or q = 0.
double flooding_sigma(const NoiseFlooding& flooding);

// Decrypts with a copy of the secret key: decrypt for the key's owner, decrypt_public for results that are
// published (flooded, see the file comment). Move-only; its calls are thread-safe.
class Decryptor {
 public:
  // The key is copied. Flooding noise comes from a fresh OS seed, or from an explicit one (reproducible tests).
  explicit Decryptor(const SecretKey& key);
  Decryptor(const SecretKey& key, const math::Seed& flood_seed);

  // Moves hand the key and the call counter over.
  Decryptor(Decryptor&&) noexcept = default;
  Decryptor& operator=(Decryptor&&) noexcept = default;

  const ContextPtr& context() const { return key_.context(); }  // the key's

  // Throws MismatchError for a ciphertext of another context (or an empty one).
  Plaintext decrypt(const Ciphertext& ciphertext) const;
  // decrypt() plus the flood above. Throws InvalidArgument for invalid flooding parameters and LevelError when
  // the flood (9 sigma_flood + B) does not fit in half of Q_level: decrypt at a higher level, or with fewer
  // queries or less statistical security.
  Plaintext decrypt_public(const Ciphertext& ciphertext, const NoiseFlooding& flooding) const;
  // decrypt_public calls so far (thread-safe).
  std::uint64_t public_decryptions() const { return counter_->load(); }

 private:
  SecretKey key_;
  math::Seed flood_seed_;
  std::unique_ptr<std::atomic<std::uint64_t>> counter_;
};

}  // namespace cerium::ckks
