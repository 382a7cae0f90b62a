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
// on the chain (dropping limbs, or adjust_scale from one level above: no level beyond the stated depth). The
// schedule itself, which the evaluation, its counts and the key switches below all run, is expr/power_basis.hpp.

#include <array>
#include <cstddef>

#include "cerium/expr/node.hpp"
#include "cerium/expr/power_basis.hpp"

namespace cerium::expr {

// p(child) = sum_k coefficients[k] child^k of degree Degree, built by expr::polynomial; the header comment states
// its depth, products and scales.
template <Node E, std::size_t Degree>
struct Polynomial {
  static_assert(E::cipher, "cerium::expr::polynomial: the argument is a plaintext or constant; evaluate it in the "
                           "clear");
  static_assert(Degree >= 1, "cerium::expr::polynomial: the degree must be at least 1");
  // Levels the powers consume: x^k sits ceil(log2 k) products deep.
  static constexpr int power_depth = power_basis::depth(Degree);
  // The node's traits (expr/node.hpp defines them): power_depth + 1 levels below the child, Degree - 1 products.
  static constexpr Op op = Op::polynomial;
  static constexpr bool cipher = true;
  static constexpr int parts = 2;
  static constexpr int depth = E::depth + power_depth + 1;
  static constexpr int ct_products = E::ct_products + static_cast<int>(Degree) - 1;
  static constexpr int key_switches =
      E::key_switches + detail::pending_relin<E> + power_basis::key_switches(Degree, true);
  static constexpr bool elementwise = false, static_counts = E::static_counts;
  // The argument x, evaluated once.
  E child;
  std::array<double, Degree + 1> coefficients{};  // c_0 .. c_Degree
};

}  // namespace cerium::expr
