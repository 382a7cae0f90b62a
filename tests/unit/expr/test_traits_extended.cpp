// Traits of the newer nodes against hand counts (static_assert), and plan_stats totals for the fused plans:
// integer products cost no level, a degree-15 polynomial has depth 4 + 1 and 14 products sharing 8 relinearizations, runtime
// sums report per-term counts, and fusion lowers the elementwise passes of a 16-diagonal BSGS transform.

#include <array>
#include <cstdint>
#include <vector>

#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;
namespace ex = cerium::expr;

namespace {
using X = ex::CipherLeaf;
using P = ex::PlainLeaf;
using I = ex::IntLeaf;

static_assert(ex::depth_v<ex::Multiply<X, I>> == 0 && ex::elementwise_v<ex::Multiply<X, I>>);
static_assert(ex::depth_v<ex::Multiply<ex::Multiply<X, I>, ex::ConstLeaf>> == 1);
static_assert(ex::depth_v<ex::Polynomial<X, 15>> == 5);  // x^8..x^15 four products deep, then the constants
static_assert(ex::depth_v<ex::Polynomial<X, 16>> == 5);
static_assert(ex::depth_v<ex::Polynomial<X, 17>> == 6);
static_assert(ex::depth_v<ex::Polynomial<X, 1>> == 1);
// 14 products; x^2 .. x^8 relinearized (the others are made from them), x^9 .. x^15 share one: 8 key switches.
static_assert(ex::key_switches_v<ex::Polynomial<X, 15>> == 8 && ex::ct_products_v<ex::Polynomial<X, 15>> == 14);
// A polynomial of a 3-part sum relinearizes it first.
static_assert(ex::key_switches_v<ex::Polynomial<ex::Add<ex::Multiply<X, X>, ex::Multiply<X, X>>, 3>> == 3);
static_assert(!ex::static_counts_v<ex::SumOf<ex::Multiply<X, P>>>);
static_assert(!ex::static_counts_v<ex::Rescale<ex::SumOf<ex::Multiply<X, X>>>>);
static_assert(ex::SumOf<ex::Multiply<X, X>>::parts == 3);  // lazy relinearization across a runtime sum
static_assert(ex::static_counts_v<ex::Polynomial<X, 4>>);
}  // namespace

TEST_CASE("plan totals of a polynomial, a runtime product sum and a BSGS transform", "[expr][traits]") {
  Fixture& f = fixture();
  std::mt19937_64 rng(2);
  const Values v = random_real(rng, f.max_slots());
  auto x = lift(f.encrypt(v));

  std::array<double, 16> c{};
  const auto poly = cerium::plan::plan_stats(polynomial(x, c));
  CHECK(poly.tensor_products == 14);
  CHECK(poly.relinearizations == 8);
  CHECK(poly.key_switches == 8);
  CHECK(poly.rescales == 15);

  std::vector<decltype(x * x)> products;  // distinct operands (a repeated x * x would be evaluated once)
  for (int i = 0; i < 8; ++i) products.push_back(lift(f.encrypt(v)) * lift(f.encrypt(v)));
  const auto fused = cerium::plan::plan_stats(rescale(sum(products)));
  const auto unfused = cerium::plan::plan_stats(rescale(sum(products)), {.fuse_sums = false});
  CHECK(fused.relinearizations == 1);
  CHECK(unfused.relinearizations == 1);
  CHECK(fused.tensor_products == 8);
  CHECK(fused.fused_sums == 1);
  // Hand count: fused = 3 linear-combination passes + 2 (relinearization) + 1 rescale; unfused = 8 tensors,
  // 7 three-part adds, 2, 1.
  CHECK(fused.elementwise_passes == 3 + 2 + 1);
  CHECK(unfused.elementwise_passes == 8 + 7 * 3 + 2 + 1);

  const auto w = lift(f.encoder.encode(v));  // each diagonal lifted on its own: distinct operands
  using Inner = decltype(rotate(x, 0) * w);
  std::vector<decltype(rotate(sum(std::vector<Inner>{rotate(x, 0) * w}), 0))> giants;
  for (int j = 0; j < 4; ++j) {
    std::vector<Inner> inner;
    for (int i = 0; i < 4; ++i) inner.push_back(rotate(x, i) * lift(f.encoder.encode(v)));
    giants.push_back(rotate(sum(std::move(inner)), 4 * j));
  }
  auto bsgs = rescale(sum(std::move(giants)));
  const auto plan = cerium::plan::plan_stats(bsgs);
  CHECK(plan.mod_ups == 1 + 3);  // the baby steps 1..3 share one, the giant steps 4, 8, 12 one each
  CHECK(plan.key_switches == 3 + 3);
  CHECK(plan.fused_sums == 4);
  // 4 inner sums: 2 linear-combination passes each; 3 giant adds of 2 parts; 1 rescale.
  CHECK(plan.elementwise_passes == 4 * 2 + 3 * 2 + 1);
  const auto plain = cerium::plan::plan_stats(bsgs, {.fuse_sums = false});
  CHECK(plain.elementwise_passes == 4 * (4 * 2 + 3 * 2) + 3 * 2 + 1);

  // With one plaintext for every diagonal the four inner sums are one subexpression: evaluated once.
  std::vector<decltype(rotate(sum(std::vector<Inner>{rotate(x, 0) * w}), 0))> same;
  for (int j = 0; j < 4; ++j) {
    std::vector<Inner> inner;
    for (int i = 0; i < 4; ++i) inner.push_back(rotate(x, i) * w);
    same.push_back(rotate(sum(std::move(inner)), 4 * j));
  }
  const auto shared = cerium::plan::plan_stats(rescale(sum(std::move(same))));
  CHECK(shared.fused_sums == 1);
  CHECK(shared.shared_subexpressions == 3);
}
