#include "cerium/ring/basis_conversion.hpp"

#include <algorithm>
#include <cstring>

#include "cerium/core/check.hpp"
#include "cerium/core/simd.hpp"
#include "cerium/math/ntt.hpp"

namespace cerium::ring {

using math::u32;
using math::u64;

namespace {

// Coefficients per block of the block-wise loops: the working set (a few limbs of a block) stays in L1/L2.
constexpr std::size_t conversion_block = 1024;
constexpr std::size_t combine_block = 1024;

// Limbs of `len` words in one aligned allocation, with mutable and const views.
struct ScratchLimbs {
  AlignedBuffer<u32> buffer;
  std::vector<std::span<u32>> views;
  std::vector<std::span<const u32>> const_views;
  ScratchLimbs(std::size_t count, std::size_t len)
      : buffer(count * limb_stride(len), BufferInit::uninitialized) {
    for (std::size_t i = 0; i < count; ++i) {
      views.emplace_back(buffer.data() + i * limb_stride(len), len);
      const_views.emplace_back(views.back());
    }
  }
  // The first `len` words of each limb (for a last, shorter block).
  std::vector<std::span<u32>> head(std::size_t len) const {
    std::vector<std::span<u32>> h;
    for (auto v : views) h.push_back(v.first(len));
    return h;
  }
};

std::size_t common_length(ConstLimbSpans in, LimbSpans out, std::string_view operation) {
  require(!in.empty(), "{}: no input limbs", operation);
  const std::size_t len = in[0].size();
  for (auto limb : in) require(limb.size() == len, "{}: input limbs of {} and {} words", operation, len, limb.size());
  for (auto limb : out) require(limb.size() == len, "{}: output limbs of {} words for inputs of {}", operation, limb.size(), len);
  return len;
}

void require_basis(const RnsPoly& poly, const RnsBasis& expected, std::string_view operation) {
  require<MismatchError>(!poly.empty(), "{}: the input is an empty polynomial", operation);
  require<MismatchError>(poly.basis() == expected, "{}: the input's basis is {}, expected {}", operation,
                         describe(poly.basis()), describe(expected));
}

// An uninitialized polynomial over basis in the given form, on one shard of the input's first device.
RnsPoly output_like(const RnsPoly& in, RnsBasisPtr basis, PolyForm form) {
  const std::size_t limbs = basis->size();
  return RnsPoly(std::move(basis), PolyOptions{.form = form,
                                                .shards = {{in.shards().front().device(), limbs}},
                                                .init = BufferInit::uninitialized});
}

// out = (x + h - t) * p_inv mod q; out may be x itself.
void subtract_and_scale(std::span<const u32> x, std::span<const u32> t, std::span<u32> out, math::ShoupConstant p_inv,
                        u32 q, u32 h = 0) {
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k] = math::mul_shoup(math::sub_mod(math::add_mod(x[k], h, q), t[k], q), p_inv, q);
  }
}

constexpr u64 negative_flag = u64{1} << 63;

// [r]_q, or [r - P]_q when r carries the negative flag (the centered lift of x mod P).
CERIUM_FORCE_INLINE u32 remainder_mod(u64 r, const math::Modulus& m, u32 p_mod) {
  const u32 negative_mask = 0u - static_cast<u32>(r >> 63);
  return math::sub_mod(math::barrett_reduce(r & ~negative_flag, m), p_mod & negative_mask, m.value);
}

// [(P - 1) / 2]_m for odd P: ([P]_m - 1) * 2^{-1} mod m.
u32 half_mod(u32 p_mod, const math::Modulus& m) {
  return math::mul_mod(math::sub_mod(p_mod, 1 % m.value, m.value), (m.value + 1) / 2, m);
}

std::vector<std::size_t> positions_in(const RnsBasis& sub, const RnsBasis& super, std::string_view what) {
  std::vector<std::size_t> positions;
  for (auto q : sub.primes()) {
    const auto index = super.index_of(q);
    require<MismatchError>(index.has_value(), "{}: prime {} is missing from {}", what, q, describe(super));
    positions.push_back(*index);
  }
  return positions;
}

}  // namespace

// --- BasisConverter ---

