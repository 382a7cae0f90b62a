#include "cerium/backend/cuda/elementwise.hpp"

#include <bit>
#include <vector>

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
