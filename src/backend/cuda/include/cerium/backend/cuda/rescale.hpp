#pragma once
// Rescale on the device: division by the last one or two primes of a basis with rounding to nearest (or floor),
// the words of ring::Rescaler::apply, in coefficient form or in NTT form.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/elementwise.hpp"
#include "cerium/backend/cuda/ntt.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "cerium/ring/rns_basis.hpp"

namespace cerium::cuda {

struct RescaleConfig {
  std::size_t dropped = 1;                          // 1 or 2 primes, and fewer than the basis has
  ring::Rounding rounding = ring::Rounding::nearest;
  bool ntt_form = true;                             // also upload the NTT tables that apply_ntt needs
};

class RescalePlan {
 public:
  // Throws InvalidArgument for a dropped count other than 1 or 2, or one that keeps no prime.
  explicit RescalePlan(const ring::RnsBasis& basis, RescaleConfig config = {}, Stream stream = {});
  ~RescalePlan();
  RescalePlan(RescalePlan&&) noexcept;
  RescalePlan& operator=(RescalePlan&&) noexcept;

  std::size_t degree() const { return n_; }
  std::size_t limbs() const { return limbs_; }   // input limbs: the whole basis
  std::size_t kept() const { return limbs_ - config_.dropped; }
  const RescaleConfig& config() const { return config_; }

  // Coefficient form. in: limbs() limbs; out: kept() limbs; out may equal in.
  void apply(const std::uint32_t* in, std::uint32_t* out, const Stream& stream) const;
  // NTT form (inverse NTT of the dropped limbs, correction, forward NTT of it, subtract and scale): in is not
  // modified; out may equal in. Throws InvalidArgument when the plan was built without ntt_form.
  void apply_ntt(const std::uint32_t* in, std::uint32_t* out, const Stream& stream) const;

  // The pieces of the NTT-form path, for callers that hold their own NTT tables: from the dropped limbs in
  // coefficient form (contiguous), the corrections t_i for every kept limb, in coefficient form; after their
  // forward NTT, out = (x - t) p_inverse() finishes the rescale (ElementwisePlan::subtract_and_scale).
  void corrections(const std::uint32_t* dropped_coefficients, std::uint32_t* corrections,
                   const Stream& stream) const;
  // The same for `terms` polynomials' dropped limbs (each term's `dropped` limbs, term_stride words apart),
  // summed: the corrections of a sum of separately rescaled polynomials.
  void corrections_sum(const std::uint32_t* dropped_coefficients, std::size_t terms, std::size_t term_stride,
                       std::uint32_t* corrections, const Stream& stream) const;
  const DeviceScalars& p_inverse() const;
  // For kernels that compute the rescale's correction themselves (a ModDown's conversion that also rescales): the
  // remainder's constants and the kept limbs' constants on the device.
  const detail::RescaleRemainder& remainder_constants() const;
  const detail::RescaleLimbConstants* device_constants() const;

 private:
  struct Device;
  std::size_t n_ = 0;
  int log_n_ = 0;
  std::size_t limbs_ = 0;
  RescaleConfig config_;
  std::unique_ptr<Device> device_;
};

}  // namespace cerium::cuda
