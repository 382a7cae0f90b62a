#pragma once
// Hybrid key switching (Han-Ki 2020 / Kim et al.), split so that rotations can share work (hoisting):
//
//   1. decompose_and_mod_up(c): c (NTT form over Q_l) -> for each digit d, [c]_{Q_d} extended to Q_l u P
//      (inverse NTT of the digit's limbs, fast basis conversion, forward NTT of the new limbs). The expensive step.
//   2. key_switch_apply(digits, key, automorphism): sum_d sigma(digit_d) * (b_d, a_d) over Q_l u P, then ModDown
//      by P to Q_l (rounding). An automorphism sigma applied to the digits (a permutation in NTT form) lets one
//      ModUp serve many rotations: sigma(ModUp(c)) = ModUp(sigma(c)).
//
// The result (d0, d1) satisfies d0 + d1 s = c s' + e (or sigma(c) s' + e), with s' the key's source secret.

#include <array>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/ring/automorphism.hpp"
#include "cerium/ring/rns_poly.hpp"

namespace cerium::ckks {

// The ModUp of every digit of a polynomial at one level: digits[d] over context.qp_basis(level), NTT form.
struct DecomposedPoly {
  int level = 0;
  std::vector<ring::RnsPoly> digits;
};

DecomposedPoly decompose_and_mod_up(const Context& context, const ring::RnsPoly& c, int level);

// Inner product with the key and ModDown; automorphism (optional) is applied to the digits as they are read.
std::array<ring::RnsPoly, 2> key_switch_apply(const Context& context, const DecomposedPoly& decomposed,
                                              const SwitchingKey& key,
                                              const ring::Automorphism* automorphism = nullptr);

// Both steps: the key switch of c at a level.
std::array<ring::RnsPoly, 2> key_switch(const Context& context, const ring::RnsPoly& c, int level,
                                        const SwitchingKey& key);

}  // namespace cerium::ckks
