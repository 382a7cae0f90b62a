#include "cerium/backend/cuda/elementwise.hpp"

#include <algorithm>
#include <bit>
#include <vector>

#include "cerium/backend/cuda/linear_combination_launch.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/backend/cuda/upload.hpp"
#include "cerium/core/check.hpp"

namespace cerium::cuda {

DeviceScalars::DeviceScalars(const ring::RnsBasis& basis, std::span<const std::uint32_t> scalars, Stream stream)
    : size_(scalars.size()) {
  require(scalars.size() <= basis.size(), "{} scalars for a basis of {} primes", scalars.size(), basis.size());
  std::vector<detail::ShoupPair> pairs;
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    const std::uint32_t q = basis.prime(i);
    require(scalars[i] < q, "scalar {} for limb {} is not reduced modulo {}", scalars[i], i, q);
    pairs.push_back({scalars[i], math::shoup_quotient(scalars[i], q)});
  }
  table_ = upload_table<detail::ShoupPair>(pairs, std::move(stream));
}

DeviceScalars DeviceScalars::by_value(const ring::RnsBasis& basis, std::span<const std::uint32_t> scalars) {
  if (scalars.size() > detail::inline_scalar_limbs) return DeviceScalars(basis, scalars);
  require(scalars.size() <= basis.size(), "{} scalars for a basis of {} primes", scalars.size(), basis.size());
  DeviceScalars out;
  out.size_ = scalars.size();
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    const std::uint32_t q = basis.prime(i);
    require(scalars[i] < q, "scalar {} for limb {} is not reduced modulo {}", scalars[i], i, q);
    out.host_.push_back(scalars[i]);
    out.host_.push_back(math::shoup_quotient(scalars[i], q));
  }
  return out;
}

ElementwisePlan::ElementwisePlan(const ring::RnsBasis& basis, Stream stream)
    : n_(basis.ring_degree()), log_n_(std::countr_zero(basis.ring_degree())), limbs_(basis.size()) {
  require(n_ >= 4, "elementwise kernels move 4 words at a time: N = {} is too small", n_);
  std::vector<math::Modulus> moduli;
  for (std::size_t i = 0; i < limbs_; ++i) moduli.push_back(basis.modulus(i));
  moduli_ = upload_table<math::Modulus>(moduli, std::move(stream));
}

void ElementwisePlan::launch(int op, std::uint32_t* out, const std::uint32_t* a, const std::uint32_t* b,
                             const DeviceScalars* scalars, std::size_t limbs, const Stream& stream) const {
  require(limbs <= limbs_, "an elementwise operation on {} limbs with a plan of {}", limbs, limbs_);
  if (limbs == 0) return;
  require(out != nullptr && a != nullptr, "elementwise operation on a null device pointer");
  if (scalars != nullptr) {
    require(scalars->size() >= limbs, "{} device scalars for {} limbs", scalars->size(), limbs);
  }
  detail::ElementwiseLaunch args;
  args.op = static_cast<detail::ElementwiseOp>(op);
  args.out = out;
  args.a = a;
  args.b = b;
  args.moduli = table_data<math::Modulus>(moduli_);
  args.scalars = scalars ? static_cast<const detail::ShoupPair*>(scalars->device_data()) : nullptr;
  if (scalars != nullptr && args.scalars == nullptr) {
    const auto pairs = scalars->host_pairs();
    for (std::size_t i = 0; i < limbs; ++i) args.inline_scalars[i] = {pairs[2 * i], pairs[2 * i + 1]};
  }
  args.log_degree = log_n_;
  args.limbs = limbs;
  args.stream = stream.native_handle();
  detail::launch_elementwise(args);
}

namespace {
constexpr int op(detail::ElementwiseOp o) { return static_cast<int>(o); }
}  // namespace

