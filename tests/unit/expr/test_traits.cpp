// Compile-time traits against hand counts (static_assert), and the planner's runtime totals (plan_stats) against
// the same hand counts: hoisting lowers key switches' ModUps, lazy relinearization lowers key switches.

#include <type_traits>

#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;
namespace ex = cerium::expr;

namespace {
using X = ex::CipherLeaf;
using P = ex::PlainLeaf;
using C = ex::ConstLeaf;

// x*y + z*w: one product level, two tensor products, one shared relinearization.
using SumOfProducts = ex::Add<ex::Multiply<X, X>, ex::Multiply<X, X>>;
static_assert(ex::depth_v<SumOfProducts> == 1);
static_assert(ex::key_switches_v<SumOfProducts> == 1);
static_assert(ex::ct_products_v<SumOfProducts> == 2);
static_assert(!ex::elementwise_v<SumOfProducts>);
static_assert(SumOfProducts::parts == 3);

// x * pt + y - c: an elementwise chain.
using Chain = ex::Sub<ex::Add<ex::Multiply<X, P>, X>, C>;
static_assert(ex::elementwise_v<Chain> && ex::key_switches_v<Chain> == 0 && ex::depth_v<Chain> == 1);

// (x*y)*(z*w): both factors relinearized, then the result: 3 key switches, depth 2.
using Square = ex::Multiply<ex::Multiply<X, X>, ex::Multiply<X, X>>;
static_assert(ex::depth_v<Square> == 2 && ex::key_switches_v<Square> == 3 && ex::ct_products_v<Square> == 3);

// rotate(x*y, 1): relinearize, then rotate.
static_assert(ex::key_switches_v<ex::Rotate<ex::Multiply<X, X>>> == 2);
static_assert(ex::key_switches_v<ex::SumRotations<X, 3>> == 3);
static_assert(ex::elementwise_v<ex::LevelDown<ex::Negate<X>>>);
static_assert(!ex::elementwise_v<ex::Rescale<X>>);
static_assert(!ex::is_node_v<double> && ex::is_node_v<X>);
static_assert(!ex::is_cipher_v<P> && !ex::is_cipher_v<C>);
}  // namespace

TEST_CASE("operators build the node types the traits describe", "[expr][traits]") {
  Fixture& f = fixture();
  std::mt19937_64 rng(1);
  const Values v = random_real(rng, f.max_slots());
  auto x = lift(f.encrypt(v)), y = lift(f.encrypt(v)), z = lift(f.encrypt(v)), w = lift(f.encrypt(v));
  auto pt = lift(f.encoder.encode(v));

  auto sop = x * y + z * w;
  static_assert(std::is_same_v<decltype(sop), SumOfProducts>);
  auto chain = x * pt + y - 0.25;
  static_assert(std::is_same_v<decltype(chain), Chain>);
  auto bsgs = rescale(x * pt + rotate(x, 1) * pt + rotate(x, 2) * pt);
  static_assert(ex::depth_v<decltype(bsgs)> == 1 && ex::key_switches_v<decltype(bsgs)> == 2);
  static_assert(ex::ct_products_v<decltype(bsgs)> == 0 && !ex::elementwise_v<decltype(bsgs)>);
  static_assert(ex::key_switches_v<decltype(sum_rotations(x, 1, 2, 3))> == 3);

  SECTION("sum of products: one relinearization") {
    const auto s = cerium::plan::plan_stats(sop);
    CHECK(s.key_switches == ex::key_switches_v<decltype(sop)>);
    CHECK(s.relinearizations == 1);
    CHECK(s.tensor_products == 2);
    CHECK(s.mod_ups == 1);
  }
  SECTION("elementwise chain: no key switch") {
    const auto s = cerium::plan::plan_stats(chain);
    CHECK(s.key_switches == 0);
    CHECK(s.mod_ups == 0);
  }
  SECTION("rotations of one leaf: one ModUp") {
    const auto s = cerium::plan::plan_stats(bsgs);
    CHECK(s.key_switches == 2);
    CHECK(s.mod_ups == 1);
    CHECK(s.shared_rotations == 1);
    CHECK(s.rescales == 1);
  }
  SECTION("rotations of different leaves: one ModUp each") {
    const auto s = cerium::plan::plan_stats(rotate(x, 1) + rotate(y, 1) + rotate(x, 2));
    CHECK(s.key_switches == 3);
    CHECK(s.mod_ups == 2);
  }
  SECTION("a rescaled sum of products: one key switch relinearizes and rescales") {
    const auto e = rescale(sop);
    const auto s = cerium::plan::plan_stats(e);
    CHECK(s.key_switches == 1);
    CHECK(s.relinearizations == 1);
    CHECK(s.rescales == 1);
    CHECK(s.elementwise_passes == cerium::plan::elementwise_passes_v<decltype(e)>);
    const std::string text = explain(e);
    INFO(text);
    CHECK(text.find("relinearize and rescale") != std::string::npos);
  }
  SECTION("explain names the shared ModUp and the totals") {
    const std::string text = explain(bsgs);
    INFO(text);
    CHECK(text.find("shared by rotations {1, 2}") != std::string::npos);
    CHECK(text.find("2 key switches, 1 ModUps") != std::string::npos);
  }
}
