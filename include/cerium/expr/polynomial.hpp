#pragma once
// polynomial<Degree>(x, coefficients): p(x) = sum_k c_k x^k in the power basis, with its depth fixed at compile
// time: ceil(log2(Degree)) levels for the powers (x^k = x^a x^(k-a), a the largest power of two below k, each
// power computed once) and one for the constants, whose products share one rescale. Degree - 1 ciphertext
// products. A power another power is made from (x^2 .. x^8 of a degree-15 polynomial) is relinearized and
// rescaled; the others (x^9 .. x^15) are never formed alone: their terms are 3-part tensors x^a (x) rescale(c_k
// x^b) at the sum's level, and one relinearization, before the sum's rescale, serves them all (lazy
// relinearization: different rounding from relinearizing each, within the bound tests/unit/expr/test_fusion.cpp
// states; no 3-part ciphertext is rescaled, whose s^2 rounding would cost about log2(sqrt(N)) bits).
//
// Scales: the powers are kept on the scale chain that x starts (Delta_(l-1) = Delta_l^2 / P_l, as bootstrapping
// does), so that a product of two powers lands on the chain; every power is brought to the deepest power's level
// on the chain (dropping limbs, or adjust_scale from one level above: no level beyond the stated depth).

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>

#include "cerium/expr/node.hpp"

namespace cerium::expr {

// The shape of the power-basis evaluation (plan/power_basis.hpp), shared by the node's traits, the planner's
// counts (plan/tracer.hpp) and the compile-time launch count (plan/launch_traits.hpp).
namespace power_basis {

// x^k = x^a x^(k - a) with a the largest power of two below k.
constexpr std::size_t factor(std::size_t k) { return std::bit_floor(k - 1); }
// Levels x^k sits below x.
constexpr int depth(std::size_t k) { return static_cast<int>(std::bit_width(k - 1)); }
// Whether another power of a degree-d evaluation is made from x^k (then it must be relinearized).
constexpr bool is_factor(std::size_t k, std::size_t degree) {
  for (std::size_t j = 2; j <= degree; ++j)
    if (factor(j) == k || j - factor(j) == k) return true;
  return false;
}

struct Shape {
  int tensor_products = 0, relinearizations = 0, rescales = 0, elementwise_passes = 0;
};

// What evaluating a degree-d polynomial of a 2-part x costs. lazy: powers no other power is made from enter the
// sum as 3-part tensors (plan/power_basis.hpp), one relinearization for the sum; rescale_each_term: every
// constant product rescaled before the sum (the eager form the benchmarks compare with) instead of one rescale
// of the sum. Elementwise passes as the planner counts them: a tensor product 1, a relinearization 2 (its adds),
// a rescale 1, per part a constant product 1 and an add 1, adjust_scale (bringing a power onto the chain one
// level down) parts + 1. fused (lazy only): the terms' constant products and tensors are one linear combination
// per part (plan/fused_sum.hpp) instead of a product and an add each.
constexpr Shape count(std::size_t degree, bool lazy, bool rescale_each_term, bool fused = false) {
  fused = fused && lazy && !rescale_each_term;
  Shape s;
  const int top_depth = depth(degree);
  const auto tensor_term = [&](std::size_t k) { return lazy && k > 1 && !is_factor(k, degree); };
  for (std::size_t k = 2; k <= degree; ++k) {
    const std::size_t a = factor(k), b = k - a;
    s.tensor_products += 1;
    s.rescales += 1;
    if (tensor_term(k)) {  // x^b onto the level above the sum's, times c_k, rescaled; then the tensor
      if (depth(b) < top_depth - 1) s.elementwise_passes += 2 + 1;
      s.elementwise_passes += 2 + 1 + (fused ? 0 : 1);  // the tensor itself is in the fused pass
      continue;
    }
    if (a != b && depth(b) < depth(a)) s.elementwise_passes += 2 + 1;  // x^b brought down onto x^a's level
    s.elementwise_passes += 1 + 1;
    s.relinearizations += 1;
    s.elementwise_passes += 2;
  }
  int acc = 0;
  for (std::size_t k = 1; k <= degree; ++k) {
    const int p = tensor_term(k) ? 3 : 2;
    if (p == 2) {
      if (depth(k) < top_depth) s.elementwise_passes += p + 1;  // adjust_scale onto the sum's level
      if (!fused) s.elementwise_passes += p;                    // times c_k
      if (rescale_each_term) {
        s.rescales += 1;
        s.elementwise_passes += 1;
      }
    }
    if (k > 1 && !fused) s.elementwise_passes += std::max(acc, p);
    acc = std::max(acc, p);
  }
  if (fused) s.elementwise_passes += acc;  // one linear combination per part
  s.elementwise_passes += 1;  // + c_0
  if (acc == 3) {
    s.relinearizations += 1;
    s.elementwise_passes += 2;
  }
  if (!rescale_each_term) {
    s.rescales += 1;
    s.elementwise_passes += 1;
  }
  return s;
}

}  // namespace power_basis

template <Node E, std::size_t Degree>
struct Polynomial {
  static_assert(E::cipher, "cerium::expr::polynomial: the argument is a plaintext or constant; evaluate it in the "
                           "clear");
  static_assert(Degree >= 1, "cerium::expr::polynomial: the degree must be at least 1");
  // Levels the powers consume: x^k sits ceil(log2 k) products deep.
  static constexpr int power_depth = static_cast<int>(std::bit_width(Degree - 1));
  static constexpr Op op = Op::polynomial;
  static constexpr bool cipher = true;
  static constexpr int parts = 2;
  static constexpr int depth = E::depth + power_depth + 1;
  static constexpr int ct_products = E::ct_products + static_cast<int>(Degree) - 1;
  static constexpr int key_switches =
      E::key_switches + detail::pending_relin<E> + power_basis::count(Degree, true, false).relinearizations;
  static constexpr bool elementwise = false, static_counts = E::static_counts;
  E child;
  std::array<double, Degree + 1> coefficients{};  // c_0 .. c_Degree
};

}  // namespace cerium::expr
