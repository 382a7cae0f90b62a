#pragma once
// How likely a bootstrap is to fail. ModRaise turns the plaintext into t = m + q0 I (I an integer per
// coefficient) and EvalMod's sine covers |I| <= K only (BootstrapConfig::k_range): a coefficient with |I| > K comes
// out as garbage, and SlotToCoeff spreads it over every slot.
//
// The model. Under a secret with h nonzero (+-1) coefficients, coefficient k of c1 s is a sum of h independent
// uniforms on [-q0/2, q0/2) (c1 uniform mod q0, centered), and c0 is the centered remainder of m + e - c1 s. So
// I = round(S_h) up to m + e << q0, with S_h the sum of h independent uniform[-1/2, 1/2]: P(I = i) is the
// Irwin-Hall density f_(h+1)(i), and P(|I| > K) = P(|S_h| > K + 1/2), which is 0 for K >= h / 2. (Treating c0 as
// one more independent uniform gives the usual P(|S_(h+1)| > K), slightly larger.) The coefficients of one
// ciphertext are not independent; the per-bootstrap figure is the union bound over the 2 * slots coefficients
// EvalMod reads (N for full slots). EvalMod's series often stays accurate somewhat beyond K (the default degree 31
// with 4 double angles up to |I| = 22), so these are upper bounds.

#include <cstddef>
#include <optional>

#include "cerium/boot/bootstrap_config.hpp"
#include "cerium/ckks/parameters.hpp"

namespace cerium::boot {

// log2 P(|S_n| > x), S_n the sum of n independent uniforms on [-1/2, 1/2], exactly (the Irwin-Hall CDF from the
// B-spline recurrence in long double: positive terms only, no cancellation); -infinity where it is 0 or below long
// double's range. nullopt when that takes more than about 2^25 steps (n times (n/2 - x), e.g. a dense secret at
// N = 2^16), where the Gaussian approximation is the one to use.
std::optional<double> irwin_hall_tail_log2(int n, double x);
// log2 P(|Z| > x) for Z normal with S_n's variance n / 12.
double gaussian_tail_log2(int n, double x);

// The failure odds of a bootstrap under the header comment's model, as base-2 logarithms (0: certain failure).
struct FailureProbability {
  int hamming_weight = 0;            // h of the secret ModRaise runs under
  bool dense_secret = false;         // uniform ternary without encapsulation: h is its expected weight 2N/3
  int k_range = 0;                   // K
  std::size_t coefficients = 0;      // those EvalMod reads
  bool exact = false;                // the Irwin-Hall figures below are exact; else they repeat the Gaussian ones
  double per_coefficient_log2 = 0;   // log2 P(|I| > K)
  double per_bootstrap_log2 = 0;     // log2 min(1, coefficients * P(|I| > K))
  double gaussian_per_coefficient_log2 = 0;  // the same from the Gaussian approximation, for comparison
  double gaussian_per_bootstrap_log2 = 0;    // likewise per bootstrap
};

// The odds for a secret of Hamming weight h = hamming_weight, K = k_range and `coefficients` read by EvalMod;
// InvalidArgument for a value below 1.
FailureProbability failure_probability(int hamming_weight, int k_range, std::size_t coefficients);
// h from the config (ephemeral_hamming_weight under sparse encapsulation) or the parameters' secret.
FailureProbability failure_probability(const ckks::Parameters& parameters, const BootstrapConfig& config);

}  // namespace cerium::boot
