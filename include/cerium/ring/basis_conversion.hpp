#pragma once
// Fast RNS basis conversion (Bajard-Eynard-Hasan-Zucca 2016; Halevi-Polyakov-Shoup 2018) and the operations of
// hybrid key switching and rescaling built on it.
//
// Notation: x is the integer in [0, Q) with residues x_i = [x]_{q_i} over a source basis q_0 .. q_{L-1};
// Q_i = Q / q_i. The fast conversion to a prime p computes
//   Conv(x)_p = [ sum_i [x_i Q_i^{-1}]_{q_i} Q_i ]_p = [x + u Q]_p,   with an integer 0 <= u < L
// that is the same for every target prime. The sum of L products is accumulated in 128 bits and reduced once.
//
// Every limb-span routine works on coefficient-form limbs of one common length (N, or a block of N), so callers
// may convert block by block. The RnsPoly-level routines accept either form and return the input's form (NTT
// form costs the inverse/forward NTTs of the limbs that must cross domains).
//
// Exactness:
//  - BasisConverter, ModUp: approximate, x + u Q with 0 <= u < L (as above).
//  - ModDown from Q u P to Q: Rounding::floor gives floor(x / P) - u, 0 <= u < |P| (the number of primes of P);
//    Rounding::nearest gives round(x / P) - u + k with k = floor((|P| - 1) / 2), the mean of u rounded down, so
//    that the error u - k is centered (mean within 1/2 of 0). The error is part of key-switching noise: uncentered,
//    its mean multiplies the secret in every coefficient, about 12 times a rescale's rounding at |P| = 8.
//  - Rescaler (1 or 2 primes): exact. Rounding::nearest gives round(x / P) (P odd, so no ties), error at most 1/2;
//    Rounding::floor gives floor(x / P), error in [0, 1). Reading x as centered in (-Q/2, Q/2] gives the same
//    residues of the result modulo Q / P.
//
// The classes are immutable after construction (precomputed constants only); their apply/convert methods keep
// their scratch local, so one instance may serve several threads at once.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "cerium/math/modarith.hpp"
#include "cerium/ring/rns_basis.hpp"
#include "cerium/ring/rns_poly.hpp"

namespace cerium::ring {

// How a division by P rounds: down, or to the nearest integer (see Exactness above).
enum class Rounding : std::uint8_t { floor, nearest };

// Fast conversion from one basis to another (any primes; a target prime equal to a source prime gets [uQ]_p).
class BasisConverter {
 public:
  // Throws MismatchError for different ring degrees.
  BasisConverter(RnsBasisPtr from, RnsBasisPtr to);

  const RnsBasis& from() const { return *from_; }        // the source basis, of product Q
  const RnsBasis& to() const { return *to_; }            // the target basis
  const RnsBasisPtr& from_ptr() const { return from_; }  // from(), shared
  const RnsBasisPtr& to_ptr() const { return to_; }      // to(), shared

  // in: from().size() limbs, out: to().size() limbs, all of one length; out[j] = [x + u Q]_{p_j}.
  // Output limbs must not overlap input limbs.
  void convert(ConstLimbSpans in, LimbSpans out) const;
  // A polynomial over from() (either form) to one over to() in the same form, on the input's first device.
  RnsPoly convert(const RnsPoly& in) const;

 private:
  RnsBasisPtr from_, to_;
  std::vector<math::ShoupConstant> q_hat_inv_;  // [Q_i^{-1}]_{q_i}
  std::vector<std::uint32_t> q_hat_mod_p_;      // [Q_i]_{p_j} at j * L + i
  std::vector<std::uint32_t> q_hat_mod_p_quotient_;  // their Shoup quotients for p_j
};

// The ModUp of hybrid key switching: a digit (a few primes of Q_l) extended to a target basis that contains
// them (typically Q_l u P). Digit limbs are copied; every other target prime gets the fast conversion.
class ModUp {
 public:
  // Throws MismatchError when a digit prime is missing from target or the ring degrees differ.
  ModUp(RnsBasisPtr digit, RnsBasisPtr target);

