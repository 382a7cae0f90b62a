// The degree-15 polynomial's lazy relinearization must not cost precision. Before, x^9 .. x^15 were rescaled
// at 3 parts: a rescale rounds every part, and the s^2 part's rounding decrypts multiplied by s^2, about sqrt(N)
// times a 2-part rescale's error (measured on the H200 at N = 2^16: 29.5 bits planned vs 37.4 eager). Now no
// 3-part ciphertext is rescaled (plan/power_basis.hpp), and the one key switch of the sum comes before its
// rescale. Stated bound: at N = 2^13, the planned form is within 1 bit of the eager one that relinearizes every
// power (both against the exact polynomial), and both within 6 bits of one product's bound.

#include <array>
#include <cstddef>

#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;

namespace {

// N = 2^13, 6 two-prime levels (degree 15 needs 5), 2 digits: large enough for the s^2 rounding to show.
Fixture& fixture13() {
  static Fixture f(toy(13, 6, 2, 2), {.relinearization = true});
  return f;
}

}  // namespace

TEST_CASE("degree-15 polynomial: the lazy plan is as precise as relinearizing every power", "[expr][poly]") {
  Fixture& f = fixture13();
  auto rng = cerium_test::make_rng(501);
  const Values v = map(random_real(rng, f.max_slots()), [](Complex a) { return 0.9 * a; });
  const Ciphertext ct = f.encrypt(v);
  std::array<double, 16> c{};
  for (std::size_t k = 0; k < c.size(); ++k) c[k] = (k % 2 == 0 ? 1.0 : -1.0) / static_cast<double>(k + 1);

  const Ciphertext planned = eval(polynomial(lift(ct), c), EvalContext{f.evaluator});
  const Ciphertext eager = cerium::plan::PowerBasis<cerium::backend::CpuBackend>(f.evaluator, ct).evaluate(c);
  CHECK(planned.level() == eager.level());
  CHECK(planned.size() == 2);

  Values want(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    Complex acc = 0;
    for (std::size_t k = c.size(); k-- > 0;) acc = acc * v[i] + c[k];
    want[i] = acc;
  }
  const double planned_bits = precision_bits(f.decrypt(planned), want);
  const double eager_bits = precision_bits(f.decrypt(eager), want);
  const double one_product = 28.0 * 2 - 13 - 9;
  INFO("planned " << planned_bits << " bits, eager " << eager_bits << " bits");
  CHECK(planned_bits >= eager_bits - 1);
  CHECK(eager_bits >= one_product - 6);
  CHECK(cerium::plan::plan_stats(polynomial(lift(ct), c)).key_switches == 8);
  // The terms' products in one fused pass per part: the words of multiplying and adding them one by one.
  CHECK(same_words(planned, eval(polynomial(lift(ct), c), EvalContext{f.evaluator}, {.fuse_sums = false})));
}

TEST_CASE("a polynomial deeper than the ciphertext's levels is a LevelError, never a standard exception", "[expr][poly]") {
  Fixture& f = fixture13();
  const Values v(4, Complex(0.5, 0));
  std::array<double, 16> c{};
  c.fill(0.25);  // degree 15: 5 levels
  for (const int level : {4, 3, 2, 0}) {  // one, two, three and five levels short
    INFO("level " << level);
    const Ciphertext ct = f.encrypt(v, level);
    try {
      (void)eval(polynomial(lift(ct), c), EvalContext{f.evaluator});
      FAIL("a degree-15 polynomial ran at level " << level);
    } catch (const cerium::LevelError&) {
      SUCCEED();
    } catch (const std::exception& e) {
      FAIL("not a cerium::LevelError: " << e.what());
    }
  }
}
