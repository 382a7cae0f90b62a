#pragma once
// Scale rules of the evaluator: when two tracked scales count as equal, how far a scale may grow at a level, and
// how scales are printed in messages.
//
// Scales are tracked exactly as doubles (like OpenFHE's FLEXIBLEAUTO): a product multiplies them, a rescale divides
// by the product of the level's primes. Two operands of an addition must carry the same scale, or the result is
// silently wrong by the ratio. "The same" is this rule, with its justification:
//
//   scales_match(a, b)  <=>  |a - b| <= max(1, 2^-48 max(a, b))
//
//  - Treating b as a changes the decoded message m by |m| |a - b| / a. An absolute difference of at most 1 (one unit
//    of the scaled integer domain) is below the rounding that encoding and every rescale already add (1/2 per
//    coefficient, of order sqrt(N) / 2 in the slots). This is the case the evaluator creates itself when it aligns
//    a scale by multiplying with the integer k = round(target P / scale) and rescaling by P: the result is off by at
//    most scale / (2 P), which is 1/2 when scale and P are about equal.
//  - The relative 2^-48 absorbs the round-off of tracking scales in doubles (2^-53 per multiply or rescale: 32
//    roundings fit). Its effect, 2^-48 |m|, is at or below the encryption noise of a scale of 2^56 at N >= 2^12.
//  - Genuinely different scales stay apart: level primes differ from each other by multiples of 2N, so scales that
//    went through different rescales differ by a relative 2^-40 or more (2^-30 and above is typical).

#include <string>

namespace cerium::ckks {

// Relative tolerance of scales_match (see above).
inline constexpr double scale_match_relative = 0x1p-48;

// Two tracked scales that the evaluator treats as one (see above).
bool scales_match(double a, double b);

// "2^55.999 (7.2e16)": a scale for messages.
std::string format_scale(double scale);

// What is wrong with a ciphertext's or plaintext's scale at a level whose modulus has log2_modulus bits: not
// finite, below 1 (a message scaled down to nothing), or not below the modulus (nothing left for the message);
// empty when it is fine. One rule for every place a scale enters (constructors, loading, rescaling).
std::string scale_problem(double scale, double log2_modulus);

}  // namespace cerium::ckks
