// Elementwise limb arithmetic over a whole RNS polynomial in one launch.
//
// Why the GPU needs its own loops: the CPU walks limb by limb; here one thread moves 4 adjacent words as a
// 16-byte vector (the widest global access) and finds its limb's modulus from its index, so a polynomial of any
// limb count is one launch and every access is coalesced. The arithmetic is the CPU's own (math::add_mod,
// mul_mod with the same Barrett constants, mul_shoup), so the words are the CPU's.

#include <cuda_runtime.h>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/linear_combination_launch.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"

namespace cerium::cuda::detail {
namespace elementwise_kernels {

using math::u32;
constexpr int kThreads = 256;

template <ElementwiseOp Op>
__device__ __forceinline__ u32 apply(u32 o, u32 a, u32 b, const math::Modulus& m, ShoupPair s) {
  const u32 q = m.value;
  if constexpr (Op == ElementwiseOp::add) return math::add_mod(a, b, q);
  if constexpr (Op == ElementwiseOp::sub) return math::sub_mod(a, b, q);
  if constexpr (Op == ElementwiseOp::negate) return math::neg_mod(a, q);
  if constexpr (Op == ElementwiseOp::multiply) return math::mul_mod(a, b, m);
  if constexpr (Op == ElementwiseOp::multiply_accumulate) return math::add_mod(o, math::mul_mod(a, b, m), q);
  if constexpr (Op == ElementwiseOp::multiply_scalar) return math::mul_shoup(a, s.value, s.quotient, q);
  if constexpr (Op == ElementwiseOp::add_scalar) return math::add_mod(a, s.value, q);
  if constexpr (Op == ElementwiseOp::subtract_and_scale)
    return math::mul_shoup(math::sub_mod(a, b, q), s.value, s.quotient, q);
  return 0;
}

template <ElementwiseOp Op>
constexpr bool reads_b = Op == ElementwiseOp::add || Op == ElementwiseOp::sub || Op == ElementwiseOp::multiply ||
                         Op == ElementwiseOp::multiply_accumulate || Op == ElementwiseOp::subtract_and_scale;
template <ElementwiseOp Op>
constexpr bool scalar_op = Op == ElementwiseOp::multiply_scalar || Op == ElementwiseOp::subtract_and_scale ||
                          Op == ElementwiseOp::add_scalar;

template <ElementwiseOp Op>
__global__ void __launch_bounds__(kThreads) elementwise_kernel(ElementwiseLaunch args, std::size_t vectors,
                                                               int log_vectors_per_limb) {
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (v >= vectors) return;
  const std::size_t limb = v >> log_vectors_per_limb;
  const math::Modulus m = args.moduli[limb];
  ShoupPair s{};
  if constexpr (scalar_op<Op>) s = args.scalars != nullptr ? args.scalars[limb] : args.inline_scalars[limb];
  const uint4 a = reinterpret_cast<const uint4*>(args.a)[v];
  uint4 b = make_uint4(0, 0, 0, 0), o = make_uint4(0, 0, 0, 0);
  if constexpr (reads_b<Op>) b = reinterpret_cast<const uint4*>(args.b)[v];
  if constexpr (Op == ElementwiseOp::multiply_accumulate) o = reinterpret_cast<const uint4*>(args.out)[v];
  uint4 r;
  r.x = apply<Op>(o.x, a.x, b.x, m, s);
  r.y = apply<Op>(o.y, a.y, b.y, m, s);
  r.z = apply<Op>(o.z, a.z, b.z, m, s);
  r.w = apply<Op>(o.w, a.w, b.w, m, s);
  reinterpret_cast<uint4*>(args.out)[v] = r;
}

template <ElementwiseOp Op>
void launch(const ElementwiseLaunch& args) {
  const int log_vectors_per_limb = args.log_degree - 2;
  const std::size_t vectors = args.limbs << log_vectors_per_limb;
  const auto blocks = static_cast<unsigned>((vectors + kThreads - 1) / kThreads);
  elementwise_kernel<Op><<<blocks, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args, vectors,
                                                                                         log_vectors_per_limb);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

__global__ void __launch_bounds__(kThreads) tensor_kernel(TensorLaunch args, std::size_t vectors,
                                                          int log_vectors_per_limb) {
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (v >= vectors) return;
  const math::Modulus m = args.moduli[v >> log_vectors_per_limb];
  const u32 q = m.value;
  const uint4 a0 = reinterpret_cast<const uint4*>(args.a0)[v];
  const uint4 a1 = reinterpret_cast<const uint4*>(args.a1)[v];
  const uint4 b0 = reinterpret_cast<const uint4*>(args.b0)[v];
  const uint4 b1 = reinterpret_cast<const uint4*>(args.b1)[v];
  const auto cross = [&](u32 x0, u32 x1, u32 y0, u32 y1) {
    return math::add_mod(math::mul_mod(x1, y0, m), math::mul_mod(x0, y1, m), q);
  };
  reinterpret_cast<uint4*>(args.d2)[v] = make_uint4(math::mul_mod(a1.x, b1.x, m), math::mul_mod(a1.y, b1.y, m),
                                                    math::mul_mod(a1.z, b1.z, m), math::mul_mod(a1.w, b1.w, m));
  reinterpret_cast<uint4*>(args.d1)[v] = make_uint4(cross(a0.x, a1.x, b0.x, b1.x), cross(a0.y, a1.y, b0.y, b1.y),
                                                    cross(a0.z, a1.z, b0.z, b1.z), cross(a0.w, a1.w, b0.w, b1.w));
  reinterpret_cast<uint4*>(args.d0)[v] = make_uint4(math::mul_mod(a0.x, b0.x, m), math::mul_mod(a0.y, b0.y, m),
                                                    math::mul_mod(a0.z, b0.z, m), math::mul_mod(a0.w, b0.w, m));
}

// The word of a compact plaintext (limbs x N / 2^log_gap words, MixedCombinationLaunch::b_log_gap) that stands
// for vector v's four words (gap >= 4: one word for all four).
__device__ __forceinline__ std::size_t compact_word(std::size_t v, std::size_t limb, int log_vectors_per_limb,
                                                    int log_degree, int log_gap) {
  const std::size_t within = v & ((std::size_t{1} << log_vectors_per_limb) - 1);
  return (limb << (log_degree - log_gap)) + ((within << 2) >> log_gap);
}

// One term's product a_t b_t on the launch's limbs, each term to its own output (blockIdx.y: the term).
__global__ void __launch_bounds__(kThreads) term_products_kernel(TermProductsLaunch args, std::size_t vectors,
                                                                 int log_vectors_per_limb) {
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (v >= vectors) return;
  const std::size_t t = blockIdx.y;
  const std::size_t limb = v >> log_vectors_per_limb;
  const math::Modulus m = args.moduli[limb];
  const uint4 a = reinterpret_cast<const uint4*>(args.a[t])[v];
  uint4 b;
  if (args.b_log_gap < 0) {
    b = reinterpret_cast<const uint4*>(args.b[t])[v];
  } else {
    const u32 w = args.b[t][compact_word(v, limb, log_vectors_per_limb, args.log_degree, args.b_log_gap)];
    b = make_uint4(w, w, w, w);
  }
  reinterpret_cast<uint4*>(args.out + t * args.out_stride)[v] =
      make_uint4(math::mul_mod(a.x, b.x, m), math::mul_mod(a.y, b.y, m), math::mul_mod(a.z, b.z, m),
                 math::mul_mod(a.w, b.w, m));
}

// Same reduction per term as the CPU's multiply_accumulate_many: acc = barrett(a b + acc), acc canonical.
__global__ void __launch_bounds__(kThreads) linear_combination_kernel(LinearCombinationLaunch args,
                                                                      std::size_t vectors, int log_vectors_per_limb) {
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (v >= vectors) return;
  const math::Modulus m = args.moduli[v >> log_vectors_per_limb];
  uint4 acc = make_uint4(0, 0, 0, 0);
  if (args.accumulate) acc = reinterpret_cast<const uint4*>(args.out)[v];
  const auto step = [&](u32 x, u32 y, u32 o) {
    return math::barrett_reduce(static_cast<math::u64>(x) * y + o, m);
  };
  for (std::size_t t = 0; t < args.terms; ++t) {
    const uint4 a = reinterpret_cast<const uint4*>(args.a[t])[v];
    const uint4 b = reinterpret_cast<const uint4*>(args.b[t])[v];
    acc = make_uint4(step(a.x, b.x, acc.x), step(a.y, b.y, acc.y), step(a.z, b.z, acc.z), step(a.w, b.w, acc.w));
  }
  reinterpret_cast<uint4*>(args.out)[v] = acc;
}

// The same with products by per-limb constants after the polynomial products: acc = barrett(c s + acc), the
// CPU's linear_combination word for word. Products and Scaled >= 0 fix the term counts at compile time (the
// loops unroll, every factor's load is issued before the first product); -1 reads them from the launch.
template <int Products, int Scaled>
__global__ void __launch_bounds__(kThreads) mixed_combination_kernel(MixedCombinationLaunch args,
                                                                     std::size_t vectors, int log_vectors_per_limb) {
  const std::size_t v = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (v >= vectors) return;
  const std::size_t limb = v >> log_vectors_per_limb;
  const math::Modulus m = args.moduli[limb];
  uint4 acc = make_uint4(0, 0, 0, 0);
  if (args.accumulate) acc = reinterpret_cast<const uint4*>(args.out)[v];
  const auto step = [&](u32 x, u32 y, u32 o) {
    return math::barrett_reduce(static_cast<math::u64>(x) * y + o, m);
  };
  const int products = Products >= 0 ? Products : static_cast<int>(args.products);
  const int scaled = Scaled >= 0 ? Scaled : static_cast<int>(args.scaled);
  if (args.b_log_gap < 0) {
#pragma unroll
    for (int t = 0; t < products; ++t) {
      const uint4 a = reinterpret_cast<const uint4*>(args.a[t])[v];
      const uint4 b = reinterpret_cast<const uint4*>(args.b[t])[v];
      acc = make_uint4(step(a.x, b.x, acc.x), step(a.y, b.y, acc.y), step(a.z, b.z, acc.z), step(a.w, b.w, acc.w));
    }
  } else {
    const std::size_t word = compact_word(v, limb, log_vectors_per_limb, args.log_degree, args.b_log_gap);
#pragma unroll
    for (int t = 0; t < products; ++t) {
      const uint4 a = reinterpret_cast<const uint4*>(args.a[t])[v];
      const u32 b = args.b[t][word];
      acc = make_uint4(step(a.x, b, acc.x), step(a.y, b, acc.y), step(a.z, b, acc.z), step(a.w, b, acc.w));
    }
  }
#pragma unroll
  for (int u = 0; u < scaled; ++u) {
    const u32 s = args.scalars[static_cast<std::size_t>(u) * args.limbs + limb];
    const uint4 c = reinterpret_cast<const uint4*>(args.c[u])[v];
    acc = make_uint4(step(c.x, s, acc.x), step(c.y, s, acc.y), step(c.z, s, acc.z), step(c.w, s, acc.w));
  }
  if (args.subtrahend != nullptr) {  // the rescale folded in: (sum - t) P^{-1}, the kept limbs written once
    const uint4 t = reinterpret_cast<const uint4*>(args.subtrahend)[v];
    const ShoupPair p = args.finish_scale[limb];
    const u32 q = m.value;
    const auto finish = [&](u32 x, u32 y) { return math::mul_shoup(math::sub_mod(x, y, q), p.value, p.quotient, q); };
    acc = make_uint4(finish(acc.x, t.x), finish(acc.y, t.y), finish(acc.z, t.z), finish(acc.w, t.w));
  }
  reinterpret_cast<uint4*>(args.out)[v] = acc;
}

}  // namespace elementwise_kernels

namespace {

template <int Products, int Scaled>
void launch_mixed(const MixedCombinationLaunch& args, unsigned blocks, std::size_t vectors, int log_vectors_per_limb) {
  elementwise_kernels::mixed_combination_kernel<Products, Scaled>
      <<<blocks, elementwise_kernels::kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args, vectors,
                                                                                            log_vectors_per_limb);
}

// The shapes the planner emits most: a part of a sum of 2, 4 or 8 ciphertext-plaintext products (BSGS inner sums),
// of 4 to 16 tensor cross terms (sums of 2 to 8 ciphertext products: 2 per product on part 1), or of 2, 4 or 8
// constant products; one instantiation each, every other shape the generic kernel.
template <int Products, int Scaled>
bool try_launch(const MixedCombinationLaunch& args, unsigned blocks, std::size_t vectors, int log_vectors_per_limb) {
  if (args.products != Products || args.scaled != Scaled) return false;
  launch_mixed<Products, Scaled>(args, blocks, vectors, log_vectors_per_limb);
  return true;
}

}  // namespace