BasisConverter::BasisConverter(RnsBasisPtr from, RnsBasisPtr to) : from_(std::move(from)), to_(std::move(to)) {
  require(from_ != nullptr && to_ != nullptr, "basis conversion needs two bases");
  require<MismatchError>(from_->ring_degree() == to_->ring_degree(),
                         "basis conversion between ring degrees {} and {}", from_->ring_degree(), to_->ring_degree());
  for (std::size_t i = 0; i < from_->size(); ++i) q_hat_inv_.push_back(from_->q_hat_inverse(i));
  for (std::size_t j = 0; j < to_->size(); ++j) {
    const auto row = from_->q_hat_mod(to_->modulus(j));
    q_hat_mod_p_.insert(q_hat_mod_p_.end(), row.begin(), row.end());
    for (const u32 f : row) q_hat_mod_p_quotient_.push_back(math::shoup_quotient(f, to_->prime(j)));
  }
}

namespace {

// One coefficient block of a conversion (the vectorized loops of core/simd.hpp, over coefficients):
// y_i = [x_i Q_i^{-1}]_{q_i}, then for each target p_j the sum of [y_i [Q_i]_{p_j}]_{p_j} mod p_j, each product by
// Shoup's method ([Q_i]_{p_j} is fixed; y_i < 2^32 need not be below p_j) and each partial sum reduced, all in
// 32-bit lanes. The result is the canonical residue, so these words equal any exact method's.
struct ConversionBlock {
  const u32* const* in;           // l input limbs, at the block's first coefficient
  u32* const* out;                // m output limbs, likewise
  std::size_t l, m, width;        // primes in and out, coefficients in the block
  const math::ShoupConstant* q_hat_inv;  // l
  const u32* from_primes;         // l
  const u32* q_hat_mod_p;         // [Q_i]_{p_j} at j l + i
  const u32* q_hat_mod_p_quotient;  // their Shoup quotients for p_j
  const u32* to_primes;           // m
  u32* y;                         // l rows of conversion_block words
};

CERIUM_FORCE_INLINE void convert_block_body(const ConversionBlock& c) {
  const std::size_t w = c.width;
  for (std::size_t i = 0; i < c.l; ++i) {
    const u32 q = c.from_primes[i], v = c.q_hat_inv[i].value, vq = c.q_hat_inv[i].quotient;
    const u32* x = c.in[i];
    u32* yi = c.y + i * conversion_block;
    for (std::size_t k = 0; k < w; ++k) yi[k] = math::mul_shoup(x[k], v, vq, q);
  }
  for (std::size_t j = 0; j < c.m; ++j) {
    const u32 p = c.to_primes[j];
    const u32* f = c.q_hat_mod_p + j * c.l;
    const u32* fq = c.q_hat_mod_p_quotient + j * c.l;
    u32* o = c.out[j];
    {
      const u32 f0 = f[0], fq0 = fq[0];
      for (std::size_t k = 0; k < w; ++k) o[k] = math::mul_shoup(c.y[k], f0, fq0, p);
    }
    for (std::size_t i = 1; i < c.l; ++i) {
      const u32* yi = c.y + i * conversion_block;
      const u32 fi = f[i], fqi = fq[i];
      for (std::size_t k = 0; k < w; ++k) o[k] = math::add_mod(o[k], math::mul_shoup(yi[k], fi, fqi, p), p);
    }
  }
}

CERIUM_SIMD_VARIANTS(convert_block, convert_block_body, (const ConversionBlock& c), (c))

}  // namespace

void BasisConverter::convert(ConstLimbSpans in, LimbSpans out) const {
  const std::size_t l = from_->size();
  const std::size_t m = to_->size();
  require(in.size() == l && out.size() == m, "basis conversion from {} to {} primes given {} and {} limbs", l, m,
          in.size(), out.size());
  const std::size_t len = common_length(in, out, "basis conversion");
  const std::size_t blocks = (len + conversion_block - 1) / conversion_block;
  // Coefficient blocks are independent: threads take whole blocks (core/parallel.hpp), each with its own y.
#pragma omp parallel if (blocks > 1 && len * (l + m) >= 65536)
  {
  AlignedBuffer<u32> y(l * conversion_block, BufferInit::uninitialized);
  std::vector<const u32*> in_at(l);
  std::vector<u32*> out_at(m);
#pragma omp for schedule(static)
  for (std::size_t block = 0; block < blocks; ++block) {
    const std::size_t b = block * conversion_block;
    for (std::size_t i = 0; i < l; ++i) in_at[i] = in[i].data() + b;
    for (std::size_t j = 0; j < m; ++j) out_at[j] = out[j].data() + b;
    convert_block({.in = in_at.data(), .out = out_at.data(), .l = l, .m = m,
                   .width = std::min(conversion_block, len - b), .q_hat_inv = q_hat_inv_.data(),
                   .from_primes = from_->primes().data(), .q_hat_mod_p = q_hat_mod_p_.data(),
                   .q_hat_mod_p_quotient = q_hat_mod_p_quotient_.data(), .to_primes = to_->primes().data(),
                   .y = y.data()});
  }
  }
}

