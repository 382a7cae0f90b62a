#pragma once
// Hybrid key switching (Han-Ki 2020 / Kim et al.) over an RLWE context, for any scheme's keys, split so that
// rotations can share work (hoisting):
//
//   1. decompose_and_mod_up(c): c (NTT form over Q_l) -> for each digit d, [c]_{Q_d} extended to Q_l u P
//      (inverse NTT of the digit's limbs, fast basis conversion, forward NTT of the new limbs). The expensive step.
//   2. key_switch_apply(digits, key, automorphism): sum_d sigma(digit_d) * (b_d, a_d) over Q_l u P (the inner
//      product, key_switch_inner_product), then ModDown by P to Q_l (rounding). An automorphism sigma applied to
//      the digits (a permutation in NTT form) lets one ModUp serve many rotations: sigma(ModUp(c)) = ModUp(sigma(c)).
//
// The result (d0, d1) satisfies d0 + d1 s = c s' + e (or sigma(c) s' + e), with s' the key's source secret.
//
// Level l uses the key's limbs of Q_l u P (its first limbs_at(l) limbs and its P limbs, by index: no copies) and
// its first digit_count(l) digits: the gadget g_d is 1 modulo the digit's primes and 0 modulo the other primes
// of Q, so it is also the gadget of the digits of Q_l. The inner product sums all digits in 128 bits and reduces
// once per coefficient. For seeded keys, a_d is expanded limb by limb as it is read.
//
// Hoisting is exact in the ring but not word for word: ModUp's fast conversion returns [c]_{Q_d} + u Q_d with
// 0 <= u < alpha, and an automorphism negates coefficients, so sigma(ModUp(c)) and ModUp(sigma(c)) may differ by
// small multiples of Q_d. Both are valid lifts; the two results decrypt to values that differ by at most
// 2 * key_switch_noise_bound (in practice the same order as one key switch's noise).

#include <array>
#include <span>
#include <vector>

#include "cerium/ring/automorphism.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "cerium/rlwe/context.hpp"
#include "cerium/rlwe/switching_key.hpp"

namespace cerium::rlwe {

// The ModUp of every digit of a polynomial at one level: digits[d] over context.qp_basis(level), NTT form.
struct DecomposedPoly {
  int level = 0;                      // l: the digits are over Q_l u P
  std::vector<ring::RnsPoly> digits;  // one per digit of Q_l
};

// Step 1 (see the file comment): the digits of c, in NTT form over Q_level, each extended to Q_level u P.
DecomposedPoly decompose_and_mod_up(const Context& context, const ring::RnsPoly& c, int level);

// The checks every backend runs before the two steps (MismatchError / LevelError naming what differs): c over
// Q_level in NTT form.
void require_key_switch_input(const Context& context, const ring::RnsPoly& c, int level);
// Before the second step: a decomposition with the level's digit count over Q_l u P, a key of these parameters with
// enough digits, and an automorphism of the ring's degree.
void require_key_switch_apply_inputs(const Context& context, const DecomposedPoly& decomposed, const SwitchingKey& key,
                                     const ring::Automorphism* automorphism);

// The inner product alone: (u0, u1) = sum_d sigma(digit_d) * (b_d, a_d) over Q_l u P (context.qp_basis(level)),
// NTT form, before the ModDown. u0 + u1 s = P sigma(c) s' + E, so sums of such pairs (times integer polynomials
// reduced over Q_l u P) can share one ModDown: double hoisting (circuits/linear_transform.hpp). key_switch_apply
// is exactly mod_down of these two.
std::array<ring::RnsPoly, 2> key_switch_inner_product(const Context& context, const DecomposedPoly& decomposed,
                                                      const SwitchingKey& key,
                                                      const ring::Automorphism* automorphism = nullptr);

// The same sums at the limbs `positions` of context.qp_basis(level) only, written into those limbs of sum[0] and
// sum[1] (polynomials over qp_basis(level) in NTT form, whose other limbs may be held elsewhere): what a rank of
// a device mesh holding those limbs computes (dist/); the digits' and the key's limbs at those positions are read.
void key_switch_inner_product_limbs(const Context& context, const DecomposedPoly& decomposed, const SwitchingKey& key,
                                    const ring::Automorphism* automorphism, std::span<const std::size_t> positions,
                                    std::array<ring::RnsPoly, 2>& sum);

// Inner product with the key and ModDown; automorphism (optional) is applied to the digits as they are read.
std::array<ring::RnsPoly, 2> key_switch_apply(const Context& context, const DecomposedPoly& decomposed,
                                              const SwitchingKey& key,
                                              const ring::Automorphism* automorphism = nullptr);
// The same plus addends[i] on sum i (null: none, NTT form over Q_l), then both sums rescaled by `rescaler` (over
// Q_l): the words of key_switch_apply, the additions and rescale in sequence, with one forward NTT per kept limb
// fewer (ring::mod_down_and_rescale).
std::array<ring::RnsPoly, 2> key_switch_apply_rescaled(const Context& context, const DecomposedPoly& decomposed,
                                                       const SwitchingKey& key, const ring::Automorphism* automorphism,
                                                       std::array<const ring::RnsPoly*, 2> addends,
                                                       const ring::Rescaler& rescaler);

// Both steps: the key switch of c at a level.
std::array<ring::RnsPoly, 2> key_switch(const Context& context, const ring::RnsPoly& c, int level,
                                        const SwitchingKey& key);

// A worst-case bound on the coefficients of e = (d0 + d1 s) - c s' after a key switch at `level` (with or
// without an automorphism), for a secret s of L1 norm secret_l1_norm:
//   |e| <= 19 N sum_d alpha_d Q_d / P + (alpha - 1/2) (1 + ||s||_1),
// from E = sum_d ModUp(c)_d e_d over Q_l u P (ModUp_d < alpha_d Q_d, |e_d| <= 19 = the Gaussian's tail cut,
// N terms per coefficient) divided by P, plus ModDown's rounding error (|eps| <= alpha - 1/2, for d0 and for d1 s).
// ||s||_1 is N for a uniform ternary secret and h for a fixed Hamming weight. The typical noise is far smaller:
// a standard deviation of about 3.2 sqrt(N digits (alpha / 12 + alpha^2 / 4)) max(Q_d) / P (a ModUp lift is
// about a sum of alpha uniform fractions of Q_d), plus the rounding term, about alpha sqrt(||s||_1).
double key_switch_noise_bound(const Context& context, int level, double secret_l1_norm);

}  // namespace cerium::rlwe
