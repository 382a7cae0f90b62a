// CudaBackend operations added for the eDSL's planner (plan/fused_sum.hpp): the mixed linear combination of a
// fused sum, one launch per polynomial (cuda/elementwise.hpp), and the same with its rescale folded in.

#include <bit>
#include <span>
#include <string>
#include <vector>

#include "cerium/backend/cuda_backend.hpp"
#include "cerium/core/check.hpp"
#include "cerium/core/device_memory.hpp"
#include "cuda_backend_state.hpp"

namespace cerium::backend {
namespace {

using math::u32;

// The device words of a polynomial on this backend's device (one shard), or a clear error.
const u32* device_words(const CudaBackend& backend, const ring::RnsPoly& x, const char* operation) {
  require<MismatchError>(!x.empty(), "{}: the polynomial is empty", operation);
  require<UnsupportedError>(x.shards().size() == 1 && x.shards()[0].device() == backend.device(),
                            "{}: a polynomial is not in this CUDA backend's device memory; upload it first",
                            operation);
  return x.shards()[0].data();
}

// A rescaled sum's operands checked (factors like `any` over the rescaler's basis, the output over its kept
// primes, NTT form) and the factors' device words.
struct RescaledOperands {
  std::vector<const u32*> left, right, scaled;
  u32* out = nullptr;
};
RescaledOperands rescaled_operands(const CudaBackend& backend, const ring::Rescaler& rescaler, ring::RnsPoly& x,
                                   const ring::RnsPoly& any, std::span<const ring::RnsPoly* const> a,
                                   std::span<const ring::RnsPoly* const> b, std::span<const ring::RnsPoly* const> c,
                                   const char* operation) {
  require<MismatchError>(any.basis() == rescaler.basis() && x.basis() == rescaler.kept() &&
                             x.form() == ring::PolyForm::ntt && any.form() == ring::PolyForm::ntt,
                         "{}: the factors must be over the rescaler's {} and the output over {}, in NTT form",
                         operation, ring::describe(rescaler.basis()), ring::describe(rescaler.kept()));
  const auto pointers = [&](std::span<const ring::RnsPoly* const> factors) {
    std::vector<const u32*> out;
    for (const ring::RnsPoly* f : factors) {
      require(f != nullptr, "{}: a null factor", operation);
      ring::require_compatible(any, *f, operation);
      out.push_back(device_words(backend, *f, operation));
    }
    return out;
  };
  return {pointers(a), pointers(b), pointers(c), const_cast<u32*>(device_words(backend, x, operation))};
}

}  // namespace

void CudaBackend::linear_combination(ring::RnsPoly& x, std::span<const ring::RnsPoly* const> a,
                                     std::span<const ring::RnsPoly* const> b,
                                     std::span<const ring::RnsPoly* const> c, std::span<const u32> scalars,
                                     bool accumulate) const {
  constexpr const char* operation = "linear combination";
  require<MismatchError>(x.form() == ring::PolyForm::ntt,
                         "{}: the output is in {} form; products are pointwise only in NTT form", operation,
                         ring::to_string(x.form()));
  require(a.size() == b.size(), "{}: {} left and {} right factors", operation, a.size(), b.size());
  const auto pointers = [&](std::span<const ring::RnsPoly* const> factors) {
    std::vector<const u32*> out;
    for (const ring::RnsPoly* f : factors) {
      require(f != nullptr, "{}: a null factor", operation);
      ring::require_compatible(x, *f, operation);
      out.push_back(device_words(*this, *f, operation));
    }
    return out;
  };
  const auto left = pointers(a), right = pointers(b), scaled = pointers(c);
  auto* out = const_cast<u32*>(device_words(*this, x, operation));
  state_->elementwise_plan(x.basis())
      .linear_combination(out, left, right, scaled, scalars, accumulate, x.limb_count(), state_->stream);
}

// The rescale of the sum without writing the whole sum: the dropped limbs of the sum first (a pass over 1 or 2
// limbs), to coefficient form, the corrections t_i (RescalePlan's kernel) back to NTT form, then one pass over
// the kept limbs that writes (sum - t) P^{-1}: the words of the sum then CudaBackend::rescale, with the kept
// limbs written once instead of written, copied around and read back.
void CudaBackend::linear_combination_rescaled(const ring::Rescaler& rescaler, ring::RnsPoly& x,
                                              std::span<const ring::RnsPoly* const> a,
                                              std::span<const ring::RnsPoly* const> b,
                                              std::span<const ring::RnsPoly* const> c,
                                              std::span<const u32> scalars) const {
  constexpr const char* operation = "rescaled linear combination";
  State& s = *state_;
  require(a.size() == b.size() && (!a.empty() || !c.empty()), "{}: {} left and {} right factors, {} scaled",
          operation, a.size(), b.size(), c.size());
  const ring::RnsPoly* first = a.empty() ? c[0] : a[0];
  require(first != nullptr, "{}: a null factor", operation);
  const ring::RnsPoly& any = *first;
  const auto [left, right, scaled, out] = rescaled_operands(*this, rescaler, x, any, a, b, c, operation);
  const std::size_t kept = rescaler.kept().size(), dropped = rescaler.dropped();
  DeviceWords scratch(s.device, (dropped + kept) * s.n, BufferInit::uninitialized);
  u32* coefficients = scratch.data();
  u32* corrections = scratch.data() + dropped * s.n;
  const cuda::ElementwisePlan& plan = s.elementwise_plan(any.basis());
  plan.linear_combination(coefficients, left, right, scaled, scalars, false, dropped, s.stream,
                          cuda::CombinationRange{.first_limb = kept});
  s.ntt_inverse(coefficients, any.basis().primes().subspan(kept), 1);
  const cuda::RescalePlan& rescale = s.rescale_plan(rescaler);
  rescale.corrections(coefficients, corrections, s.stream);
  s.ntt_forward(corrections, rescaler.kept().primes(), 1);
  plan.linear_combination(out, left, right, scaled, scalars, false, kept, s.stream,
                          cuda::CombinationRange{.subtrahend = corrections, .scale = &rescale.p_inverse()});
}

namespace {

// sum_t rescale(a_t b_t): each term's dropped limbs of its product (one pass over 1 or 2 limbs for all the terms),
// all of them to coefficient form in one batch, the terms' corrections summed per kept limb
// (RescalePlan::corrections_sum) and moved to NTT form once, then one pass over the kept limbs that writes
// (sum_t a_t b_t - t) P^{-1}. By linearity mod each q_i these are the words of the terms rescaled and added one by
// one, at the cost of one rescale for the whole sum. right: the b_t's device words, whole or compact
// (b_log_gap >= 0: CompactPlaintexts).
void sum_of_rescaled(CudaBackend::State& s, const ring::Rescaler& rescaler,
                     const std::vector<const u32*>& left, const std::vector<const u32*>& right, int b_log_gap,
                     u32* out, const ring::RnsPoly& any) {
  const std::size_t terms = left.size(), kept = rescaler.kept().size(), dropped = rescaler.dropped();
  DeviceWords scratch(s.device, (terms * dropped + kept) * s.n, BufferInit::uninitialized);
  u32* coefficients = scratch.data();
  u32* corrections = scratch.data() + terms * dropped * s.n;
  const cuda::ElementwisePlan& plan = s.elementwise_plan(any.basis());
  plan.term_products(coefficients, dropped * s.n, left, right, dropped, s.stream,
                     cuda::CombinationRange{.first_limb = kept, .b_log_gap = b_log_gap});
  s.ntt_inverse(coefficients, any.basis().primes().subspan(kept), terms);
  const cuda::RescalePlan& rescale = s.rescale_plan(rescaler);
  rescale.corrections_sum(coefficients, terms, dropped * s.n, corrections, s.stream);
  s.ntt_forward(corrections, rescaler.kept().primes(), 1);
  plan.linear_combination(out, left, right, {}, {}, false, kept, s.stream,
                          cuda::CombinationRange{.subtrahend = corrections, .scale = &rescale.p_inverse(),
                                                 .b_log_gap = b_log_gap});
}

}  // namespace

void CudaBackend::sum_of_rescaled_products(const ring::Rescaler& rescaler, ring::RnsPoly& x,
                                           std::span<const ring::RnsPoly* const> a,
                                           std::span<const ring::RnsPoly* const> b) const {
  constexpr const char* operation = "sum of rescaled products";
  require(a.size() == b.size() && !a.empty(), "{}: {} left and {} right factors", operation, a.size(), b.size());
  require(a[0] != nullptr, "{}: a null factor", operation);
  const ring::RnsPoly& any = *a[0];
  const auto [left, right, scaled, out] = rescaled_operands(*this, rescaler, x, any, a, b, {}, operation);
  sum_of_rescaled(*state_, rescaler, left, right, -1, out, any);
}

namespace {

// Compact plaintexts checked against the terms and the basis they must be over, and each term's words.
std::vector<const u32*> compact_words(const CudaBackend& backend, std::size_t n, std::size_t terms,
                                      const ring::RnsBasis& basis, const CompactPlaintexts& b, const char* operation) {
  require(terms > 0 && terms == b.terms, "{}: {} left factors for {} compact plaintexts", operation, terms, b.terms);
  require<MismatchError>(b.basis != nullptr && *b.basis == basis && backend.compact_encoding(b.gap) &&
                             b.words.device() == backend.device() && b.words.size() == b.terms * basis.size() * (n / b.gap),
                         "{}: the compact plaintexts ({} words of gap {} over {}) must be this device's, over {}",
                         operation, b.words.size(), b.gap, b.basis ? ring::describe(*b.basis) : std::string("nothing"),
                         ring::describe(basis));
  const std::size_t words = basis.size() * (n / b.gap);
  std::vector<const u32*> right;
  for (std::size_t t = 0; t < b.terms; ++t) right.push_back(b.words.data() + t * words);
  return right;
}

}  // namespace

void CudaBackend::sum_of_rescaled_compact_products(const ring::Rescaler& rescaler, ring::RnsPoly& x,
                                                   std::span<const ring::RnsPoly* const> a,
                                                   const CompactPlaintexts& b) const {
  constexpr const char* operation = "sum of rescaled products by compact plaintexts";
  const std::vector<const u32*> right = compact_words(*this, state_->n, a.size(), rescaler.basis(), b, operation);
  require(a[0] != nullptr, "{}: a null factor", operation);
  const ring::RnsPoly& any = *a[0];
  const auto [left, unused, scaled, out] = rescaled_operands(*this, rescaler, x, any, a, {}, {}, operation);
  sum_of_rescaled(*state_, rescaler, left, right, std::countr_zero(b.gap), out, any);
}

void CudaBackend::sum_of_compact_products(ring::RnsPoly& x, std::span<const ring::RnsPoly* const> a,
                                          const CompactPlaintexts& b) const {
  constexpr const char* operation = "sum of products by compact plaintexts";
  require<MismatchError>(x.form() == ring::PolyForm::ntt, "{}: the output is in {} form; products are pointwise only "
                         "in NTT form", operation, ring::to_string(x.form()));
  const std::vector<const u32*> right = compact_words(*this, state_->n, a.size(), x.basis(), b, operation);
  std::vector<const u32*> left;
  for (const ring::RnsPoly* f : a) {
    require(f != nullptr, "{}: a null factor", operation);
    ring::require_compatible(x, *f, operation);
    left.push_back(device_words(*this, *f, operation));
  }
  auto* out = const_cast<u32*>(device_words(*this, x, operation));
  state_->elementwise_plan(x.basis())
      .linear_combination(out, left, right, {}, {}, false, x.limb_count(), state_->stream,
                          cuda::CombinationRange{.b_log_gap = std::countr_zero(b.gap)});
}

}  // namespace cerium::backend