RnsPoly BasisConverter::convert(const RnsPoly& in) const {
  require_basis(in, *from_, "basis conversion");
  RnsPoly out = output_like(in, to_, PolyForm::coefficient);
  if (in.form() == PolyForm::coefficient) {
    convert(in.limbs(), out.limbs());
  } else {
    RnsPoly coeff = in.clone();
    coeff.to_coeff();
    convert(std::as_const(coeff).limbs(), out.limbs());
    out.to_ntt();
  }
  return out;
}

// --- ModUp ---

ModUp::ModUp(RnsBasisPtr digit, RnsBasisPtr target) : digit_(std::move(digit)), target_(std::move(target)) {
  require(digit_ != nullptr && target_ != nullptr, "ModUp needs a digit basis and a target basis");
  require<MismatchError>(digit_->ring_degree() == target_->ring_degree(), "ModUp between ring degrees {} and {}",
                         digit_->ring_degree(), target_->ring_degree());
  target_of_digit_ = positions_in(*digit_, *target_, "ModUp target");
  if (auto complement = target_->without(*digit_)) {
    target_of_complement_ = positions_in(*complement, *target_, "ModUp target");
    converter_.emplace(digit_, make_basis(std::move(*complement)));
  }
}

void ModUp::apply(ConstLimbSpans in, LimbSpans out) const {
  require(in.size() == digit_->size() && out.size() == target_->size(),
          "ModUp from {} to {} primes given {} and {} limbs", digit_->size(), target_->size(), in.size(), out.size());
  common_length(in, out, "ModUp");
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::copy(in[i].begin(), in[i].end(), out[target_of_digit_[i]].begin());
  }
  if (!converter_) return;
  std::vector<std::span<u32>> converted;
  for (auto position : target_of_complement_) converted.push_back(out[position]);
  converter_->convert(in, converted);
}

RnsPoly ModUp::apply(const RnsPoly& in) const {
  require<MismatchError>(!in.empty(), "ModUp: the input is an empty polynomial");
  const auto source = positions_in(*digit_, in.basis(), "ModUp input");
  std::vector<std::span<const u32>> digit_limbs;
  for (auto position : source) digit_limbs.push_back(in.limb(position));
  RnsPoly out = output_like(in, target_, in.form());
  if (in.form() == PolyForm::coefficient) {
    apply(digit_limbs, out.limbs());
    return out;
  }
  // NTT form: digit limbs are copied as they are; the conversion runs on a coefficient-form copy of the digit.
  const auto out_limbs = out.limbs();
  for (std::size_t i = 0; i < digit_limbs.size(); ++i) {
    std::copy(digit_limbs[i].begin(), digit_limbs[i].end(), out_limbs[target_of_digit_[i]].begin());
  }
  if (!converter_) return out;
  ScratchLimbs coeff(digit_->size(), in.n());
  // Every limb's transform is its own: one thread each (core/parallel.hpp), the words whatever the count.
#pragma omp parallel for schedule(static) if (digit_limbs.size() > 1 && in.n() >= 2048)
  for (std::size_t i = 0; i < digit_limbs.size(); ++i) {
    std::copy(digit_limbs[i].begin(), digit_limbs[i].end(), coeff.views[i].begin());
    math::ntt_inverse(coeff.views[i], digit_->ntt(i));
  }
  std::vector<std::span<u32>> converted;
  for (auto position : target_of_complement_) converted.push_back(out_limbs[position]);
  converter_->convert(coeff.const_views, converted);
#pragma omp parallel for schedule(static) if (target_of_complement_.size() > 1 && in.n() >= 2048)
  for (std::size_t k = 0; k < target_of_complement_.size(); ++k) {
    const auto position = target_of_complement_[k];
    math::ntt_forward(out_limbs[position], target_->ntt(position));
  }
  return out;
}