void ElementwisePlan::add(std::uint32_t* out, const std::uint32_t* a, const std::uint32_t* b, std::size_t limbs,
                          const Stream& stream) const {
  require(b != nullptr, "add: null operand");
  launch(op(detail::ElementwiseOp::add), out, a, b, nullptr, limbs, stream);
}
void ElementwisePlan::sub(std::uint32_t* out, const std::uint32_t* a, const std::uint32_t* b, std::size_t limbs,
                          const Stream& stream) const {
  require(b != nullptr, "sub: null operand");
  launch(op(detail::ElementwiseOp::sub), out, a, b, nullptr, limbs, stream);
}
void ElementwisePlan::negate(std::uint32_t* out, const std::uint32_t* a, std::size_t limbs,
                             const Stream& stream) const {
  launch(op(detail::ElementwiseOp::negate), out, a, nullptr, nullptr, limbs, stream);
}
void ElementwisePlan::multiply(std::uint32_t* out, const std::uint32_t* a, const std::uint32_t* b, std::size_t limbs,
                               const Stream& stream) const {
  require(b != nullptr, "multiply: null operand");
  launch(op(detail::ElementwiseOp::multiply), out, a, b, nullptr, limbs, stream);
}
void ElementwisePlan::multiply_accumulate(std::uint32_t* acc, const std::uint32_t* a, const std::uint32_t* b,
                                          std::size_t limbs, const Stream& stream) const {
  require(b != nullptr, "multiply-accumulate: null operand");
  launch(op(detail::ElementwiseOp::multiply_accumulate), acc, a, b, nullptr, limbs, stream);
}
void ElementwisePlan::multiply_scalar(std::uint32_t* out, const std::uint32_t* a, const DeviceScalars& scalars,
                                      std::size_t limbs, const Stream& stream) const {
  launch(op(detail::ElementwiseOp::multiply_scalar), out, a, nullptr, &scalars, limbs, stream);
}
void ElementwisePlan::subtract_and_scale(std::uint32_t* out, const std::uint32_t* a, const std::uint32_t* b,
                                         const DeviceScalars& scalars, std::size_t limbs,
                                         const Stream& stream) const {
  require(b != nullptr, "subtract-and-scale: null operand");
  launch(op(detail::ElementwiseOp::subtract_and_scale), out, a, b, &scalars, limbs, stream);
}

void ElementwisePlan::add_scalar(std::uint32_t* out, const std::uint32_t* a, const DeviceScalars& scalars,
                                 std::size_t limbs, const Stream& stream) const {
  launch(op(detail::ElementwiseOp::add_scalar), out, a, nullptr, &scalars, limbs, stream);
}

void ElementwisePlan::multiply_accumulate_many(std::uint32_t* out, std::span<const std::uint32_t* const> a,
                                               std::span<const std::uint32_t* const> b, bool accumulate,
                                               std::size_t limbs, const Stream& stream) const {
  require(limbs <= limbs_, "a linear combination on {} limbs with a plan of {}", limbs, limbs_);
  require(a.size() == b.size() && !a.empty(), "multiply-accumulate-many: {} left and {} right factors", a.size(),
          b.size());
  require(out != nullptr, "multiply-accumulate-many on a null device pointer");
  for (std::size_t t = 0; t < a.size(); ++t) {
    require(a[t] != nullptr && b[t] != nullptr, "multiply-accumulate-many: term {} has a null factor", t);
    require(a[t] != out && b[t] != out, "multiply-accumulate-many: term {} reads the output", t);
  }
  if (limbs == 0) return;
  for (std::size_t first = 0; first < a.size(); first += detail::linear_combination_max_terms) {
    detail::LinearCombinationLaunch args;
    args.terms = std::min(detail::linear_combination_max_terms, a.size() - first);
    for (std::size_t t = 0; t < args.terms; ++t) {
      args.a[t] = a[first + t];
      args.b[t] = b[first + t];
    }
    args.accumulate = accumulate || first > 0;
    args.out = out;
    args.moduli = table_data<math::Modulus>(moduli_);
    args.log_degree = log_n_;
    args.limbs = limbs;
    args.stream = stream.native_handle();
    detail::launch_linear_combination(args);
  }
}

void ElementwisePlan::linear_combination(std::uint32_t* out, std::span<const std::uint32_t* const> a,
                                         std::span<const std::uint32_t* const> b,
                                         std::span<const std::uint32_t* const> c,
                                         std::span<const std::uint32_t> scalars, bool accumulate, std::size_t limbs,
                                         const Stream& stream, const CombinationRange& range) const {
  const std::size_t first = range.first_limb;
  require(limbs > 0 && first + limbs <= limbs_, "a linear combination on limbs [{}, {}) with a plan of {}", first,
          first + limbs, limbs_);
  const std::size_t stride = c.empty() ? 0 : scalars.size() / c.size();
  require(a.size() == b.size() && scalars.size() == c.size() * stride && (c.empty() || stride >= first + limbs),
          "linear combination: {} left and {} right factors, {} scalars for {} scaled terms over limbs [{}, {})",
          a.size(), b.size(), scalars.size(), c.size(), first, first + limbs);
  require(out != nullptr, "linear combination on a null device pointer");
  for (const auto* factors : {&a, &b, &c})
    for (const std::uint32_t* f : *factors)
      require(f != nullptr && f != out, "linear combination: a factor is null or the output itself");
  const detail::ShoupPair* finish_scale = nullptr;
  if (range.subtrahend != nullptr) {
    require(range.scale != nullptr && range.scale->device_data() != nullptr && range.scale->size() >= limbs,
            "linear combination: the closing step needs {} device scalars", limbs);
    finish_scale = static_cast<const detail::ShoupPair*>(range.scale->device_data());
  }
  const std::size_t offset = first * n_;
  const std::size_t b_offset = right_offset(range, "linear combination");
  // Scaled terms per launch: as many as fit the parameters' scalar words at this limb count.
  const std::size_t per_launch = std::min(detail::mixed_combination_max_scaled,
                                          detail::mixed_combination_scalar_words / limbs);
  require(per_launch > 0, "linear combination: {} limbs exceed the launch's scalar words", limbs);
  std::size_t t = 0, u = 0;
  bool first_launch = true;
  while (first_launch || t < a.size() || u < c.size()) {
    detail::MixedCombinationLaunch args;
    const std::size_t products = std::min(detail::mixed_combination_max_products, a.size() - t);
    const std::size_t scaled = std::min(per_launch, c.size() - u);
    for (std::size_t k = 0; k < products; ++k) {
      args.a[k] = a[t + k] + offset;
      args.b[k] = b[t + k] + b_offset;
    }
    for (std::size_t k = 0; k < scaled; ++k) {
      args.c[k] = c[u + k] + offset;
      for (std::size_t i = 0; i < limbs; ++i) args.scalars[k * limbs + i] = scalars[(u + k) * stride + first + i];
    }
    args.products = static_cast<std::uint32_t>(products);
    args.scaled = static_cast<std::uint32_t>(scaled);
    args.accumulate = accumulate || !first_launch;
    args.out = out;
    t += products;
    u += scaled;
    if (t == a.size() && u == c.size()) {  // the closing step once, after every term
      args.subtrahend = range.subtrahend;
      args.finish_scale = finish_scale;
    }
    args.moduli = table_data<math::Modulus>(moduli_) + first;
    args.log_degree = log_n_;
    args.limbs = limbs;
    args.stream = stream.native_handle();
    args.b_log_gap = range.b_log_gap;
    detail::launch_mixed_combination(args);
    first_launch = false;
  }
}

