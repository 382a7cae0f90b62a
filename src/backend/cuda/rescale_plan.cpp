#include <bit>
#include <optional>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/backend/cuda/rescale.hpp"
#include "cerium/backend/cuda/upload.hpp"
#include "cerium/core/check.hpp"

namespace cerium::cuda {

using math::u32;
using math::u64;

// The device side: per-kept-limb constants, and for the NTT path the basis's NTT tables, the kept basis's
// moduli (for subtract-and-scale) and the [P^{-1}]_{q_i} scalars.
struct RescalePlan::Device {
  DeviceBuffer constants;  // kept x detail::RescaleLimbConstants
  detail::RescaleLaunch base;
  std::optional<NttPlan> ntt;
  std::optional<ElementwisePlan> kept_elementwise;
  DeviceScalars p_inv;
};

RescalePlan::RescalePlan(const ring::RnsBasis& basis, RescaleConfig config, Stream stream)
    : n_(basis.ring_degree()),
      log_n_(std::countr_zero(basis.ring_degree())),
      limbs_(basis.size()),
      config_(config),
      device_(std::make_unique<Device>()) {
  require((config_.dropped == 1 || config_.dropped == 2) && config_.dropped < limbs_,
          "rescale drops 1 or 2 primes and keeps at least one: cannot drop {} of {}", config_.dropped, limbs_);
  require(n_ >= 4, "the rescale kernel moves 4 words at a time: N = {} is too small", n_);
  // The same constants as ring::Rescaler, recomputed from the basis.
  const std::size_t l = limbs_;
  u64 p = basis.prime(l - 1);
  detail::RescaleLaunch& base = device_->base;
  detail::RescaleRemainder& r = base.remainder;
  r.last = basis.prime(l - 1);
  r.dropped_count = static_cast<int>(config_.dropped);
  if (config_.dropped == 2) {
    const u32 a = basis.prime(l - 2);
    const u32 b = basis.prime(l - 1);
    const auto inv = static_cast<u32>(math::inv_mod(b % a, a));
    r.second_last = basis.modulus(l - 2);
    r.last_inv = inv;
    r.last_inv_shoup = math::shoup_quotient(inv, a);
    p *= a;
  }
  r.half = config_.rounding == ring::Rounding::nearest ? (p - 1) / 2 : p;
  base.log_degree = log_n_;
  base.kept = kept();
  std::vector<detail::RescaleLimbConstants> constants;
  std::vector<u32> p_inv;
  for (std::size_t i = 0; i < kept(); ++i) {
    const math::Modulus& m = basis.modulus(i);
    detail::RescaleLimbConstants c;
    c.modulus = m;
    c.p_mod = static_cast<u32>(p % m.value);
    c.p_inv = static_cast<u32>(math::inv_mod(c.p_mod, m.value));
    c.p_inv_shoup = math::shoup_quotient(c.p_inv, m.value);
    constants.push_back(c);
    p_inv.push_back(c.p_inv);
  }
  device_->constants = upload_table<detail::RescaleLimbConstants>(constants, stream);
  base.constants = table_data<detail::RescaleLimbConstants>(device_->constants);
  const ring::RnsBasis kept_basis = basis.sub_basis(0, kept());
  device_->p_inv = DeviceScalars(kept_basis, p_inv, stream);
  if (config_.ntt_form) {
    std::vector<math::NttTables> tables;
    for (std::size_t i = 0; i < l; ++i) tables.push_back(basis.ntt(i));
    device_->ntt.emplace(tables, stream);
    device_->kept_elementwise.emplace(kept_basis, stream);
  }
}

RescalePlan::~RescalePlan() = default;
RescalePlan::RescalePlan(RescalePlan&&) noexcept = default;
RescalePlan& RescalePlan::operator=(RescalePlan&&) noexcept = default;

void RescalePlan::apply(const std::uint32_t* in, std::uint32_t* out, const Stream& stream) const {
  require(in != nullptr && out != nullptr, "rescale on a null device pointer");
  detail::RescaleLaunch args = device_->base;
  args.in = in;
  args.dropped = in + kept() * n_;
  args.out = out;
  args.stream = stream.native_handle();
  detail::launch_rescale(args);
}

void RescalePlan::apply_ntt(const std::uint32_t* in, std::uint32_t* out, const Stream& stream) const {
  require(device_->ntt.has_value(), "this rescale plan was built without NTT tables (RescaleConfig::ntt_form)");
  require(in != nullptr && out != nullptr, "rescale on a null device pointer");
  const std::size_t dropped = config_.dropped;
  // The dropped limbs in coefficient form, and the corrections t_i (coefficient, then NTT form).
  DeviceBuffer coeff(dropped * n_, stream), correction(kept() * n_, stream);
  CERIUM_CUDA_CHECK(cudaMemcpyAsync(coeff.data(), in + kept() * n_, coeff.bytes(), cudaMemcpyDeviceToDevice,
                                    static_cast<cudaStream_t>(stream.native_handle())));
  device_->ntt->inverse(coeff.data(), kept(), dropped, stream);
  corrections(coeff.data(), correction.data(), stream);
  device_->ntt->forward(correction.data(), 0, kept(), stream);
  device_->kept_elementwise->subtract_and_scale(out, in, correction.data(), device_->p_inv, kept(), stream);
}

void RescalePlan::corrections(const std::uint32_t* dropped_coefficients, std::uint32_t* corrections,
                              const Stream& stream) const {
  require(dropped_coefficients != nullptr && corrections != nullptr, "rescale on a null device pointer");
  detail::RescaleLaunch args = device_->base;
  args.dropped = dropped_coefficients;
  args.out = corrections;
  args.correction_only = true;
  args.stream = stream.native_handle();
  detail::launch_rescale(args);
}

void RescalePlan::corrections_sum(const std::uint32_t* dropped_coefficients, std::size_t terms,
                                  std::size_t term_stride, std::uint32_t* corrections, const Stream& stream) const {
  require(dropped_coefficients != nullptr && corrections != nullptr, "rescale on a null device pointer");
  require(terms >= 1 && (terms == 1 || term_stride >= config_.dropped * n_),
          "rescale corrections: {} terms {} words apart overlap ({} dropped limbs of {} words each)", terms,
          term_stride, config_.dropped, n_);
  detail::RescaleLaunch args = device_->base;
  args.dropped = dropped_coefficients;
  args.out = corrections;
  args.correction_only = true;
  args.terms = terms;
  args.term_stride = term_stride;
  args.stream = stream.native_handle();
  detail::launch_rescale(args);
}

const DeviceScalars& RescalePlan::p_inverse() const { return device_->p_inv; }

const detail::RescaleRemainder& RescalePlan::remainder_constants() const { return device_->base.remainder; }

const detail::RescaleLimbConstants* RescalePlan::device_constants() const {
  return device_->base.constants;
}

}  // namespace cerium::cuda