// --- ModDown ---

std::uint32_t mod_down_kept_offset(std::uint32_t p_mod, std::size_t dropped_primes, const math::Modulus& m) {
  const u32 k = static_cast<u32>((dropped_primes - 1) / 2) % m.value;
  return math::add_mod(half_mod(p_mod, m), math::mul_mod(k, p_mod, m), m.value);
}

ModDown::ModDown(RnsBasisPtr full, RnsBasisPtr kept, Rounding rounding)
    : full_(std::move(full)), kept_(std::move(kept)), rounding_(rounding) {
  require(full_ != nullptr && kept_ != nullptr, "ModDown needs a full basis and a kept basis");
  require<MismatchError>(full_->ring_degree() == kept_->ring_degree(), "ModDown between ring degrees {} and {}",
                         full_->ring_degree(), kept_->ring_degree());
  full_of_kept_ = positions_in(*kept_, *full_, "ModDown full basis");
  auto dropped = full_->without(*kept_);
  require(dropped.has_value(), "ModDown from {} to {}: no prime to divide by", describe(*full_), describe(*kept_));
  dropped_ = make_basis(std::move(*dropped));
  full_of_dropped_ = positions_in(*dropped_, *full_, "ModDown full basis");
  converter_.emplace(dropped_, kept_);
  for (std::size_t i = 0; i < kept_->size(); ++i) {
    const auto& m = kept_->modulus(i);
    const u32 p_mod = dropped_->product_mod(m);
    p_inv_.emplace_back(static_cast<u32>(math::inv_mod(p_mod, m.value)), m.value);
    h_kept_.push_back(rounding_ == Rounding::nearest ? mod_down_kept_offset(p_mod, dropped_->size(), m) : 0);
  }
  for (std::size_t j = 0; j < dropped_->size(); ++j) {
    h_dropped_.push_back(rounding_ == Rounding::nearest ? half_mod(0, dropped_->modulus(j)) : 0);
  }
}

void ModDown::converted(ConstLimbSpans dropped, LimbSpans v, LimbSpans scratch) const {
  if (rounding_ == Rounding::floor) {
    converter_->convert(dropped, v);
    return;
  }
  std::vector<std::span<const u32>> shifted;
  for (std::size_t j = 0; j < dropped.size(); ++j) {
    const u32 q = dropped_->prime(j);
    const u32 h = h_dropped_[j];
    for (std::size_t k = 0; k < dropped[j].size(); ++k) scratch[j][k] = math::add_mod(dropped[j][k], h, q);
    shifted.push_back(scratch[j]);
  }
  converter_->convert(shifted, v);
}

void ModDown::apply(ConstLimbSpans in, LimbSpans out) const {
  require(in.size() == full_->size() && out.size() == kept_->size(),
          "ModDown from {} to {} primes given {} and {} limbs", full_->size(), kept_->size(), in.size(), out.size());
  const std::size_t len = common_length(in, out, "ModDown");
  const std::size_t block = std::min(combine_block, len);
  const std::size_t blocks = block == 0 ? 0 : (len + block - 1) / block;
  // Threads take whole coefficient blocks, each with its own scratch.
#pragma omp parallel if (blocks > 1 && len * full_->size() >= 65536)
  {
  ScratchLimbs t(kept_->size(), block), scratch(dropped_->size(), block);
  std::vector<std::span<const u32>> dropped(dropped_->size());
#pragma omp for schedule(static)
  for (std::size_t index = 0; index < blocks; ++index) {
    const std::size_t b = index * block;
    const std::size_t w = std::min(block, len - b);
    for (std::size_t j = 0; j < dropped.size(); ++j) dropped[j] = in[full_of_dropped_[j]].subspan(b, w);
    const auto v = t.head(w);
    converted(dropped, v, scratch.head(w));
    for (std::size_t i = 0; i < out.size(); ++i) {
      subtract_and_scale(in[full_of_kept_[i]].subspan(b, w), v[i], out[i].subspan(b, w), p_inv_[i], kept_->prime(i),
                         h_kept_[i]);
    }
  }
  }
}

