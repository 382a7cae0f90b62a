#pragma once
// The exact integer half of encoding and decoding (internal to cerium_ckks):
//  - doubles rounded to integers of any magnitude, reduced modulo 31-bit primes without big integers;
//  - centered integers rebuilt from a prefix of RNS limbs by Garner's mixed-radix CRT.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/math/modarith.hpp"
#include "cerium/ring/rns_basis.hpp"

namespace cerium::ckks::detail {

// round(value) as (-1)^negative * magnitude * 2^shift. A finite double of magnitude >= 2^64 is an integer with a
// 53-bit mantissa, so magnitude < 2^64 always holds and the shift carries the rest.
struct RoundedInteger {
  std::uint64_t magnitude = 0;
  int shift = 0;
  bool negative = false;
};

// value must be finite.
RoundedInteger round_exact(double value);

// The residue of the rounded integer modulo m.
std::uint32_t residue(const RoundedInteger& x, const math::Modulus& m);

// 2^(log2(Q) - 1) for the basis' product Q (infinity when it exceeds the double range): integers at or beyond it in
// magnitude would wrap around Q. log2(Q) is a sum of logarithms, so the limit is Q / 2 to about 1e-13 relative.
double signed_limit(const ring::RnsBasis& basis);

// Garner's CRT over the first primes q_0 .. q_{m-1} of a basis, with P = q_0 ... q_{m-1}: residues -> the
// mixed-radix digits d_i < q_i of x in [0, P) (x = d_0 + d_1 q_0 + d_2 q_0 q_1 + ...) -> the representative in
// (-P/2, P/2] as a long double (Horner over the digits: 64-bit mantissa, relative error below m 2^-64).
class PrefixCrt {
 public:
  // The first `limbs` primes of basis, 1 <= limbs <= basis.size().
  PrefixCrt(const ring::RnsBasis& basis, std::size_t limbs);

  // The smallest prefix of basis whose product exceeds 2^bits; all of it when none does.
  static std::size_t limbs_for_bits(const ring::RnsBasis& basis, double bits);

  std::size_t limbs() const { return moduli_.size(); }
  double log2_product() const { return log2_product_; }

  // residues[i] < q_i, one per prefix limb; digits is scratch of limbs() words (no allocation per call).
  long double centered(std::span<const std::uint32_t> residues, std::span<std::uint32_t> digits) const;

  // The exact form, for moving an integer to other primes: the mixed-radix digits of x in [0, P) into digits
  // (limbs() words), and whether x > P/2 (its centered representative is x - P).
  bool mixed_radix(std::span<const std::uint32_t> residues, std::span<std::uint32_t> digits) const;
  // The centered representative of those digits modulo target (any prime below 2^31), given P mod target.
  std::uint32_t centered_residue(std::span<const std::uint32_t> digits, bool negative, const math::Modulus& target,
                                 std::uint32_t product_mod_target) const;
  std::uint32_t product_mod(const math::Modulus& target) const;  // P mod target

 private:
  std::vector<math::Modulus> moduli_;
  std::vector<math::ShoupConstant> inverse_;  // (q_0 ... q_{i-1})^{-1} mod q_i; entry 0 unused
  double log2_product_ = 0;
};

}  // namespace cerium::ckks::detail
