#pragma once
// CKKS parameter sets: the configuration a user writes, and the validated parameters with their primes.
//
// Modulus layout (limb order): the base primes (level 0, which holds the integer part of results), then
// `level_width` primes per level up to `levels`. A ciphertext at level l has base_primes + level_width * l limbs;
// a rescale divides by the level's primes (scale 2^(level_prime_bits * level_width), e.g. 2^56 from two 28-bit
// primes). Optionally the lowest `narrow_levels` levels have one prime each, near 2^narrow_prime_bits: twice the
// levels for the same bits of modulus where a scale of about 2^30 is precise enough (a bootstrappable preset's
// application levels, between bootstraps). Their primes are chosen from the top narrow level down, each the
// NTT prime nearest the chain's scale there (Delta_(l-1) = Delta_l^2 / q_l, from 2^narrow_prime_bits at the top
// narrow level), so that products rescaled level after level stay at their default scales
// (default_scale_at) instead of drifting by a factor that doubles in the exponent at every level. Hybrid key switching uses `dnum` digits of alpha = ceil(top limbs / dnum) primes and alpha special
// primes P; a lower level uses only the digits its limbs need, so its effective dnum shrinks with the level.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cerium/ckks/security.hpp"

namespace cerium::ckks {

// The parameter set a user writes (see the file comment for the modulus layout); Parameters validates it and
// generates the primes. presets:: holds ready-made ones.
struct CkksConfig {
  int log_n = 14;                 // ring degree N = 2^log_n, 10 <= log_n <= 17 (smaller only with insecure_opt_out)
  int levels = 4;                 // rescales available above the base
  int level_width = 2;            // primes per level: 1 or 2
  int level_prime_bits = 28;      // each level prime lies near 2^level_prime_bits
  int base_primes = 2;            // primes of level 0
  int base_prime_bits = 31;       // base primes are the largest NTT primes below 2^base_prime_bits
  int dnum = 3;                   // key-switching digits at the top level
  int special_prime_bits = 31;    // special primes are at least as large as digit primes, to bound noise
  SecretDistribution secret = SecretDistribution::uniform_ternary;  // how s is drawn
  int hamming_weight = 0;         // nonzeros of a fixed-Hamming-weight secret
  SecurityLevel security = SecurityLevel::classical128;  // the target that log2(QP) is checked against
  // Skips the security verdict: toy parameters for tests. The choice is logged at warn level on creation.
  bool insecure_opt_out = false;
  int narrow_levels = 0;       // levels 1 .. narrow_levels have one prime each (see the file comment)
  int narrow_prime_bits = 30;  // their scale: the top narrow level's is 2^narrow_prime_bits
};

// A validated CkksConfig with its primes: Q's (base first, then level by level) and the special primes P.
// Immutable; equal when their fingerprints are.
class Parameters {
 public:
  // Generates the primes and validates everything; ParameterError names the field and what to change,
  // SecurityError gives the bound and the actual log2(QP).
  explicit Parameters(const CkksConfig& config);

  const CkksConfig& config() const { return config_; }                         // as given
  int log_n() const { return config_.log_n; }                                  // log2(N)
  std::size_t ring_degree() const { return std::size_t{1} << config_.log_n; }  // N
  std::size_t max_slots() const { return ring_degree() / 2; }                  // N/2
  int max_level() const { return config_.levels; }                             // the top level (config().levels)
  int level_width() const { return config_.level_width; }                      // primes per wide level
  int narrow_levels() const { return config_.narrow_levels; }  // levels 1 .. narrow_levels() have one prime
  // Primes a rescale at `level` (1 <= level <= max_level()) divides by: 1 for a narrow level, else level_width().
  int primes_at(int level) const;
  // Limbs of a ciphertext at level l (0 <= l <= max_level()).
  std::size_t limbs_at(int level) const;
  // The level a limb count belongs to (InvalidArgument when it is none).
  int level_of(std::size_t limbs) const;

  std::span<const std::uint32_t> q_primes() const { return q_primes_; }  // all of Q, base first
  std::span<const std::uint32_t> p_primes() const { return p_primes_; }  // special primes
  std::size_t alpha() const { return p_primes_.size(); }                  // primes per key-switching digit
  // Key-switching digits a ciphertext at `level` uses: ceil(limbs_at(level) / alpha()).
  std::size_t digits_at(int level) const { return (limbs_at(level) + alpha() - 1) / alpha(); }

  // 2^(level_prime_bits * level_width): the scale fresh encodings get by default.
  double default_scale() const;
  // The default scale of a plaintext or ciphertext at `level`: default_scale() at a wide level (and at level 0
  // without narrow levels), the narrow chain's scale at a narrow level or at level 0 below one (see the file
  // comment). LevelError for a level that does not exist.
  double default_scale_at(int level) const;
  double log_modulus() const { return log_q_ + log_p_; }  // log2(QP)
  double log_q() const { return log_q_; }                  // log2(Q): the ciphertext modulus at the top level
  double log_p() const { return log_p_; }                  // log2(P): the special primes
  const SecurityVerdict& security() const { return verdict_; }  // the verdict; failed only under insecure_opt_out
  // A 64-bit fingerprint of everything that defines the parameters (primes included).
  std::uint64_t fingerprint() const { return fingerprint_; }
  // One line for logs and error messages.
  std::string describe() const;

  // By fingerprint: the same primes and layout.
  friend bool operator==(const Parameters& a, const Parameters& b) { return a.fingerprint_ == b.fingerprint_; }

 private:
  CkksConfig config_;
  std::vector<std::uint32_t> q_primes_, p_primes_;
  std::vector<double> narrow_scales_;  // the narrow chain's scale at levels 0 .. narrow_levels
  double log_q_ = 0, log_p_ = 0;
  SecurityVerdict verdict_;
  std::uint64_t fingerprint_ = 0;
};

// Named presets that meet 128-bit security with a uniform ternary secret, scale 2^56 (two 28-bit primes per
// level) and 62 bits of base modulus.
namespace presets {
CkksConfig leveled_n14();  // N = 2^14,  4 levels, dnum 3
CkksConfig leveled_n15();  // N = 2^15, 11 levels, dnum 4
CkksConfig leveled_n16();  // N = 2^16, 24 levels, dnum 5
// Bootstrappable (see boot/bootstrapper.hpp): N = 2^16, 25 levels, dnum 6, log2(QP) about 1741 (within
// 1747, 128-bit classical). The default BootstrapConfig spends 16 levels and returns at level 9; bootstrapping
// again needs level 1, so 8 levels of scale 2^56 are the application's.
CkksConfig bootstrappable_n16();
// The same modulus budget with the application's levels narrow (CkksConfig::narrow_levels): N = 2^16, the
// bootstrapper's 16 levels of 2^56 above 16 levels of one ~30-bit prime each, dnum 6, 128-bit classical: 15
// levels between bootstraps instead of 8, each value at a scale of about 2^30 (about 15-17 bits after a few
// products at N = 2^16 instead of about 20: for models that need fewer bits and many levels).
CkksConfig bootstrappable_n16_narrow();
// Toy bootstrapping parameters for tests: the same level structure at a small N (insecure: insecure_opt_out set),
// `levels` levels (16 for the default BootstrapConfig plus what the test needs), dnum 4.
CkksConfig bootstrappable_toy(int log_n, int levels = 18);
}  // namespace presets

}  // namespace cerium::ckks