RnsPoly ModDown::apply(const RnsPoly& in) const {
  require_basis(in, *full_, "ModDown");
  RnsPoly out = output_like(in, kept_, in.form());
  if (in.form() == PolyForm::coefficient) {
    apply(in.limbs(), out.limbs());
    return out;
  }
  // NTT form: the dropped limbs go to coefficient form, the corrections come back to NTT form.
  ScratchLimbs t(kept_->size(), in.n());
  coefficient_corrections(in, t.views);
#pragma omp parallel for schedule(static) if (kept_->size() > 1 && in.n() >= 2048)
  for (std::size_t i = 0; i < kept_->size(); ++i) {
    math::ntt_forward(t.views[i], kept_->ntt(i));
    subtract_and_scale(in.limb(full_of_kept_[i]), t.views[i], out.limb(i), p_inv_[i], kept_->prime(i));
  }
  return out;
}

void ModDown::coefficient_corrections(const RnsPoly& in, LimbSpans t) const {
  const std::size_t n = in.n();
  ScratchLimbs dropped(dropped_->size(), n), scratch(dropped_->size(), n);
#pragma omp parallel for schedule(static) if (dropped_->size() > 1 && n >= 2048)
  for (std::size_t j = 0; j < dropped_->size(); ++j) {
    const auto source = in.limb(full_of_dropped_[j]);
    std::copy(source.begin(), source.end(), dropped.views[j].begin());
    math::ntt_inverse(dropped.views[j], dropped_->ntt(j));
  }
  converted(dropped.const_views, t, scratch.views);
  for (std::size_t i = 0; i < kept_->size(); ++i) {
    // h is added to every coefficient, not a constant polynomial.
    const u32 q = kept_->prime(i);
    for (auto& x : t[i]) x = math::sub_mod(x, h_kept_[i], q);
  }
}

// --- Rescaler ---

Rescaler::Rescaler(RnsBasisPtr basis, std::size_t dropped, Rounding rounding)
    : basis_(std::move(basis)), dropped_(dropped), rounding_(rounding) {
  require(basis_ != nullptr, "rescaling needs a basis");
  require((dropped_ == 1 || dropped_ == 2) && dropped_ < basis_->size(),
          "rescale drops 1 or 2 primes and keeps at least one: cannot drop {} of {}", dropped_, basis_->size());
  const std::size_t l = basis_->size();
  kept_ = make_basis(basis_->sub_basis(0, l - dropped_));
  std::uint64_t p = basis_->prime(l - 1);
  if (dropped_ == 2) {
    const u32 a = basis_->prime(l - 2);
    const u32 b = basis_->prime(l - 1);
    last_inv_ = math::ShoupConstant(static_cast<u32>(math::inv_mod(b % a, a)), a);
    p *= a;
  }
  half_ = rounding_ == Rounding::nearest ? (p - 1) / 2 : p;  // floor: r never exceeds p - 1, so never flagged
  for (std::size_t i = 0; i < kept_->size(); ++i) {
    const auto& m = kept_->modulus(i);
    const auto p_mod = static_cast<u32>(p % m.value);
    p_mod_.push_back(p_mod);
    p_inv_.emplace_back(static_cast<u32>(math::inv_mod(p_mod, m.value)), m.value);
  }
}

// r = x mod P: one prime gives x_b; two primes by Garner, r = x_b + b [(x_a - x_b) b^{-1}]_a in [0, ab).
void Rescaler::remainders(ConstLimbSpans dropped, std::size_t offset, std::span<std::uint64_t> r) const {
  const std::size_t l = basis_->size();
  if (dropped_ == 1) {
    const u32* xb = dropped[0].data() + offset;
    for (std::size_t k = 0; k < r.size(); ++k) r[k] = xb[k];
  } else {
    const math::Modulus& ma = basis_->modulus(l - 2);
    const u32 a = ma.value;
    const u64 b = basis_->prime(l - 1);
    const u32* xa = dropped[0].data() + offset;
    const u32* xb = dropped[1].data() + offset;
    for (std::size_t k = 0; k < r.size(); ++k) {
      const u32 digit = math::mul_shoup(math::sub_mod(xa[k], math::barrett_reduce(xb[k], ma), a), last_inv_, a);
      r[k] = xb[k] + b * digit;
    }
  }
  for (auto& x : r) x |= negative_flag & (0 - static_cast<u64>(x > half_));
}

