#pragma once
// What a bootstrapper does and with how many levels. See bootstrapper.hpp for the pipeline.

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "cerium/circuits/hoisting.hpp"

namespace cerium::boot {

// The choices behind a bootstrapper: its slots, each stage's levels, EvalMod's series and range, the message
// bound, the encapsulation, the output scale and what is cached.
struct BootstrapConfig {
  // Slots of the ciphertexts to bootstrap: 0 means N/2 (full slots); otherwise a power of two below N/2
  // (sparse packing: a SubSum of log2(N / (2 slots)) rotations comes first).
  std::size_t slots = 0;
  // Levels spent by the homomorphic DFTs; more levels mean fewer rotations (at most log2(slots) each).
  int coeff_to_slot_levels = 3;
  int slot_to_coeff_levels = 3;
  // EvalMod: a Chebyshev series of this degree for cos(2 pi (K x - 1/4) / 2^r) on [-1, 1], then r double-angle
  // steps. Levels: ceil(log2(degree + 1)) + 1 + r.
  int eval_mod_degree = 31;
  int double_angle_steps = 4;
  // K: the raised plaintext is m + q0 I with |I| < K. With an ephemeral secret of Hamming weight h,
  // |I| <= (1 + h) / 2 always, so K = 17 never fails for h = 32.
  int k_range = 17;
  // log2(q0 / scale) at ModRaise: the message is brought this far below the base modulus q0 first (one level),
  // trading the sine's cubic error (smaller for larger ratios) against EvalMod's noise (amplified by the ratio,
  // and by sqrt(slots) in SlotToCoeff). The cubic error depends on the message's polynomial coefficients, about
  // |slot values| / sqrt(slots), so more slots allow a smaller ratio. 0 means automatic:
  // clamp(round(12.5 - log2(slots) / 2), 5, 12), i.e. 5 at 2^15 slots, 8 at 2^10, 11 at 8.
  int message_ratio_bits = 0;
  // The largest |slot value| the bootstrap is made for. The sine of EvalMod is accurate only while the message's
  // integer representation stays far below q0, so values beyond about 2 come out wrong; a bound M brings the
  // message M times further below q0 (the same integers as values up to 1), and the error grows M-fold with it.
  // graph::required_message_bound(plan) says what a planned program needs. Measured at N = 2^16, 16384 slots
  // (ratio 6), values 12 + 2.6u: bound 1 gives -1.4 bits, 64 gives 10.5 bits, 256 gives 12.9 bits.
  double message_bound = 1;
  // Sparse-secret encapsulation: switch to an ephemeral secret of this Hamming weight at level 0 and back at the
  // top, so that K stays small with a dense secret.
  bool sparse_encapsulation = true;
  int ephemeral_hamming_weight = 32;
  // Scale of the bootstrapped ciphertext; 0 means parameters().default_scale_at(the output level).
  double output_scale = 0;
  // Sparse slots (at most N/4): EvalMod once instead of twice. CoeffToSlot's last level writes its result into the
  // lower half of 2 slots values (the upper half zero, by masked diagonals: no extra level), the imaginary half is
  // rotated into the upper half, EvalMod runs on the joined 2 slots values, and SlotToCoeff's first level reads
  // both halves back as real + i imaginary (twice its diagonals). Ignored at N/2 slots, which have no free half.
  bool join_halves = false;
  // Keep the DFT diagonals as plaintexts (fast, memory: one plaintext per diagonal and level) or encode each
  // diagonal when it is used (slow, memory: n complex values per diagonal).
  bool cache_plaintexts = true;
  // How CoeffToSlot and SlotToCoeff share their key switches: automatic is double hoisting (one ModDown per
  // giant step and one per transform, rather than one per rotation); single keeps a ModDown per rotation.
  circuits::Hoisting transform_hoisting = circuits::Hoisting::automatic;
};

// The message_ratio_bits that 0 stands for at this many slots: clamp(round(12.5 - log2(slots) / 2), 5, 12).
inline int automatic_message_ratio_bits(std::size_t slots) {
  const double automatic = std::round(12.5 - std::log2(static_cast<double>(slots)) / 2);
  return static_cast<int>(std::clamp(automatic, 5.0, 12.0));
}

}  // namespace cerium::boot