  const RnsBasis& digit() const { return *digit_; }          // the digit's primes
  const RnsBasis& target() const { return *target_; }        // the basis extended to; it holds the digit's primes
  const RnsBasisPtr& target_ptr() const { return target_; }  // target(), shared

  // in: digit().size() limbs; out: target().size() limbs in target order.
  void apply(ConstLimbSpans in, LimbSpans out) const;
  // in: a polynomial whose basis contains the digit primes (the digit itself, or all of Q_l); either form.
  RnsPoly apply(const RnsPoly& in) const;

 private:
  RnsBasisPtr digit_, target_;
  std::optional<BasisConverter> converter_;  // digit -> target minus digit; empty when nothing is missing
  std::vector<std::size_t> target_of_digit_;       // target position of digit limb i
  std::vector<std::size_t> target_of_complement_;  // target position of converted limb j
};

class Rescaler;

// The constant ModDown adds to x_i before subtracting the conversion and dividing by P, for nearest rounding:
// [(P - 1) / 2 + k P]_{q_i} with k = floor((|P| - 1) / 2), which centers the conversion's overflow (see the file
// comment). p_mod = [P]_{q_i}; dropped_primes = |P|. Every backend's ModDown uses it, so their words agree.
std::uint32_t mod_down_kept_offset(std::uint32_t p_mod, std::size_t dropped_primes, const math::Modulus& m);

// The ModDown of hybrid key switching: from a full basis (Q u P) to the kept primes Q, dividing by the product P
// of the other primes: out_i = [(x_i - Conv_{P->Q}(x_P)_i) P^{-1}]_{q_i}, with the rounding offset folded in.
class ModDown {
 public:
  // kept's primes must all be in full (at any positions), and full must have at least one more.
  ModDown(RnsBasisPtr full, RnsBasisPtr kept, Rounding rounding = Rounding::nearest);

  const RnsBasis& full() const { return *full_; }        // Q u P: the input basis
  const RnsBasis& kept() const { return *kept_; }        // Q: the output basis
  const RnsBasisPtr& kept_ptr() const { return kept_; }  // kept(), shared
  const RnsBasis& dropped() const { return *dropped_; }  // P: the primes of full() not in kept()
  Rounding rounding() const { return rounding_; }        // how the division by P rounds

  // in: full().size() limbs; out: kept().size() limbs. out[i] may be the very input limb of kept prime i (in
  // place); it must not overlap any other input limb.
  void apply(ConstLimbSpans in, LimbSpans out) const;
  // Either form; the result is over kept() in the input's form.
  RnsPoly apply(const RnsPoly& in) const;

 private:
  friend RnsPoly mod_down_and_rescale(const ModDown&, const Rescaler&, const RnsPoly&, const RnsPoly*);
  // v_i = [Conv_{P->Q}([x + h]_P)]_{q_i}, h = (P - 1) / 2 for nearest and 0 for floor, so that
  // out_i = (x_i + h_i - v_i) P^{-1} with h_i = mod_down_kept_offset (nearest) or 0. dropped: |P| coefficient-form
  // limbs; v: |Q| limbs; scratch: |P| limbs.
  void converted(ConstLimbSpans dropped, LimbSpans v, LimbSpans scratch) const;
  // From an NTT-form input's P limbs: t_i = v_i - h in coefficient form, the correction out_i = (x_i - NTT(t_i))
  // P^{-1} subtracts. t: kept().size() limbs.
  void coefficient_corrections(const RnsPoly& in, LimbSpans t) const;

