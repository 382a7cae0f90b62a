#pragma once
// Fast basis conversion, ModUp and ModDown on the device, on coefficient-form limbs: the words of
// ring::BasisConverter::convert, ring::ModUp::apply and ring::ModDown::apply (limb-span forms). The constants
// are recomputed from the bases' public CRT API ([Q_i^{-1}]_{q_i}, [Q_i]_p, [P]_q) and uploaded once.
//
// Polynomials are raw limb-major device memory of N words per limb. Calls queue on `stream` and do not wait.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/elementwise.hpp"
#include "cerium/backend/cuda/rescale.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "cerium/ring/rns_basis.hpp"

namespace cerium::cuda {

// The tables of one conversion kernel; the plans below fill them.
struct ConversionTables {
  std::size_t n = 0;
  int log_n = 0;
  std::size_t sources = 0;
  std::size_t targets = 0;
  DeviceBuffer source_table;  // detail::ConversionSource
  DeviceBuffer target_table;  // detail::ConversionTarget
  DeviceBuffer q_hat_mod;     // targets x sources words
};

class BasisConversionPlan {
 public:
  // from: at most 96 primes. Throws MismatchError for different ring degrees, InvalidArgument otherwise.
  BasisConversionPlan(const ring::RnsBasis& from, const ring::RnsBasis& to, Stream stream = {});
  // in: from.size() limbs; out: to.size() limbs, not overlapping in.
  void convert(const std::uint32_t* in, std::uint32_t* out, const Stream& stream) const;

 private:
  ConversionTables tables_;
};

class ModUpPlan {
 public:
  // Every digit prime must be in target. The digit's limbs are copied to their target positions in the same
  // launch that converts the others.
  ModUpPlan(const ring::RnsBasis& digit, const ring::RnsBasis& target, Stream stream = {});
  // in: digit.size() limbs; out: target.size() limbs in target order, not overlapping in. The digit's own
  // limbs are copied from copy_from (digit.size() limbs, e.g. the digit in NTT form) when it is given.
  void apply(const std::uint32_t* in, std::uint32_t* out, const Stream& stream,
             const std::uint32_t* copy_from = nullptr) const;

 private:
  friend void apply_mod_up_digits(std::span<const ModUpPlan* const>, std::span<const std::uint32_t* const>,
                                  std::span<std::uint32_t* const>, std::span<const std::uint32_t* const>,
                                  const Stream&);
  ConversionTables tables_;
  std::size_t target_limbs_ = 0;
};

// ModUp of several digits in one launch (each plan's tables in its own grid slice, so that the GPU fills even
// when one digit alone would not): digit d reads in[d], writes out[d] and copies its own limbs from copy_from[d]
// (null entries: from in[d]). The same words as plans[d]->apply(in[d], out[d], stream, copy_from[d]) for each d.
void apply_mod_up_digits(std::span<const ModUpPlan* const> plans, std::span<const std::uint32_t* const> in,
                         std::span<std::uint32_t* const> out, std::span<const std::uint32_t* const> copy_from,
                         const Stream& stream);

class ModDownPlan {
 public:
  // kept's primes must all be in full, and full must have at least one more (at most 96 dropped primes).
  ModDownPlan(const ring::RnsBasis& full, const ring::RnsBasis& kept,
              ring::Rounding rounding = ring::Rounding::nearest, Stream stream = {});
  // in: full.size() limbs; out: kept.size() limbs. out may be in itself when kept's primes are full's first
  // primes in order (out limb i is then input limb i); it must not overlap the dropped limbs.
  void apply(const std::uint32_t* in, std::uint32_t* out, const Stream& stream) const;

 private:
  ConversionTables tables_;
};

// ModDown in NTT form, its conversion half: from the dropped limbs already in coefficient form (contiguous, in
// the dropped primes' order), the corrections t_i = Conv(x + h)_i - h_i for every kept prime, in coefficient
// form, as ring::ModDown forms them. The caller transforms them to NTT form and finishes with
// (x_i - t_i) P^{-1}: ElementwisePlan::subtract_and_scale with p_inverse().
class ModDownCorrectionPlan {
 public:
  ModDownCorrectionPlan(const ring::RnsBasis& full, const ring::RnsBasis& kept,
                        ring::Rounding rounding = ring::Rounding::nearest, Stream stream = {});
  std::size_t dropped() const { return tables_.sources; }
  std::size_t kept() const { return tables_.targets; }
  // dropped_coefficients: dropped() limbs; corrections: kept() limbs, not overlapping. With batch > 1, that many
  // polynomials in one launch: the inputs in_stride words apart (0: dropped() limbs, consecutive; a whole number
  // of limbs otherwise), the corrections consecutive.
  void apply(const std::uint32_t* dropped_coefficients, std::uint32_t* corrections, const Stream& stream,
             std::size_t batch = 1, std::size_t in_stride = 0) const;
  // [P^{-1}]_{q_i} for every kept prime.
  const DeviceScalars& p_inverse() const { return p_inverse_; }

  // The corrections of a ModDown that also rescales by D, the rescale's dropped primes (the last of kept()), in
  // one launch: T_i + [P]_{q_i} t_i on the rescale's kept limbs, T_i on D's; t is the rescale's correction of
  // c_D = (x_D - T_D) P^{-1} (ConversionEpilogue::mod_down_rescale). The batch's polynomial b reads its dropped
  // limbs at dropped_coefficients + b in_stride, x's D limbs (coefficient form) at x_dropped + b x_stride (strides
  // as apply's in_stride: whole limbs, 0 for consecutive), and writes kept() limbs at corrections + b kept() N.
  // factors: [P]_{q_i} on the rescale's kept limbs.
  struct RescaledInputs {
    const std::uint32_t* dropped_coefficients = nullptr;
    std::size_t in_stride = 0;
    const std::uint32_t* x_dropped = nullptr;
    std::size_t x_stride = 0;
    std::size_t batch = 1;
  };
  void apply_rescaled(const RescaledInputs& inputs, std::uint32_t* corrections, const RescalePlan& rescale,
                      const DeviceScalars& factors, const Stream& stream) const;

 private:
  ConversionTables tables_;
  DeviceScalars p_inverse_;
};

}  // namespace cerium::cuda
