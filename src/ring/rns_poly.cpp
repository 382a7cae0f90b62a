#include "cerium/ring/rns_poly.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "cerium/core/check.hpp"
#include "cerium/core/simd.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/math/ntt.hpp"

namespace cerium::ring {

using math::u128;
using math::u32;
using math::u64;

std::vector<ShardSpec> split_limbs(std::size_t limb_count, std::span<const Device> devices) {
  require(!devices.empty(), "cannot split {} limbs over no devices", limb_count);
  std::vector<ShardSpec> shards;
  const std::size_t base = limb_count / devices.size();
  const std::size_t extra = limb_count % devices.size();
  for (std::size_t d = 0; d < devices.size(); ++d) {
    const std::size_t count = base + (d < extra ? 1 : 0);
    if (count != 0) shards.push_back({devices[d], count});
  }
  return shards;
}

RnsShard::RnsShard(Device device, std::size_t first_limb, std::size_t limb_count, std::size_t n, BufferInit init)
    : device_(device),
      first_limb_(first_limb),
      limb_count_(limb_count),
      n_(n),
      storage_(device.is_remote() ? DeviceWords() : DeviceWords(device, limb_count * limb_stride(n), init)) {}

void RnsShard::resize_limbs(std::size_t limb_count) {
  require(is_remote() || limb_count * stride() <= storage_.size(),
          "a shard with storage for {} limbs cannot hold {}", storage_.size() / stride(), limb_count);
  limb_count_ = limb_count;
}

std::uint32_t* RnsShard::host_words() {
  require<UnsupportedError>(!is_remote(),
                            "limbs {}..{} of this polynomial are held by rank {} of the device mesh, not here: "
                            "compute on them through the sharded backend, or download the polynomial (a collective) "
                            "first",
                            first_limb_, first_limb_ + limb_count_ - 1, device_.index);
  require<UnsupportedError>(device_.host_accessible(),
                            "limbs {}..{} of this polynomial are in {} memory, which host code cannot read: compute "
                            "on them with the device's backend, or download the polynomial (copy_to(Device::cpu()) "
                            "or the backend's download) first",
                            first_limb_, first_limb_ + limb_count_ - 1, to_string(device_));
  return storage_.data();
}

// Copies only the live limbs (a shard keeps its storage when limbs are dropped).
RnsShard RnsShard::copy_to(Device target) const {
  if (is_remote()) return RnsShard(device_, first_limb_, limb_count_, n_, DeviceWords());
  return RnsShard(target, first_limb_, limb_count_, n_, storage_.copy_to(target, limb_count_ * stride()));
}

RnsShard RnsShard::borrow(std::size_t first, std::size_t count) const {
  require(first + count <= limb_count_, "limbs {}..{} of a shard of {} limbs", first, first + count, limb_count_);
  if (is_remote()) return RnsShard(device_, first_limb_ + first, count, n_, DeviceWords());
  // The view's storage holds exactly its limbs: a view cannot be grown past them.
  auto* words = const_cast<std::uint32_t*>(storage_.data()) + first * stride();
  return RnsShard(device_, first_limb_ + first, count, n_, DeviceWords::borrow(device_, words, count * stride()));
}

RnsShard RnsShard::clone() const { return copy_to(device_); }

RnsPoly::RnsPoly(RnsBasisPtr basis, PolyOptions options)
    : basis_(std::move(basis)), form_(options.form) {
  require(basis_ != nullptr, "an RNS polynomial needs a basis");
  limb_count_ = basis_->size();
  if (options.shards.empty()) options.shards.push_back({Device::cpu(), limb_count_});
  std::size_t first = 0;
  for (const auto& spec : options.shards) {
    require(spec.limb_count >= 1, "shard on {} holds no limbs; leave it out of the layout", to_string(spec.device));
    shards_.emplace_back(spec.device, first, spec.limb_count, basis_->ring_degree(), options.init);
    first += spec.limb_count;
  }
  require<MismatchError>(first == limb_count_, "the shard layout holds {} limbs, the basis ({}) has {}", first,
                         describe(*basis_), limb_count_);
}

RnsPoly::RnsPoly(RnsBasisPtr basis, PolyForm form, DeviceWords storage) : basis_(std::move(basis)), form_(form) {
  require(basis_ != nullptr, "an RNS polynomial needs a basis");
  limb_count_ = basis_->size();
  const std::size_t n = basis_->ring_degree();
  require<MismatchError>(storage.size() >= limb_count_ * limb_stride(n),
                         "storage of {} words cannot hold {} limbs of {} words", storage.size(), limb_count_,
                         limb_stride(n));
  const Device device = storage.device();
  shards_.push_back(RnsShard(device, 0, limb_count_, n, std::move(storage)));
}

RnsPoly RnsPoly::clone() const {
  RnsPoly copy;
  copy.basis_ = basis_;
  copy.form_ = form_;
  copy.limb_count_ = limb_count_;
  copy.shards_.reserve(shards_.size());
  for (const auto& s : shards_) copy.shards_.push_back(s.clone());
  return copy;
}

RnsPoly RnsPoly::copy_to(Device device) const {
  RnsPoly copy;
  copy.basis_ = basis_;
  copy.form_ = form_;
  copy.limb_count_ = limb_count_;
  copy.shards_.reserve(shards_.size());
  for (const auto& s : shards_) copy.shards_.push_back(s.copy_to(device));
  return copy;
}

RnsPoly RnsPoly::from_shards(RnsBasisPtr basis, PolyForm form, std::vector<RnsShard> shards) {
  require(basis != nullptr, "an RNS polynomial needs a basis");
  RnsPoly poly;
  poly.basis_ = std::move(basis);
  poly.form_ = form;
  poly.limb_count_ = poly.basis_->size();
  std::size_t first = 0;
  for (auto& s : shards) {
    require<MismatchError>(s.n_ == poly.basis_->ring_degree(), "a shard of degree {} for a basis of degree {}", s.n_,
                           poly.basis_->ring_degree());
    if (s.limb_count_ == 0) continue;
    s.first_limb_ = first;
    first += s.limb_count_;
    poly.shards_.push_back(std::move(s));
  }
  require<MismatchError>(first == poly.limb_count_, "the shards hold {} limbs, the basis ({}) has {}", first,
                         describe(*poly.basis_), poly.limb_count_);
  return poly;
}

std::vector<RnsShard> RnsPoly::release_shards() {
  std::vector<RnsShard> shards = std::move(shards_);
  shards_.clear();
  basis_.reset();
  limb_count_ = 0;
  return shards;
}

bool RnsPoly::host_accessible() const {
  return std::all_of(shards_.begin(), shards_.end(), [](const RnsShard& s) { return s.device().host_accessible(); });
}

std::uint32_t reduce_signed(std::int64_t c, std::uint32_t q) {
  const u64 magnitude = c < 0 ? 0 - static_cast<u64>(c) : static_cast<u64>(c);
  const auto r = static_cast<u32>(magnitude % q);
  return c < 0 ? math::neg_mod(r, q) : r;
}

RnsPoly RnsPoly::from_signed(RnsBasisPtr basis, std::span<const std::int64_t> coefficients, PolyOptions options) {
  const PolyForm target = options.form;
  options.form = PolyForm::coefficient;
  options.init = BufferInit::uninitialized;
  RnsPoly poly(std::move(basis), std::move(options));
  require(coefficients.size() == poly.n(), "{} signed coefficients given for a polynomial of degree {}",
          coefficients.size(), poly.n());
  for (std::size_t i = 0; i < poly.limb_count(); ++i) {
    const u32 q = poly.basis().prime(i);
    auto limb = poly.limb(i);
    for (std::size_t k = 0; k < limb.size(); ++k) limb[k] = reduce_signed(coefficients[k], q);
  }
  if (target == PolyForm::ntt) poly.to_ntt();
  return poly;
}

// Garner's mixed-radix reconstruction on the first m primes, where m is the fewest whose product reaches 2^64
// (all of them if Q < 2^64); the product then fits in 128 bits. A representative that fits in int64 is one of
// the two lifts of that partial value, and the remaining residues confirm which.
std::vector<std::int64_t> RnsPoly::to_signed() const {
  require<MismatchError>(form_ == PolyForm::coefficient,
                         "signed coefficients need coefficient form; the polynomial is in {} form", to_string(form_));
  const RnsBasis& b = *basis_;
  const std::size_t l = limb_count_;
  std::size_t m = 0;
  u128 prefix = 1;
  constexpr u128 two64 = u128{1} << 64;
  while (m < l && prefix < two64) prefix *= b.prime(m++);
  // inverse[i] = (q_0 ... q_{i-1})^{-1} mod q_i.
  std::vector<u32> inverse(m, 1);
  for (std::size_t i = 1; i < m; ++i) {
    u64 partial = 1;
    for (std::size_t j = 0; j < i; ++j) partial = partial * (b.prime(j) % b.prime(i)) % b.prime(i);
    inverse[i] = static_cast<u32>(math::inv_mod(partial, b.prime(i)));
  }
  const auto limb_views = limbs();
  constexpr u128 int64_limit = u128{1} << 63;  // |x| <= 2^63 for negatives, < 2^63 for non-negatives
  std::vector<std::int64_t> result(n());
  for (std::size_t k = 0; k < n(); ++k) {
    u128 value = limb_views[0][k];
    u128 radix = b.prime(0);
    for (std::size_t i = 1; i < m; ++i) {
      const u32 q = b.prime(i);
      const auto current = static_cast<u32>(value % q);
      const u64 digit = static_cast<u64>(math::sub_mod(limb_views[i][k], current, q)) * inverse[i] % q;
      value += static_cast<u128>(digit) * radix;
      radix *= q;
    }
    bool negative = false;
    if (m == l) {
      negative = value > prefix / 2;  // centered: (-Q/2, Q/2]
    } else {
      negative = value >= int64_limit;
    }
    const u128 magnitude = negative ? prefix - value : value;
    const bool fits = negative ? magnitude <= int64_limit : magnitude < int64_limit;
    bool consistent = fits;
    const std::int64_t x =
        !fits ? 0
        : negative ? static_cast<std::int64_t>(0 - static_cast<u64>(magnitude))
                   : static_cast<std::int64_t>(static_cast<u64>(magnitude));
    for (std::size_t i = m; consistent && i < l; ++i) consistent = reduce_signed(x, b.prime(i)) == limb_views[i][k];
    require(consistent,
            "coefficient {} does not fit in int64: its centered representative modulo the basis ({}) has more "
            "than 63 bits",
            k, describe(b));
    result[k] = x;
  }
  return result;
}

std::vector<ShardSpec> RnsPoly::shard_layout() const {
  std::vector<ShardSpec> layout;
  for (const auto& s : shards_) layout.push_back({s.device_, s.limb_count_});
  return layout;
}

std::span<std::uint32_t> RnsPoly::limb(std::size_t i) {
  require(i < limb_count_, "limb {} of a polynomial with {} limbs", i, limb_count_);
  for (auto& s : shards_) {
    if (i < s.first_limb_ + s.limb_count_) return s.limb(i - s.first_limb_);
  }
  return {};  // unreachable: the shards cover every limb
}

std::span<const std::uint32_t> RnsPoly::limb(std::size_t i) const {
  require(i < limb_count_, "limb {} of a polynomial with {} limbs", i, limb_count_);
  for (const auto& s : shards_) {
    if (i < s.first_limb_ + s.limb_count_) return s.limb(i - s.first_limb_);
  }
  return {};
}

std::vector<std::span<std::uint32_t>> RnsPoly::limbs() {
  std::vector<std::span<std::uint32_t>> views;
  views.reserve(limb_count_);
  for (auto& s : shards_) {
    for (std::size_t j = 0; j < s.limb_count_; ++j) views.push_back(s.limb(j));
  }
  return views;
}

std::vector<std::span<const std::uint32_t>> RnsPoly::limbs() const {
  std::vector<std::span<const std::uint32_t>> views;
  views.reserve(limb_count_);
  for (const auto& s : shards_) {
    for (std::size_t j = 0; j < s.limb_count_; ++j) views.push_back(s.limb(j));
  }
  return views;
}

void RnsPoly::set_zero() {
  for (auto& s : shards_) s.storage_.fill_zero();
}

void RnsPoly::to_ntt() {
  if (form_ == PolyForm::ntt) return;
  // Limbs are independent: one thread each (core/parallel.hpp), the words whatever the count.
#pragma omp parallel for schedule(static) if (limb_count_ > 1 && n() >= 2048)
  for (std::size_t i = 0; i < limb_count_; ++i) math::ntt_forward(limb(i), basis_->ntt(i));
  form_ = PolyForm::ntt;
}

void RnsPoly::to_coeff() {
  if (form_ == PolyForm::coefficient) return;
#pragma omp parallel for schedule(static) if (limb_count_ > 1 && n() >= 2048)
  for (std::size_t i = 0; i < limb_count_; ++i) math::ntt_inverse(limb(i), basis_->ntt(i));
  form_ = PolyForm::coefficient;
}

namespace {

// The limb-wise passes, vectorized over coefficients (core/simd.hpp); products by math::mul_mod_montgomery, which
// vectorizes and gives mul_mod's words.
enum class Pass { add, subtract, multiply };

CERIUM_FORCE_INLINE void limb_pass_body(Pass pass, u32* a, const u32* b, std::size_t n, math::Modulus m) {
  const u32 q = m.value;
  switch (pass) {
    case Pass::add:
      for (std::size_t k = 0; k < n; ++k) a[k] = math::add_mod(a[k], b[k], q);
      break;
    case Pass::subtract:
      for (std::size_t k = 0; k < n; ++k) a[k] = math::sub_mod(a[k], b[k], q);
      break;
    case Pass::multiply:
      for (std::size_t k = 0; k < n; ++k) a[k] = math::mul_mod_montgomery(a[k], b[k], m);
      break;
  }
}

CERIUM_FORCE_INLINE void scale_limb_body(u32* a, std::size_t n, u32 w, u32 w_quotient, u32 q) {
  for (std::size_t k = 0; k < n; ++k) a[k] = math::mul_shoup(a[k], w, w_quotient, q);
}

CERIUM_FORCE_INLINE void negate_limb_body(u32* a, std::size_t n, u32 q) {
  for (std::size_t k = 0; k < n; ++k) a[k] = math::neg_mod(a[k], q);
}

CERIUM_SIMD_VARIANTS(limb_pass, limb_pass_body, (Pass pass, u32* a, const u32* b, std::size_t n, math::Modulus m),
                     (pass, a, b, n, m))
CERIUM_SIMD_VARIANTS(scale_limb, scale_limb_body, (u32 * a, std::size_t n, u32 w, u32 w_quotient, u32 q),
                     (a, n, w, w_quotient, q))
CERIUM_SIMD_VARIANTS(negate_limb, negate_limb_body, (u32 * a, std::size_t n, u32 q), (a, n, q))

}  // namespace

void require_compatible(const RnsPoly& a, const RnsPoly& b, std::string_view operation) {
  require<MismatchError>(!a.empty() && !b.empty(), "{}: an operand is an empty polynomial", operation);
  require<MismatchError>(a.basis_ptr() == b.basis_ptr() || a.basis() == b.basis(),
                         "{}: operands have different bases: {} vs {}", operation, describe(a.basis()),
                         describe(b.basis()));
  require<MismatchError>(a.form() == b.form(), "{}: operands are in different forms: {} vs {}", operation,
                         to_string(a.form()), to_string(b.form()));
}

RnsPoly& RnsPoly::operator+=(const RnsPoly& other) {
  require_compatible(*this, other, "add");
  for (std::size_t i = 0; i < limb_count_; ++i) {
    limb_pass(Pass::add, limb(i).data(), other.limb(i).data(), n(), basis_->modulus(i));
  }
  return *this;
}

RnsPoly& RnsPoly::operator-=(const RnsPoly& other) {
  require_compatible(*this, other, "subtract");
  for (std::size_t i = 0; i < limb_count_; ++i) {
    limb_pass(Pass::subtract, limb(i).data(), other.limb(i).data(), n(), basis_->modulus(i));
  }
  return *this;
}

RnsPoly& RnsPoly::operator*=(const RnsPoly& other) {
  require_compatible(*this, other, "multiply");
  require<MismatchError>(form_ == PolyForm::ntt,
                         "multiply: operands are in {} form; the ring product is pointwise only in NTT form",
                         to_string(form_));
  for (std::size_t i = 0; i < limb_count_; ++i) {
    limb_pass(Pass::multiply, limb(i).data(), other.limb(i).data(), n(), basis_->modulus(i));
  }
  return *this;
}

void RnsPoly::negate() {
  for (std::size_t i = 0; i < limb_count_; ++i) negate_limb(limb(i).data(), n(), basis_->prime(i));
}

void RnsPoly::multiply_scalar(std::span<const std::uint32_t> scalars) {
  require(scalars.size() == limb_count_, "{} scalars for a polynomial of {} limbs", scalars.size(), limb_count_);
  for (std::size_t i = 0; i < limb_count_; ++i) {
    const u32 q = basis_->prime(i);
    require(scalars[i] < q, "scalar {} for limb {} is not reduced modulo {}", scalars[i], i, q);
    const math::ShoupConstant w(scalars[i], q);
    scale_limb(limb(i).data(), n(), w.value, w.quotient, q);
  }
}

void RnsPoly::multiply_integer(std::int64_t c) {
  std::vector<std::uint32_t> scalars(limb_count_);
  for (std::size_t i = 0; i < limb_count_; ++i) scalars[i] = reduce_signed(c, basis_->prime(i));
  multiply_scalar(scalars);
}

void RnsPoly::drop_last_limbs(std::size_t count) {
  require(count < limb_count_, "cannot drop {} of {} limbs: at least one must stay", count, limb_count_);
  if (count == 0) return;
  drop_to(make_basis(basis_->sub_basis(0, limb_count_ - count)));
}

void RnsPoly::drop_to(RnsBasisPtr prefix) {
  require<MismatchError>(prefix != nullptr, "drop_to: no basis given");
  const RnsBasis& b = *basis_;
  const bool is_prefix = prefix->ring_degree() == b.ring_degree() && prefix->size() <= b.size() &&
                         std::equal(prefix->primes().begin(), prefix->primes().end(), b.primes().begin());
  require<MismatchError>(is_prefix, "drop_to: {} is not a prefix of the polynomial's basis {}", describe(*prefix),
                         describe(b));
  const std::size_t keep = prefix->size();
  while (!shards_.empty() && shards_.back().first_limb_ >= keep) shards_.pop_back();
  if (!shards_.empty()) shards_.back().limb_count_ = keep - shards_.back().first_limb_;
  limb_count_ = keep;
  basis_ = std::move(prefix);
}

bool operator==(const RnsPoly& a, const RnsPoly& b) {
  if (a.empty() || b.empty()) return a.empty() && b.empty();
  if (a.form() != b.form() || !(a.basis_ptr() == b.basis_ptr() || a.basis() == b.basis())) return false;
  for (std::size_t i = 0; i < a.limb_count(); ++i) {
    const auto x = a.limb(i);
    const auto y = b.limb(i);
    if (!std::equal(x.begin(), x.end(), y.begin())) return false;
  }
  return true;
}

RnsPoly operator+(const RnsPoly& a, const RnsPoly& b) {
  RnsPoly r = a.clone();
  r += b;
  return r;
}

RnsPoly operator-(const RnsPoly& a, const RnsPoly& b) {
  RnsPoly r = a.clone();
  r -= b;
  return r;
}

RnsPoly operator*(const RnsPoly& a, const RnsPoly& b) {
  RnsPoly r = a.clone();
  r *= b;
  return r;
}

RnsPoly operator-(const RnsPoly& a) {
  RnsPoly r = a.clone();
  r.negate();
  return r;
}

}  // namespace cerium::ring
