// Common subexpressions: a subexpression written twice (same operands, same operations) is evaluated once and
// copied; the words are those of the eager sequence that computes it once and uses it twice, which are the
// words of computing it twice (every operation is deterministic). Also: leaves lifted separately from equal
// ciphertexts are different operands, and PlanOptions{.share_subexpressions = false} evaluates every occurrence.

#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;
using cerium::plan::plan_stats;
using cerium::plan::PlanOptions;

TEST_CASE("a repeated subexpression is evaluated once, with the eager words", "[expr][cse]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(601);
  const Values vx = random_complex(rng, f.max_slots()), vy = random_complex(rng, f.max_slots());
  const Ciphertext cx = f.encrypt(vx), cy = f.encrypt(vy);
  auto x = lift(cx), y = lift(cy);

  auto e = rotate(x * y, 1) + x * y;  // x * y twice
  const auto shared = plan_stats(e);
  const auto separate = plan_stats(e, PlanOptions{.share_subexpressions = false});
  CHECK(shared.shared_subexpressions == 1);
  CHECK(shared.tensor_products == 1);
  CHECK(separate.tensor_products == 2);
  CHECK(cerium::explain(e).find("common subexpression") != std::string::npos);

  const Evaluator& ev = f.evaluator;
  const Ciphertext product = ev.multiply_no_relin(cx, cy);
  Ciphertext want = ev.rotate(ev.relinearize(product), 1);
  ev.add_inplace(want, product);  // 3 parts: one relinearization at the end
  ev.relinearize_inplace(want);
  const Ciphertext got = eval(e, EvalContext{f.evaluator});
  CHECK(same_words(got, want));
  CHECK(same_words(eval(e, EvalContext{f.evaluator}, PlanOptions{.share_subexpressions = false}), want));

  Values expect(vx.size());
  const Values xy = zip(vx, vy, [](Complex a, Complex b) { return a * b; });
  const Values r = rotated(xy, 1);
  for (std::size_t i = 0; i < expect.size(); ++i) expect[i] = r[i] + xy[i];
  CHECK(precision_bits(f.decrypt(got), expect) >= bound() - 2);
}

TEST_CASE("separately lifted leaves are different operands; a shared rescaled square feeds two uses",
          "[expr][cse]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(602);
  const Values vx = random_complex(rng, f.max_slots());
  const Ciphertext cx = f.encrypt(vx);
  auto a = lift(cx), b = lift(cx);  // two copies: two operands
  CHECK(plan_stats(a * a + b * b).shared_subexpressions == 0);

  auto sq = rescale(a * a);
  auto e = rescale(sq * sq) - sq;  // the square computed once, used three times
  const auto stats = plan_stats(e);
  CHECK(stats.tensor_products == 2);
  CHECK(stats.shared_subexpressions == 2);

  const Evaluator& ev = f.evaluator;
  const Ciphertext s = ev.rescale(ev.multiply(cx, cx));
  Ciphertext want = ev.rescale(ev.multiply(s, s));
  ev.sub_inplace(want, s);  // levels and scales aligned by the evaluator
  CHECK(same_words(eval(e, EvalContext{f.evaluator}), want));
}