void Rescaler::correction(std::span<const std::uint64_t> r, std::size_t i, std::span<std::uint32_t> t) const {
  const math::Modulus& m = kept_->modulus(i);
  for (std::size_t k = 0; k < t.size(); ++k) t[k] = remainder_mod(r[k], m, p_mod_[i]);
}

void Rescaler::apply(ConstLimbSpans in, LimbSpans out) const {
  const std::size_t l = basis_->size();
  require(in.size() == l && out.size() == kept_->size(), "rescale from {} to {} primes given {} and {} limbs", l,
          kept_->size(), in.size(), out.size());
  const std::size_t len = common_length(in, out, "rescale");
  const auto dropped = in.subspan(l - dropped_);
  const std::size_t block = std::min(combine_block, len);
  const std::size_t blocks = block == 0 ? 0 : (len + block - 1) / block;
  // Threads take whole coefficient blocks, each with its own remainders.
#pragma omp parallel if (blocks > 1 && len * l >= 65536)
  {
  std::vector<std::uint64_t> r(block);
#pragma omp for schedule(static)
  for (std::size_t index = 0; index < blocks; ++index) {
    const std::size_t b = index * block;
    const std::size_t w = std::min(block, len - b);
    remainders(dropped, b, std::span(r.data(), w));
    for (std::size_t i = 0; i < out.size(); ++i) {
      // One fused pass per limb: out = (x - [r]_q) P^{-1}.
      const math::Modulus& m = kept_->modulus(i);
      const u32 p_mod = p_mod_[i];
      const math::ShoupConstant p_inv = p_inv_[i];
      const u32* x = in[i].data() + b;
      u32* o = out[i].data() + b;
      for (std::size_t k = 0; k < w; ++k) {
        o[k] = math::mul_shoup(math::sub_mod(x[k], remainder_mod(r[k], m, p_mod), m.value), p_inv, m.value);
      }
    }
  }
  }
}

void Rescaler::apply_ntt_form(const RnsPoly& in, LimbSpans out) const {
  const std::size_t l = basis_->size();
  const std::size_t n = in.n();
  ScratchLimbs dropped(dropped_, n);
  for (std::size_t j = 0; j < dropped_; ++j) {
    const auto source = in.limb(l - dropped_ + j);
    std::copy(source.begin(), source.end(), dropped.views[j].begin());
    math::ntt_inverse(dropped.views[j], basis_->ntt(l - dropped_ + j));
  }
  std::vector<std::uint64_t> r(n);
  remainders(dropped.const_views, 0, r);
  // Each thread corrects whole limbs in a buffer of its own.
#pragma omp parallel if (kept_->size() > 1 && n >= 2048)
  {
    AlignedBuffer<u32> t(n, BufferInit::uninitialized);
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < kept_->size(); ++i) {
      correction(r, i, t.span());
      math::ntt_forward(t.span(), kept_->ntt(i));
      subtract_and_scale(in.limb(i), t.span(), out[i], p_inv_[i], kept_->prime(i));
    }
  }
}

