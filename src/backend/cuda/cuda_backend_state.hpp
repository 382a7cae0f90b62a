#pragma once
// The shared state of a CudaBackend: the context, the device and its work stream, and the plans built on first
// use. Plans are immutable once built; the caches are guarded by one mutex, so backends copied into several
// threads share them safely.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "cerium/backend/cuda/automorphism.hpp"
#include "cerium/backend/cuda/basis_conversion.hpp"
#include "cerium/backend/cuda/elementwise.hpp"
#include "cerium/backend/cuda/key_switch.hpp"
#include "cerium/backend/cuda/ntt.hpp"
#include "cerium/backend/cuda/ntt_launch.hpp"
#include "cerium/backend/cuda/rescale.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/math/special_fft.hpp"
#include "cerium/backend/cuda_backend.hpp"

namespace cerium::backend {

// A run of consecutive limbs of a polynomial whose NTT tables are consecutive in the context's table set.
struct TableRun {
  std::size_t first_limb = 0;
  std::size_t first_table = 0;
  std::size_t count = 0;
};

// Limbs a batched transform leaves alone: in polynomial b, local limbs [b stride, min(b stride + width, limit)).
struct NttSkip {
  std::size_t stride = 0;
  std::size_t width = 0;
  std::size_t limit = 0;
};

// The constants of a key switch whose ModDown also rescales (cuda_key_switch.cpp): ModDown from Q_l u P to
// Q_l, then division by D, the level's last 1-2 primes, in one forward transform.
struct ModDownRescaleTables {
  ring::RnsBasisPtr dropped;                 // D's primes
  std::vector<std::uint32_t> p_mod_dropped;  // [P]_{q_i} on D's primes
  cuda::DeviceScalars p_mod;                 // [P]_{q_i} on the kept limbs
  cuda::DeviceScalars pd_inverse;            // [(P D)^{-1}]_{q_i} on the kept limbs, 0 on D's
  cuda::DeviceScalars d_inverse;             // [D^{-1}]_{q_i} on the kept limbs, 0 on D's
};

struct CudaBackend::State {
  using Primes = std::vector<std::uint32_t>;

  rlwe::ContextPtr context;
  Device device;
  cuda::Stream stream;
  std::size_t n = 0;
  std::unique_ptr<cuda::NttPlan> ntt;  // tables of context->key_basis(): Q_top then P
  std::unordered_map<std::uint32_t, std::size_t> table_of_prime;

  std::mutex mutex;
  std::map<Primes, std::unique_ptr<cuda::ElementwisePlan>> elementwise;
  // The hot path's shortcut: a basis object's address to its plan, checked against the primes on every use (an
  // address may be reused by another basis).
  std::unordered_map<const ring::RnsBasis*, std::pair<Primes, const cuda::ElementwisePlan*>> elementwise_by_address;
  std::map<Primes, std::unique_ptr<cuda::NttPlan>> foreign_ntt;  // bases with primes outside the context
  std::map<std::tuple<Primes, std::size_t, int>, std::unique_ptr<cuda::RescalePlan>> rescale;
  std::map<std::tuple<Primes, Primes, int>, std::unique_ptr<cuda::ModDownCorrectionPlan>> mod_down_ntt;
  std::map<std::tuple<Primes, Primes, int>, std::unique_ptr<cuda::ModDownPlan>> mod_down_coefficient;
  std::map<std::pair<int, std::size_t>, std::unique_ptr<cuda::ModUpPlan>> mod_up;
  std::map<std::pair<Primes, Primes>, std::unique_ptr<cuda::BasisConversionPlan>> conversion;
  std::map<int, std::unique_ptr<cuda::KeySwitchInnerProductPlan>> inner_product;
  std::map<std::uint32_t, std::unique_ptr<cuda::AutomorphismPlan>> automorphism;
  std::map<Primes, std::unique_ptr<cuda::DeviceBuffer>> moduli;
  std::map<std::pair<Primes, std::size_t>, std::unique_ptr<ModDownRescaleTables>> mod_down_rescale;
  std::map<std::size_t, std::unique_ptr<cuda::DeviceBuffer>> fft_twiddles;  // by slot count

  const cuda::ElementwisePlan& elementwise_plan(const ring::RnsBasis& basis);
  const cuda::RescalePlan& rescale_plan(const ring::Rescaler& rescaler);
  const cuda::ModDownCorrectionPlan& mod_down_ntt_plan(const ring::ModDown& mod_down);
  const cuda::ModDownPlan& mod_down_coefficient_plan(const ring::ModDown& mod_down);
  const cuda::ModUpPlan& mod_up_plan(int level, std::size_t digit);
  const cuda::BasisConversionPlan& conversion_plan(const ring::RnsBasis& from, const ring::RnsBasis& to);
  const cuda::KeySwitchInnerProductPlan& inner_product_plan(int level);
  const cuda::AutomorphismPlan& automorphism_plan(const ring::Automorphism& automorphism);
  // mod_down.kept() must be rescaler.basis().
  const ModDownRescaleTables& mod_down_rescale_tables(const ring::ModDown& mod_down, const ring::Rescaler& rescaler);
  // The basis's math::Modulus entries on the device.
  const cuda::DeviceBuffer& moduli_table(const ring::RnsBasis& basis);
  // The special FFT's twiddles (SpecialFftTables::twiddles(), complex doubles) on the device.
  const cuda::DeviceBuffer& fft_twiddle_table(const math::SpecialFftTables& tables);

  // NTT, on the work stream, of `batch` polynomials at data whose primes are `primes`: consecutive and in place
  // unless `layout` says otherwise (cuda::NttBatchLayout: strides, a separate source). With `finish`, the
  // forward's last pass finishes a rescale or ModDown instead (cuda::detail::NttFinish); `skip` names limbs left
  // as they are.
  void ntt_forward(std::uint32_t* data, std::span<const std::uint32_t> primes, std::size_t batch = 1,
                   const cuda::detail::NttFinish* finish = nullptr, NttSkip skip = {},
                   const cuda::NttBatchLayout& layout = {});
  void ntt_inverse(std::uint32_t* data, std::span<const std::uint32_t> primes, std::size_t batch = 1,
                   const cuda::NttBatchLayout& layout = {});
  // The forward twiddle pairs of primes' NTT tables, consecutive (N pairs a prime), on the device.
  const std::uint32_t* forward_twiddles(std::span<const std::uint32_t> primes);
  // The forward NTT of a ModUp's `batch` digits at data (consecutive, over `primes`, each digit's own limbs named
  // by skip) fused with the key-switch inner product (cuda::NttPlan::forward_inner_product): false, with nothing
  // queued, when the primes need more than one launch (then transform and apply the inner product apart).
  bool ntt_forward_inner_product(std::uint32_t* data, std::span<const std::uint32_t> primes, std::size_t batch,
                                 NttSkip skip, const cuda::detail::InnerProductLaunch& inner_product);

 private:
  // The runs of primes in the context's tables, or nothing when a prime is not the context's.
  std::optional<std::vector<TableRun>> runs(std::span<const std::uint32_t> primes) const;
  const cuda::NttPlan& foreign_ntt_plan(std::span<const std::uint32_t> primes);
  template <bool Forward>
  void transform(std::uint32_t* data, std::span<const std::uint32_t> primes, std::size_t batch,
                 const cuda::detail::NttFinish* finish, NttSkip skip, const cuda::NttBatchLayout& layout);
};

}  // namespace cerium::backend
