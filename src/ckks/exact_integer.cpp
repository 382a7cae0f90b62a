#include "exact_integer.hpp"

#include <cmath>

#include "cerium/ckks/encoder.hpp"
#include "cerium/core/check.hpp"

namespace cerium::ckks {

namespace detail {

RoundedInteger round_exact(double value) {
  const double rounded = std::round(value);  // exact: every double of magnitude >= 2^52 is already an integer
  RoundedInteger x;
  x.negative = rounded < 0;
  const double magnitude = std::fabs(rounded);
  constexpr double two_to_64 = 18446744073709551616.0;
  if (magnitude < two_to_64) {
    x.magnitude = static_cast<std::uint64_t>(magnitude);
    return x;
  }
  int exponent = 0;
  const double mantissa = std::frexp(magnitude, &exponent);  // magnitude = mantissa 2^exponent, mantissa in [1/2, 1)
  x.magnitude = static_cast<std::uint64_t>(std::ldexp(mantissa, 53));  // the 53 significant bits, exactly
  x.shift = exponent - 53;
  return x;
}

std::uint32_t residue(const RoundedInteger& x, const math::Modulus& m) {
  std::uint32_t r = math::barrett_reduce(x.magnitude, m);
  if (x.shift > 0) r = math::mul_mod(r, math::pow_mod(2, static_cast<std::uint64_t>(x.shift), m.value), m);
  return x.negative ? math::neg_mod(r, m.value) : r;
}

double signed_limit(const ring::RnsBasis& basis) { return std::exp2(basis.log2_product() - 1); }

PrefixCrt::PrefixCrt(const ring::RnsBasis& basis, std::size_t limbs) {
  require(limbs >= 1 && limbs <= basis.size(), "CRT prefix of {} limbs is outside a basis of {} primes", limbs,
          basis.size());
  moduli_.reserve(limbs);
  inverse_.resize(limbs);
  for (std::size_t i = 0; i < limbs; ++i) {
    const math::Modulus& qi = basis.modulus(i);
    moduli_.push_back(qi);
    log2_product_ += std::log2(static_cast<double>(qi.value));
    std::uint64_t partial = 1;  // q_0 ... q_{i-1} mod q_i
    for (std::size_t j = 0; j < i; ++j) partial = partial * (basis.prime(j) % qi.value) % qi.value;
    inverse_[i] = math::ShoupConstant(static_cast<std::uint32_t>(math::inv_mod(partial, qi.value)), qi.value);
  }
}

std::size_t PrefixCrt::limbs_for_bits(const ring::RnsBasis& basis, double bits) {
  double product_bits = 0;
  for (std::size_t i = 0; i < basis.size(); ++i) {
    product_bits += std::log2(static_cast<double>(basis.prime(i)));
    if (product_bits > bits) return i + 1;
  }
  return basis.size();
}

long double PrefixCrt::centered(std::span<const std::uint32_t> residues, std::span<std::uint32_t> digits) const {
  const std::size_t m = moduli_.size();
  const bool negative = mixed_radix(residues, digits);
  // P - x = (P - 1 - x) + 1, and P - 1 - x has the borrow-free digits q_i - 1 - d_i.
  long double magnitude = 0;
  for (std::size_t i = m; i-- > 0;) {
    const std::uint32_t q = moduli_[i].value;
    const std::uint32_t d = negative ? q - 1 - digits[i] : digits[i];
    magnitude = magnitude * static_cast<long double>(q) + static_cast<long double>(d);
  }
  return negative ? -(magnitude + 1) : magnitude;
}

std::uint32_t PrefixCrt::product_mod(const math::Modulus& target) const {
  std::uint64_t product = 1;
  for (const math::Modulus& q : moduli_) product = math::barrett_reduce(product * (q.value % target.value), target);
  return static_cast<std::uint32_t>(product);
}

std::uint32_t PrefixCrt::centered_residue(std::span<const std::uint32_t> digits, bool negative,
                                          const math::Modulus& target, std::uint32_t product_mod_target) const {
  // Horner over the mixed-radix digits, top first: every step stays below 2^62 + 2^31.
  std::uint64_t x = 0;
  for (std::size_t i = moduli_.size(); i-- > 0;)
    x = math::barrett_reduce(x * moduli_[i].value + digits[i], target);
  const auto residue = static_cast<std::uint32_t>(x);
  return negative ? math::sub_mod(residue, product_mod_target, target.value) : residue;
}

bool PrefixCrt::mixed_radix(std::span<const std::uint32_t> residues, std::span<std::uint32_t> digits) const {
  const std::size_t m = moduli_.size();
  digits[0] = residues[0];
  for (std::size_t i = 1; i < m; ++i) {
    const math::Modulus& qi = moduli_[i];
    // The value of the digits so far, mod q_i: d_0 + q_0 (d_1 + q_1 (... + q_{i-2} d_{i-1})), innermost first.
    // Every intermediate stays below 2^62 + 2^31, so the 64-bit products are exact.
    std::uint64_t low = digits[i - 1];
    for (std::size_t j = i - 1; j-- > 0;) low = math::barrett_reduce(low * moduli_[j].value + digits[j], qi);
    const std::uint32_t known = math::barrett_reduce(low, qi);
    digits[i] = math::mul_shoup(math::sub_mod(residues[i], known, qi.value), inverse_[i], qi.value);
  }
  // x > P/2 exactly when its digits, compared from the top, exceed those of (P - 1)/2, which are (q_i - 1)/2 for
  // odd primes: sum (q_i - 1)/2 q_0 ... q_{i-1} telescopes to (P - 1)/2.
  bool negative = false;
  for (std::size_t i = m; i-- > 0;) {
    const std::uint32_t half = (moduli_[i].value - 1) / 2;
    if (digits[i] != half) {
      negative = digits[i] > half;
      break;
    }
  }
  return negative;
}

}  // namespace detail

void round_to_residues(double value, const ring::RnsBasis& basis, std::span<std::uint32_t> out) {
  require(out.size() == basis.size(), "round_to_residues: {} output words for a basis of {} primes", out.size(),
          basis.size());
  require(std::isfinite(value), "round_to_residues: {} is not a finite number; check the message and the scale",
          value);
  require(std::fabs(value) < detail::signed_limit(basis),
          "round_to_residues: scale overflow: |{}| = 2^{:.2f} reaches Q/2, and Q has only log2(Q) = {:.2f} bits; "
          "lower the scale or the message, or work at a higher level",
          value, std::log2(std::fabs(value)), basis.log2_product());
  const detail::RoundedInteger x = detail::round_exact(value);
  for (std::size_t i = 0; i < basis.size(); ++i) out[i] = detail::residue(x, basis.modulus(i));
}

}  // namespace cerium::ckks