RnsPoly mod_down_and_rescale(const ModDown& mod_down, const Rescaler& rescaler, const RnsPoly& in,
                             const RnsPoly* addend) {
  require<MismatchError>(mod_down.kept() == rescaler.basis(),
                         "ModDown then rescale: the ModDown keeps {}, the rescale divides {}",
                         describe(mod_down.kept()), describe(rescaler.basis()));
  require_basis(in, mod_down.full(), "ModDown then rescale");
  require<MismatchError>(in.form() == PolyForm::ntt, "ModDown then rescale takes NTT form, not {} form",
                         to_string(in.form()));
  if (addend != nullptr) {
    require_basis(*addend, rescaler.basis(), "ModDown then rescale (its addend)");
    require<MismatchError>(addend->form() == PolyForm::ntt, "ModDown then rescale: the addend is in {} form, not NTT",
                           to_string(addend->form()));
  }
  const RnsBasis& q = rescaler.basis();
  const RnsBasis& special = mod_down.dropped();
  const std::size_t n = in.n(), limbs = q.size(), kept = rescaler.kept().size(), dropped = limbs - kept;
  // T over Q_l in coefficient form, as ModDown's NTT path computes it.
  ScratchLimbs t(limbs, n);
  mod_down.coefficient_corrections(in, t.views);
  // The ModDown's result plus the addend on D's limbs, in coefficient form: c = (x - T) P^{-1} + a.
  ScratchLimbs c(dropped, n);
  AlignedBuffer<u32> a(n, BufferInit::uninitialized);
  for (std::size_t j = 0; j < dropped; ++j) {
    const std::size_t i = kept + j;
    const u32 qi = q.prime(i);
    const auto x = in.limb(mod_down.full_of_kept_[i]);
    std::copy(x.begin(), x.end(), c.views[j].begin());
    math::ntt_inverse(c.views[j], q.ntt(i));
    subtract_and_scale(c.views[j], t.views[i], c.views[j], mod_down.p_inv_[i], qi);
    if (addend == nullptr) continue;
    const auto source = addend->limb(i);
    std::copy(source.begin(), source.end(), a.span().begin());
    math::ntt_inverse(a.span(), q.ntt(i));
    for (std::size_t k = 0; k < n; ++k) c.views[j][k] = math::add_mod(c.views[j][k], a.span()[k], qi);
  }
  std::vector<std::uint64_t> r(n);
  rescaler.remainders(c.const_views, 0, r);
  // Kept limb i: T_i + P t_i, one forward NTT, then (x_i - that) (P D)^{-1} + a_i D^{-1}.
  RnsPoly out = output_like(in, rescaler.kept_ptr(), PolyForm::ntt);
  // Each thread takes whole kept limbs, with a correction buffer of its own.
#pragma omp parallel if (kept > 1 && n >= 2048)
  {
  AlignedBuffer<u32> correction(n, BufferInit::uninitialized);
#pragma omp for schedule(static)
  for (std::size_t i = 0; i < kept; ++i) {
    const math::Modulus& m = q.modulus(i);
    const u32 qi = m.value;
    const math::ShoupConstant p_mod(special.product_mod(m), qi);
    const math::ShoupConstant pd_inv(
        static_cast<u32>(u64{mod_down.p_inv_[i].value} * rescaler.p_inv_[i].value % qi), qi);
    rescaler.correction(r, i, correction.span());
    auto u = t.views[i];
    const auto t_i = correction.span();
    for (std::size_t k = 0; k < n; ++k) u[k] = math::add_mod(u[k], math::mul_shoup(t_i[k], p_mod, qi), qi);
    math::ntt_forward(u, q.ntt(i));
    const auto x = in.limb(mod_down.full_of_kept_[i]);
    auto o = out.limb(i);
    subtract_and_scale(x, u, o, pd_inv, qi);
    if (addend == nullptr) continue;
    const auto ai = addend->limb(i);
    for (std::size_t k = 0; k < n; ++k) o[k] = math::add_mod(o[k], math::mul_shoup(ai[k], rescaler.p_inv_[i], qi), qi);
  }
  }
  return out;
}

RnsPoly Rescaler::apply(const RnsPoly& in) const {
  require_basis(in, *basis_, "rescale");
  RnsPoly out = output_like(in, kept_, in.form());
  if (in.form() == PolyForm::coefficient) apply(in.limbs(), out.limbs());
  else apply_ntt_form(in, out.limbs());
  return out;
}

void Rescaler::apply_in_place(RnsPoly& x) const {
  require_basis(x, *basis_, "rescale");
  auto views = x.limbs();
  const LimbSpans kept_views = std::span(views).first(kept_->size());
  if (x.form() == PolyForm::coefficient) {
    apply(std::as_const(x).limbs(), kept_views);
  } else {
    apply_ntt_form(x, kept_views);
  }
  x.drop_to(kept_);
}

// --- Convenience ---

RnsPoly mod_up(const RnsPoly& in, RnsBasisPtr digit, RnsBasisPtr target) {
  return ModUp(std::move(digit), std::move(target)).apply(in);
}

RnsPoly mod_down(const RnsPoly& in, RnsBasisPtr kept, Rounding rounding) {
  require<MismatchError>(!in.empty(), "ModDown: the input is an empty polynomial");
  return ModDown(in.basis_ptr(), std::move(kept), rounding).apply(in);
}

RnsPoly rescale(const RnsPoly& in, std::size_t dropped, Rounding rounding) {
  require<MismatchError>(!in.empty(), "rescale: the input is an empty polynomial");
  return Rescaler(in.basis_ptr(), dropped, rounding).apply(in);
}

}  // namespace cerium::ring