std::size_t ElementwisePlan::right_offset(const CombinationRange& range, const char* operation) const {
  require(range.b_log_gap < 0 || (range.b_log_gap >= 2 && range.b_log_gap <= log_n_),
          "{}: compact right factors of gap 2^{} at N = {}", operation, range.b_log_gap, n_);
  return range.b_log_gap < 0 ? range.first_limb * n_ : range.first_limb * (n_ >> range.b_log_gap);
}

void ElementwisePlan::term_products(std::uint32_t* out, std::size_t out_stride,
                                    std::span<const std::uint32_t* const> a, std::span<const std::uint32_t* const> b,
                                    std::size_t limbs, const Stream& stream, const CombinationRange& range) const {
  const std::size_t first = range.first_limb;
  require(limbs > 0 && first + limbs <= limbs_ && a.size() == b.size() && out != nullptr &&
              out_stride >= limbs * n_ && range.subtrahend == nullptr,
          "term products: {} left and {} right factors on limbs [{}, {}) with a plan of {}, output stride {}",
          a.size(), b.size(), first, first + limbs, limbs_, out_stride);
  const std::size_t offset = first * n_;
  const std::size_t b_offset = right_offset(range, "term products");
  for (std::size_t t0 = 0; t0 < a.size(); t0 += detail::term_products_max_terms) {
    detail::TermProductsLaunch args;
    args.terms = static_cast<std::uint32_t>(std::min(detail::term_products_max_terms, a.size() - t0));
    for (std::size_t k = 0; k < args.terms; ++k) {
      require(a[t0 + k] != nullptr && b[t0 + k] != nullptr, "term products: term {} has a null factor", t0 + k);
      args.a[k] = a[t0 + k] + offset;
      args.b[k] = b[t0 + k] + b_offset;
    }
    args.b_log_gap = range.b_log_gap;
    args.out = out + t0 * out_stride;
    args.out_stride = out_stride;
    args.moduli = table_data<math::Modulus>(moduli_) + first;
    args.log_degree = log_n_;
    args.limbs = limbs;
    args.stream = stream.native_handle();
    detail::launch_term_products(args);
  }
}

void ElementwisePlan::tensor(std::uint32_t* d0, std::uint32_t* d1, std::uint32_t* d2, const std::uint32_t* a0,
                             const std::uint32_t* a1, const std::uint32_t* b0, const std::uint32_t* b1,
                             std::size_t limbs, const Stream& stream) const {
  require(limbs <= limbs_, "a tensor product on {} limbs with a plan of {}", limbs, limbs_);
  require(d0 && d1 && d2 && a0 && a1 && b0 && b1, "tensor product on a null device pointer");
  detail::TensorLaunch args;
  args.d0 = d0;
  args.d1 = d1;
  args.d2 = d2;
  args.a0 = a0;
  args.a1 = a1;
  args.b0 = b0;
  args.b1 = b1;
  args.moduli = table_data<math::Modulus>(moduli_);
  args.log_degree = log_n_;
  args.limbs = limbs;
  args.stream = stream.native_handle();
  detail::launch_tensor(args);
}

}  // namespace cerium::cuda