void launch_mixed_combination(const MixedCombinationLaunch& args) {
  using namespace elementwise_kernels;
  if (args.limbs == 0) return;
  const int log_vectors_per_limb = args.log_degree - 2;
  const std::size_t vectors = args.limbs << log_vectors_per_limb;
  const auto blocks = static_cast<unsigned>((vectors + kThreads - 1) / kThreads);
  const bool fixed = try_launch<2, 0>(args, blocks, vectors, log_vectors_per_limb) ||
                     try_launch<4, 0>(args, blocks, vectors, log_vectors_per_limb) ||
                     try_launch<8, 0>(args, blocks, vectors, log_vectors_per_limb) ||
                     try_launch<16, 0>(args, blocks, vectors, log_vectors_per_limb) ||
                     try_launch<0, 2>(args, blocks, vectors, log_vectors_per_limb) ||
                     try_launch<0, 4>(args, blocks, vectors, log_vectors_per_limb) ||
                     try_launch<0, 8>(args, blocks, vectors, log_vectors_per_limb);
  if (!fixed) launch_mixed<-1, -1>(args, blocks, vectors, log_vectors_per_limb);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

void launch_term_products(const TermProductsLaunch& args) {
  using namespace elementwise_kernels;
  if (args.limbs == 0 || args.terms == 0) return;
  if (args.terms > term_products_max_terms || (args.b_log_gap >= 0 && (args.b_log_gap < 2 || args.b_log_gap > args.log_degree)))
    CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // the plan checks first
  const int log_vectors_per_limb = args.log_degree - 2;
  const std::size_t vectors = args.limbs << log_vectors_per_limb;
  const dim3 grid(static_cast<unsigned>((vectors + kThreads - 1) / kThreads), args.terms);
  term_products_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args, vectors,
                                                                                     log_vectors_per_limb);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

void launch_linear_combination(const LinearCombinationLaunch& args) {
  using namespace elementwise_kernels;
  if (args.limbs == 0) return;
  const int log_vectors_per_limb = args.log_degree - 2;
  const std::size_t vectors = args.limbs << log_vectors_per_limb;
  const auto blocks = static_cast<unsigned>((vectors + kThreads - 1) / kThreads);
  linear_combination_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args, vectors,
                                                                                             log_vectors_per_limb);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

void launch_tensor(const TensorLaunch& args) {
  using namespace elementwise_kernels;
  if (args.limbs == 0) return;
  const int log_vectors_per_limb = args.log_degree - 2;
  const std::size_t vectors = args.limbs << log_vectors_per_limb;
  const auto blocks = static_cast<unsigned>((vectors + kThreads - 1) / kThreads);
  tensor_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(args, vectors, log_vectors_per_limb);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

void launch_elementwise(const ElementwiseLaunch& args) {
  using namespace elementwise_kernels;
  if (args.limbs == 0) return;
  switch (args.op) {
    case ElementwiseOp::add: launch<ElementwiseOp::add>(args); break;
    case ElementwiseOp::sub: launch<ElementwiseOp::sub>(args); break;
    case ElementwiseOp::negate: launch<ElementwiseOp::negate>(args); break;
    case ElementwiseOp::multiply: launch<ElementwiseOp::multiply>(args); break;
    case ElementwiseOp::multiply_accumulate: launch<ElementwiseOp::multiply_accumulate>(args); break;
    case ElementwiseOp::multiply_scalar: launch<ElementwiseOp::multiply_scalar>(args); break;
    case ElementwiseOp::subtract_and_scale: launch<ElementwiseOp::subtract_and_scale>(args); break;
    case ElementwiseOp::add_scalar: launch<ElementwiseOp::add_scalar>(args); break;
    default: CERIUM_CUDA_CHECK(cudaErrorInvalidValue);
  }
}

}  // namespace cerium::cuda::detail