  RnsBasisPtr full_, kept_, dropped_;
  Rounding rounding_;
  std::optional<BasisConverter> converter_;
  std::vector<std::size_t> full_of_kept_, full_of_dropped_;
  std::vector<math::ShoupConstant> p_inv_;  // [P^{-1}]_{q_i}
  std::vector<std::uint32_t> h_kept_, h_dropped_;
};

// Division by the last one or two primes of a basis, exact, with rounding to nearest or floor.
class Rescaler {
 public:
  // dropped is 1 or 2 and below basis->size(); throws InvalidArgument otherwise.
  Rescaler(RnsBasisPtr basis, std::size_t dropped = 1, Rounding rounding = Rounding::nearest);

  const RnsBasis& basis() const { return *basis_; }      // the input basis
  const RnsBasis& kept() const { return *kept_; }        // basis() without its last dropped() primes
  const RnsBasisPtr& kept_ptr() const { return kept_; }  // kept(), shared
  std::size_t dropped() const { return dropped_; }       // primes divided out: 1 or 2
  Rounding rounding() const { return rounding_; }        // how the division rounds

  // in: basis().size() limbs; out: kept().size() limbs; out[i] may be in[i] itself (in place).
  void apply(ConstLimbSpans in, LimbSpans out) const;
  // Either form; the result is over kept() in the input's form.
  RnsPoly apply(const RnsPoly& in) const;
  // Replaces x by its rescaled value (same shards, fewer limbs).
  void apply_in_place(RnsPoly& x) const;

 private:
  friend RnsPoly mod_down_and_rescale(const ModDown&, const Rescaler&, const RnsPoly&, const RnsPoly*);
  // r = x mod P from the dropped limbs, with bit 63 set when the centered lift is negative (nearest only).
  void remainders(ConstLimbSpans dropped, std::size_t offset, std::span<std::uint64_t> r) const;
  // t_i = [centered-or-not r]_{q_i} for kept prime i.
  void correction(std::span<const std::uint64_t> r, std::size_t i, std::span<std::uint32_t> t) const;
  // The NTT-form path: the dropped limbs cross to coefficient form, each correction back to NTT form.
  void apply_ntt_form(const RnsPoly& in, LimbSpans out) const;

  RnsBasisPtr basis_, kept_;
  std::size_t dropped_;
  Rounding rounding_;
  std::uint64_t half_ = 0;                  // (P - 1) / 2
  math::ShoupConstant last_inv_;            // [q_b^{-1}]_{q_a} for two primes (a = second last, b = last)
  std::vector<math::ShoupConstant> p_inv_;  // [P^{-1}]_{q_i}
  std::vector<std::uint32_t> p_mod_;        // [P]_{q_i}
};

// ModDown from Q_l u P to Q_l, an optional addend over Q_l, then the rescale by Q_l's last 1-2 primes D, in NTT
// form: the words of rescaler.apply(mod_down.apply(in) + addend), with one forward NTT per kept limb instead of
// one per limb for the ModDown and another per kept limb for the rescale. By linearity, with T the ModDown's
// correction and t the rescale's (from the D limbs of the ModDown's result, which stay in coefficient form):
// out_i = (x_i - NTT(T_i + P t_i)) (P D)^{-1} + a_i D^{-1}. mod_down.kept() must be rescaler.basis(), in over
// mod_down.full() and addend over rescaler.basis(), both in NTT form (MismatchError otherwise).
RnsPoly mod_down_and_rescale(const ModDown& mod_down, const Rescaler& rescaler, const RnsPoly& in,
                             const RnsPoly* addend = nullptr);

// Convenience forms that build the precomputation on each call (cache the classes above on hot paths).
RnsPoly mod_up(const RnsPoly& in, RnsBasisPtr digit, RnsBasisPtr target);
RnsPoly mod_down(const RnsPoly& in, RnsBasisPtr kept, Rounding rounding = Rounding::nearest);
RnsPoly rescale(const RnsPoly& in, std::size_t dropped = 1, Rounding rounding = Rounding::nearest);

}  // namespace cerium::ring
