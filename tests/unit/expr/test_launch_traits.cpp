// plan::elementwise_passes_v<E> (compile time) against hand counts and against the planner's own count
// (plan_stats(e).elementwise_passes) for expressions with distinct operands: elementwise chains, fused sums of
// plaintext and ciphertext products, sum_rotations, polynomials, conjugation and level_down.

#include <array>

#include "cerium/plan/launch_traits.hpp"
#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;
using cerium::plan::elementwise_passes_v;
using cerium::plan::plan_stats;

TEST_CASE("compile-time elementwise passes match hand counts and the plan", "[expr][traits]") {
  Fixture& f = fixture();
  std::mt19937_64 rng(3);
  const Values v = random_real(rng, f.max_slots());
  auto x = lift(f.encrypt(v)), y = lift(f.encrypt(v)), z = lift(f.encrypt(v)), u = lift(f.encrypt(v));
  auto w = lift(f.encoder.encode(v)), w2 = lift(f.encoder.encode(v));

  // x + y (2), negate (2), the fused sum's pass (2), + constant (1).
  auto chain = -(x + y) * w + z * w2 + 0.25;
  static_assert(elementwise_passes_v<decltype(chain)> == 7);
  CHECK(plan_stats(chain).elementwise_passes == 7);

  // Fused tensor sum (3 passes), the subtracted tensor (1) and its 3-part sub (3), relinearize (2), rescale (1).
  auto products = rescale(x * y + z * u - x * u);
  static_assert(elementwise_passes_v<decltype(products)> == 10);
  CHECK(plan_stats(products).elementwise_passes == 10);

  // Constant products, one subtracted: one linear combination per part (eager: 3 products and 2 adds of 2 parts).
  auto constants = x * 0.5 + y * 0.25 - z * 0.125;
  static_assert(elementwise_passes_v<decltype(constants)> == 2);
  CHECK(plan_stats(constants).elementwise_passes == 2);
  CHECK(plan_stats(constants, {.fuse_sums = false}).elementwise_passes == 10);

  // Integer products fused (2), the plain term added (2).
  auto integers = x * integer(2) - y * integer(3) + z;
  static_assert(elementwise_passes_v<decltype(integers)> == 4);
  CHECK(plan_stats(integers).elementwise_passes == 4);

  // x * w (2), rescale (1), 2 adds of the 3 hoisted rotations (4).
  auto rotations = sum_rotations(rescale(x * w), 0, 1, 2);
  static_assert(elementwise_passes_v<decltype(rotations)> == 7);
  CHECK(plan_stats(rotations).elementwise_passes == 7);

  // Degree 4: x^2 4 (tensor, 2 relinearization adds, rescale); the tensor terms' factors 9 (c_3 x^3: x brought a
  // level down by adjust_scale 3, times c_3 2, rescale 1; c_4 x^4: x^2 times c_4 2, rescale 1); x and x^2
  // brought down 3 each; the terms' products and tensors in one linear combination per part 3; the constant
  // term 1, one relinearization 2, one rescale 1.
  auto poly = polynomial(x, std::array{0.1, 0.2, 0.3, 0.4, 0.5});
  static_assert(elementwise_passes_v<decltype(poly)> == 4 + 9 + 6 + 3 + 1 + 2 + 1);
  CHECK(plan_stats(poly, {.fuse_sums = false}).elementwise_passes == 4 + 11 + 12 + 6 + 1 + 2 + 1);
  CHECK(plan_stats(poly).elementwise_passes == elementwise_passes_v<decltype(poly)>);

  auto moves = conjugate(level_down(x, 1)) + rotate(y, 1) * w;  // key switches and drops: one add, one multiply
  static_assert(elementwise_passes_v<decltype(moves)> == 2 + 2);
  CHECK(plan_stats(moves).elementwise_passes == 4);
}
