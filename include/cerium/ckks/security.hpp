#pragma once
// The security check of CKKS parameter sets: the largest log2(QP) that ring degree N allows at a target security
// level, for secrets drawn uniformly from {-1, 0, 1}.
//
// The 128-bit row for N = 2^12 .. 2^17 is that of the HomomorphicEncryption.org standard as updated by the
// security guidelines of eprint 2024/463 (106, 214, 430, 868, 1747, 3523). The 192- and 256-bit rows, and the
// 128-bit bounds for N = 2^10, 2^11, are the 2018 standard's (ternary, classical), each lowered by the ratio
// between the updated and the 2018 128-bit bound at the same N (rounded down), so that they are never laxer than
// the update; at N = 2^17, where the 2018 tables stop, they are twice the N = 2^16 bound lowered by that ratio.
// Sparse (fixed Hamming weight) secrets are weaker than the table assumes and are never judged compliant.

#include <optional>
#include <string>

namespace cerium::ckks {

// A target security level, in bits against classical attacks (the value is the bit count).
enum class SecurityLevel { classical128 = 128, classical192 = 192, classical256 = 256 };

// How the secret's coefficients are drawn: uniformly from {-1, 0, 1}, or with a fixed number of nonzeros (never
// judged compliant: see the file comment).
enum class SecretDistribution { uniform_ternary, hamming_weight };

// Largest log2(QP) for ring degree 2^log_n at the level, nullopt where the tables have no entry (log_n < 10 or
// > 17).
std::optional<int> max_log_modulus(int log_n, SecurityLevel level);

// What check_security found.
struct SecurityVerdict {
  bool compliant = false;   // a uniform ternary secret and log2(QP) within the tabulated bound for N
  std::string explanation;  // the bound, the actual log2(QP) and, when not compliant, what to change
};

// Judges a parameter set: ring degree 2^log_n, total modulus log2(QP) (special primes included), secret kind.
SecurityVerdict check_security(int log_n, double log_modulus, SecretDistribution secret, SecurityLevel level);

}  // namespace cerium::ckks
