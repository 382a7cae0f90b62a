// The CUDA backend's hybrid key switching: ModUp of every digit, the inner product with the key (an
// automorphism applied to the digits as they are read), and ModDown, each producing exactly the words of
// rlwe::decompose_and_mod_up / key_switch_inner_product / key_switch_apply / ring::ModDown.

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda_backend.hpp"
#include "cerium/core/check.hpp"
#include "cuda_backend_state.hpp"

namespace cerium::backend {
namespace {

using math::u32;

cudaStream_t native(const cuda::Stream& stream) { return static_cast<cudaStream_t>(stream.native_handle()); }

void copy_words(u32* dst, const u32* src, std::size_t words, const cuda::Stream& stream) {
  if (words == 0) return;
  CERIUM_CUDA_CHECK(cudaMemcpyAsync(dst, src, words * sizeof(u32), cudaMemcpyDeviceToDevice, native(stream)));
}

u32* device_words(const ring::RnsPoly& x, Device device, const char* what) {
  require<UnsupportedError>(!x.empty() && x.shards().size() == 1 && x.shards()[0].device() == device,
                            "{} is not in {} memory in one shard; upload it (CudaBackend::upload, or give the "
                            "evaluator host keys: it uploads them)",
                            what, to_string(device));
  return const_cast<u32*>(x.shards()[0].data());
}

void require_context(const CudaBackend& backend, const rlwe::Context& context, const char* operation) {
  require<MismatchError>(&context == backend.context().get() || context.ladder() == backend.context()->ladder(),
                         "{}: the context ({}) is not the CUDA backend's ({})", operation, context.describe(),
                         backend.context()->describe());
}

// Positions of `part`'s primes in `whole` (MismatchError when one is missing).
std::vector<std::size_t> positions(const ring::RnsBasis& part, const ring::RnsBasis& whole) {
  std::vector<std::size_t> out;
  for (const auto q : part.primes()) {
    const auto index = whole.index_of(q);
    require<MismatchError>(index.has_value(), "ModDown: prime {} is missing from {}", q, ring::describe(whole));
    out.push_back(*index);
  }
  return out;
}

bool is_run(const std::vector<std::size_t>& p) {
  for (std::size_t i = 1; i < p.size(); ++i) {
    if (p[i] != p[0] + i) return false;
  }
  return true;
}

// Gathers the limbs at `from` of src into consecutive limbs of dst (one copy when they are consecutive).
void gather(u32* dst, const u32* src, const std::vector<std::size_t>& from, std::size_t n, const cuda::Stream& stream) {
  if (from.empty()) return;
  if (is_run(from)) {
    copy_words(dst, src + from[0] * n, from.size() * n, stream);
    return;
  }
  for (std::size_t i = 0; i < from.size(); ++i) copy_words(dst + i * n, src + from[i] * n, n, stream);
}

// ModDown in NTT form of `batch` polynomials, in[b] = in + b in_stride words (over mod_down.full()) to
// out[b] = out + b out_stride (over mod_down.kept()); out may be in itself when the kept primes are the first
// primes of full. The transforms run once over the whole batch. addends[b] (for b < 2; null: none) is added to
// out[b] in the same pass.
void mod_down_ntt(CudaBackend::State& s, const ring::ModDown& mod_down, const u32* in, u32* out, std::size_t batch,
                  std::size_t in_stride, std::size_t out_stride, std::array<const u32*, 2> addends = {}) {
  const std::size_t n = s.n;
  const auto dropped_at = positions(mod_down.dropped(), mod_down.full());
  const auto kept_at = positions(mod_down.kept(), mod_down.full());
  const std::size_t dropped = dropped_at.size();
  const std::size_t kept = kept_at.size();
  const cuda::ModDownCorrectionPlan& plan = s.mod_down_ntt_plan(mod_down);
  DeviceWords scratch(s.device, batch * (dropped + kept) * n, BufferInit::uninitialized);
  u32* coefficients = scratch.data();
  u32* corrections = scratch.data() + batch * dropped * n;
  if (is_run(dropped_at)) {  // the transform reads the dropped limbs where they are (P's, after Q_l's)
    s.ntt_inverse(coefficients, mod_down.dropped().primes(), batch,
                  {.source = in + dropped_at[0] * n, .source_stride = batch > 1 ? in_stride : 0});
  } else {
    for (std::size_t b = 0; b < batch; ++b)
      gather(coefficients + b * dropped * n, in + b * in_stride, dropped_at, n, s.stream);
    s.ntt_inverse(coefficients, mod_down.dropped().primes(), batch);
  }
  plan.apply(coefficients, corrections, s.stream, batch);  // one launch for the batch
  // The corrections' forward transform finishes the ModDown in its last pass: out = (x - t) P^{-1}, so t never
  // goes back to global memory. The kept limbs of x must be consecutive in full (they are for Q_l in Q_l u P).
  const u32* x = in + (kept_at.empty() ? 0 : kept_at[0]) * n;
  std::size_t x_stride = in_stride;
  if (!is_run(kept_at)) {
    for (std::size_t b = 0; b < batch; ++b) gather(out + b * out_stride, in + b * in_stride, kept_at, n, s.stream);
    x = out;
    x_stride = out_stride;
  }
  const cuda::detail::NttFinish finish{.minuend = x,
                                       .minuend_stride = x_stride,
                                       .addend = {addends[0], batch > 1 ? addends[1] : nullptr},
                                       .out = out,
                                       .out_stride = out_stride,
                                       .scale = static_cast<const u32*>(plan.p_inverse().device_data())};
  s.ntt_forward(corrections, mod_down.kept().primes(), batch, &finish);
}

// ModDown of a key switch's two sums followed by a rescale by D (the level's last 1-2 primes), with the words of
// ModDown, + addends, then rescale, but one forward transform instead of two. Linearity gives it: with T the
// ModDown's correction (coefficient form) and t the rescale's, computed from the ModDown result's D limbs
// c_D = (x_D + P a_D - T_D) P^{-1} (coefficient form), the result on kept limb i is
//   ((x_i - NTT(T_i)) P^{-1} + a_i - NTT(t_i)) D^{-1} = (x_i - NTT(T_i + P t_i)) (P D)^{-1} + a_i D^{-1}.
// in: sum b at in + b stride over Q_l u P, NTT form; rewritten in place (its first kept limbs hold the result,
// the others are left in coefficient form).
void mod_down_rescale_ntt(CudaBackend::State& s, const ring::ModDown& mod_down, const ring::Rescaler& rescaler,
                          u32* in, std::size_t stride, std::array<const u32*, 2> addends) {
  const std::size_t n = s.n;
  const ModDownRescaleTables& tables = s.mod_down_rescale_tables(mod_down, rescaler);
  const cuda::ModDownCorrectionPlan& plan = s.mod_down_ntt_plan(mod_down);
  const std::size_t special = mod_down.dropped().size(), limbs = rescaler.basis().size();
  const std::size_t kept = rescaler.kept().size(), dropped = limbs - kept;
  // The layout read below: Q_l's limbs, then P's.
  const auto q_at = positions(rescaler.basis(), mod_down.full()), p_at = positions(mod_down.dropped(), mod_down.full());
  require<MismatchError>(is_run(q_at) && q_at[0] == 0 && is_run(p_at) && p_at[0] == limbs,
                         "ModDown with a rescale: {} is not Q_l = {} followed by P = {}",
                         ring::describe(mod_down.full()), ring::describe(rescaler.basis()),
                         ring::describe(mod_down.dropped()));
  // x_D + P a_D in NTT form, so that one inverse transform gives the addend's share of c_D too.
  const cuda::ElementwisePlan& on_dropped = s.elementwise_plan(*tables.dropped);
  for (std::size_t b = 0; b < 2; ++b) {
    if (addends[b] == nullptr) continue;
    const u32* a_dropped = addends[b] + kept * n;
    on_dropped.linear_combination(in + b * stride + kept * n, {}, {}, std::span(&a_dropped, 1), tables.p_mod_dropped,
                                  true, dropped, s.stream);
  }
  // D's and P's limbs of both sums (consecutive in Q_l u P) to coefficient form in place, in one transform.
  s.ntt_inverse(in + kept * n, std::span(mod_down.full().primes()).subspan(kept, dropped + special), 2,
                {.poly_stride = stride});
  // The ModDown's corrections T over Q_l read from the sums' P limbs, with P t_i added on the kept limbs, t the
  // rescale's correction of c_D = (x_D + P a_D - T_D) P^{-1}: both sums in one launch.
  DeviceWords scratch(s.device, 2 * limbs * n, BufferInit::uninitialized);
  u32* corrections = scratch.data();
  plan.apply_rescaled({.dropped_coefficients = in + limbs * n,
                       .in_stride = stride,
                       .x_dropped = in + kept * n,
                       .x_stride = stride,
                       .batch = 2},
                      corrections, s.rescale_plan(rescaler), tables.p_mod, s.stream);
  // One forward transform of both sums' corrections (D's limbs too, whose results are dropped) finishing
  // (x - T') (P D)^{-1} + a D^{-1} in place.
  const cuda::detail::NttFinish finish{.minuend = in,
                                       .minuend_stride = stride,
                                       .addend = {addends[0], addends[1]},
                                       .addend_scale = static_cast<const u32*>(tables.d_inverse.device_data()),
                                       .out = in,
                                       .out_stride = stride,
                                       .scale = static_cast<const u32*>(tables.pd_inverse.device_data())};
  s.ntt_forward(corrections, rescaler.basis().primes(), 2, &finish);
}

// count polynomials over basis in one allocation, consecutive (words apart as a batch of the NTT expects).
std::vector<ring::RnsPoly> batch_of(const CudaBackend::State& s, const ring::RnsBasisPtr& basis, std::size_t count) {
  auto storage = DeviceWords::slices(s.device, count, basis->size() * s.n, BufferInit::uninitialized);
  std::vector<ring::RnsPoly> out;
  out.reserve(count);
  for (auto& words : storage) out.emplace_back(basis, ring::PolyForm::ntt, std::move(words));
  return out;
}

// ModUp's inverse NTT and every digit's conversion, in NTT form except that the limbs that the forward transform
// makes are still in coefficient form (it runs next, alone or fused with the inner product). own_limbs: the
// digits' own limbs (copied in NTT form from the input), which that transform skips.
rlwe::DecomposedPoly convert_digits(CudaBackend::State& s, const rlwe::Context& context, const ring::RnsPoly& y,
                                    int level, NttSkip& own_limbs) {
  const u32* in = device_words(y, s.device, "the polynomial to key-switch");
  // One inverse NTT of every limb serves all digits.
  DeviceWords coefficients(s.device, y.limb_count() * s.n, BufferInit::uninitialized);
  s.ntt_inverse(coefficients.data(), y.basis().primes(), 1, {.source = in});
  const std::size_t digits = context.digit_count(level);
  const auto& qp = context.qp_basis(level);
  // The digits in one allocation, so that one forward NTT (per pass) covers all of them.
  rlwe::DecomposedPoly out{level, batch_of(s, qp, digits)};
  // Every digit's conversion in one launch; the digit's own limbs are copied in NTT form from the input.
  std::vector<const cuda::ModUpPlan*> plans;
  std::vector<const u32*> sources, copies;
  std::vector<u32*> targets;
  for (std::size_t d = 0; d < digits; ++d) {
    const std::size_t first = context.digit_first_prime(d) * s.n;
    plans.push_back(&s.mod_up_plan(level, d));
    sources.push_back(coefficients.data() + first);
    copies.push_back(in + first);
    targets.push_back(device_words(out.digits[d], s.device, "a ModUp digit"));
  }
  cuda::apply_mod_up_digits(plans, sources, targets, copies, s.stream);
  // Digit d's own limbs are Q_l's [d alpha, min((d + 1) alpha, l)) (digits are consecutive runs of alpha primes).
  own_limbs = NttSkip{.stride = context.alpha(), .width = context.alpha(),
                      .limit = y.limb_count()};
  return out;
}

// The key's digits on the device, as the inner product reads them.
struct KeyWords {
  std::vector<const u32*> b, a;
};
KeyWords key_words(const CudaBackend::State& s, const rlwe::SwitchingKey& key, std::size_t digits) {
  KeyWords k;
  for (std::size_t d = 0; d < digits; ++d) {
    k.b.push_back(device_words(key.b(d), s.device, "the switching key"));
    const ring::RnsPoly* a = key.stored_a(d);
    require<UnsupportedError>(a != nullptr, "the CUDA backend needs switching keys uploaded expanded "
                                            "(CudaBackend::upload expands seeded keys)");
    k.a.push_back(device_words(*a, s.device, "the switching key"));
  }
  return k;
}

// ModDown of both inner-product sums in place (Q_l is the first part of Q_l u P), their transforms as one batch,
// with the addends and optionally the rescale.
std::array<ring::RnsPoly, 2> mod_down_sums(CudaBackend::State& s, const rlwe::Context& context, int level,
                                           std::vector<ring::RnsPoly>& sums,
                                           std::array<const ring::RnsPoly*, 2> addends,
                                           const ring::Rescaler* rescaler) {
  u32* out0 = device_words(sums[0], s.device, "a key-switch sum");
  u32* out1 = device_words(sums[1], s.device, "a key-switch sum");
  const ring::ModDown& down = context.mod_down(level);
  std::array<const u32*, 2> addend_words{};
  for (std::size_t i = 0; i < 2; ++i) {
    if (addends[i] == nullptr) continue;
    const ring::RnsPoly& a = *addends[i];
    require<MismatchError>(a.form() == ring::PolyForm::ntt && a.basis() == down.kept(),
                           "key switching: addend {} must be in NTT form over {}; it is in {} form over {}", i,
                           ring::describe(down.kept()), ring::to_string(a.form()), ring::describe(a.basis()));
    addend_words[i] = device_words(a, s.device, "a key-switch addend");
  }
  const std::size_t stride = static_cast<std::size_t>(out1 - out0);
  if (rescaler != nullptr) {
    require<MismatchError>(rescaler->basis() == down.kept(),
                           "key switching with a rescale: the rescale is over {}, the key switch's result over {}",
                           ring::describe(rescaler->basis()), ring::describe(down.kept()));
    mod_down_rescale_ntt(s, down, *rescaler, out0, stride, addend_words);
  } else {
    mod_down_ntt(s, down, out0, out0, 2, stride, stride, addend_words);
  }
  const ring::RnsBasisPtr& result = rescaler != nullptr ? rescaler->kept_ptr() : down.kept_ptr();
  std::array<ring::RnsPoly, 2> sum{std::move(sums[0]), std::move(sums[1])};
  sum[0].drop_to(result);
  sum[1].drop_to(result);
  return sum;
}

std::vector<const u32*> digit_words(const CudaBackend::State& s, const rlwe::DecomposedPoly& decomposed) {
  std::vector<const u32*> words;
  for (const ring::RnsPoly& digit : decomposed.digits) words.push_back(device_words(digit, s.device, "a ModUp digit"));
  return words;
}

}  // namespace

rlwe::DecomposedPoly CudaBackend::mod_up(const rlwe::Context& context, const ring::RnsPoly& y, int level) const {
  require_context(*this, context, "ModUp");
  rlwe::require_key_switch_input(context, y, level);
  State& s = *state_;
  NttSkip own_limbs;
  rlwe::DecomposedPoly out = convert_digits(s, context, y, level, own_limbs);
  if (!out.digits.empty())
    s.ntt_forward(device_words(out.digits[0], s.device, "a ModUp digit"), context.qp_basis(level)->primes(),
                  out.digits.size(), nullptr, own_limbs);
  return out;
}

std::array<ring::RnsPoly, 2> CudaBackend::key_switch(const rlwe::Context& context, const ring::RnsPoly& y, int level,
                                                     const rlwe::SwitchingKey& key,
                                                     std::array<const ring::RnsPoly*, 2> addends,
                                                     const ring::Rescaler* rescaler) const {
  require_context(*this, context, "key switching");
  rlwe::require_key_switch_input(context, y, level);
  State& s = *state_;
  NttSkip own_limbs;
  rlwe::DecomposedPoly decomposed = convert_digits(s, context, y, level, own_limbs);
  rlwe::require_key_switch_apply_inputs(context, decomposed, key, nullptr);
  const std::size_t digits = decomposed.digits.size();
  const KeyWords k = key_words(s, key, digits);
  const std::vector<const u32*> words = digit_words(s, decomposed);
  auto sums = batch_of(s, context.qp_basis(level), 2);
  u32* out0 = device_words(sums[0], s.device, "a key-switch sum");
  u32* out1 = device_words(sums[1], s.device, "a key-switch sum");
  const cuda::KeySwitchInnerProductPlan& plan = s.inner_product_plan(level);
  const cuda::detail::InnerProductLaunch ip = plan.launch_args(words, k.b, k.a, out0, out1, s.stream);
  // ModUp's forward transform and the inner product in one: the extended digits never reach global memory.
  u32* first_digit = device_words(decomposed.digits[0], s.device, "a ModUp digit");
  if (!s.ntt_forward_inner_product(first_digit, context.qp_basis(level)->primes(), digits, own_limbs, ip)) {
    s.ntt_forward(first_digit, context.qp_basis(level)->primes(), digits, nullptr, own_limbs);
    plan.apply(words, k.b, k.a, out0, out1, s.stream);
  }
  return mod_down_sums(s, context, level, sums, addends, rescaler);
}

std::array<ring::RnsPoly, 2> CudaBackend::key_switch_apply(const rlwe::Context& context,
                                                           const rlwe::DecomposedPoly& decomposed,
                                                           const rlwe::SwitchingKey& key,
                                                           const ring::Automorphism* automorphism) const {
  return key_switch_apply(context, decomposed, key, automorphism, {nullptr, nullptr});
}

std::array<ring::RnsPoly, 2> CudaBackend::key_switch_apply(const rlwe::Context& context,
                                                           const rlwe::DecomposedPoly& decomposed,
                                                           const rlwe::SwitchingKey& key,
                                                           const ring::Automorphism* automorphism,
                                                           std::array<const ring::RnsPoly*, 2> addends) const {
  return switch_keys(context, decomposed, key, automorphism, addends, nullptr);
}

std::array<ring::RnsPoly, 2> CudaBackend::key_switch_apply(const rlwe::Context& context,
                                                           const rlwe::DecomposedPoly& decomposed,
                                                           const rlwe::SwitchingKey& key,
                                                           const ring::Automorphism* automorphism,
                                                           std::array<const ring::RnsPoly*, 2> addends,
                                                           const ring::Rescaler& rescaler) const {
  return switch_keys(context, decomposed, key, automorphism, addends, &rescaler);
}

std::array<ring::RnsPoly, 2> CudaBackend::switch_keys(const rlwe::Context& context,
                                                      const rlwe::DecomposedPoly& decomposed,
                                                      const rlwe::SwitchingKey& key,
                                                      const ring::Automorphism* automorphism,
                                                      std::array<const ring::RnsPoly*, 2> addends,
                                                      const ring::Rescaler* rescaler) const {
  auto sums = inner_product_sums(context, decomposed, key, automorphism);
  return mod_down_sums(*state_, context, decomposed.level, sums, addends, rescaler);
}

std::vector<ring::RnsPoly> CudaBackend::inner_product_sums(const rlwe::Context& context,
                                                           const rlwe::DecomposedPoly& decomposed,
                                                           const rlwe::SwitchingKey& key,
                                                           const ring::Automorphism* automorphism) const {
  require_context(*this, context, "key switching");
  rlwe::require_key_switch_apply_inputs(context, decomposed, key, automorphism);
  State& s = *state_;
  const int level = decomposed.level;
  const KeyWords k = key_words(s, key, context.digit_count(level));
  const cuda::AutomorphismPlan* permutation = automorphism ? &s.automorphism_plan(*automorphism) : nullptr;
  auto sums = batch_of(s, context.qp_basis(level), 2);
  u32* out0 = device_words(sums[0], s.device, "a key-switch sum");
  u32* out1 = device_words(sums[1], s.device, "a key-switch sum");
  s.inner_product_plan(level).apply(digit_words(s, decomposed), k.b, k.a, out0, out1, s.stream, permutation);
  return sums;
}

std::array<ring::RnsPoly, 2> CudaBackend::key_switch_inner_product(const rlwe::Context& context,
                                                                   const rlwe::DecomposedPoly& decomposed,
                                                                   const rlwe::SwitchingKey& key,
                                                                   const ring::Automorphism* automorphism) const {
  auto sums = inner_product_sums(context, decomposed, key, automorphism);
  return {std::move(sums[0]), std::move(sums[1])};
}

ring::RnsPoly CudaBackend::mod_down(const ring::ModDown& down, const ring::RnsPoly& y) const {
  State& s = *state_;
  const u32* in = device_words(y, s.device, "the polynomial to ModDown");
  require<MismatchError>(y.basis() == down.full(), "ModDown: the polynomial is over {}, the ModDown from {}",
                         ring::describe(y.basis()), ring::describe(down.full()));
  ring::RnsPoly out = allocate(down.kept_ptr(), {.form = y.form(), .init = BufferInit::uninitialized});
  u32* o = device_words(out, s.device, "a ModDown result");
  if (y.form() == ring::PolyForm::coefficient) {
    s.mod_down_coefficient_plan(down).apply(in, o, s.stream);
  } else {
    mod_down_ntt(s, down, in, o, 1, 0, 0);
  }
  return out;
}

}  // namespace cerium::backend
