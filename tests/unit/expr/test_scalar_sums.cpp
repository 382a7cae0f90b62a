// Sums of constant products, and sums split through -: x * c terms (real constants, integers) join the fused
// pass as one scalar per limb, a subtracted one with its scalar negated; subtracted plaintext or ciphertext
// products are computed alone and subtracted. Rule: the words equal the eager evaluator's multiply, add and
// subtract sequence in the planner's order, and the fused form makes one linear-combination pass per part.

#include <complex>
#include <cstdint>

#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;
using cerium::plan::plan_stats;
using cerium::plan::PlanOptions;

namespace {

constexpr PlanOptions kEager{.fuse_sums = false};

struct Four {
  std::vector<Values> v;
  std::vector<Ciphertext> ct;
};

Four make(Fixture& f, std::uint64_t seed) {
  auto rng = cerium_test::make_rng(seed);
  Four in;
  for (int i = 0; i < 4; ++i) {
    in.v.push_back(random_complex(rng, f.max_slots()));
    in.ct.push_back(f.encrypt(in.v.back()));
  }
  return in;
}

}  // namespace

TEST_CASE("real constant products, one subtracted, are one pass per part and equal eager", "[expr][fusion]") {
  Fixture& f = fixture();
  const Four in = make(f, 601);
  auto x = lift(in.ct[0]), y = lift(in.ct[1]), z = lift(in.ct[2]);
  auto e = rescale(x * 0.5 + y * -0.25 - z * 0.125 + 0.75 * x);
  const auto stats = plan_stats(e);
  CHECK(stats.fused_sums == 1);
  CHECK(stats.folded_rescales == 1);
  CHECK(stats.elementwise_passes == 2 * 2);  // per part: the dropped limbs, then the kept ones divided
  CHECK(plan_stats(e, kEager).elementwise_passes == 4 * 2 + 3 * 2 + 1);

  const Evaluator& ev = f.evaluator;
  Ciphertext want = ev.multiply(in.ct[0], 0.5);
  ev.add_inplace(want, ev.multiply(in.ct[1], -0.25));
  ev.sub_inplace(want, ev.multiply(in.ct[2], 0.125));
  ev.add_inplace(want, ev.multiply(in.ct[0], 0.75));
  ev.rescale_inplace(want);
  const Ciphertext got = eval(e, EvalContext{f.evaluator});
  CHECK(same_words(got, want));
  CHECK(got.scale() == want.scale());
  CHECK(same_words(eval(e, EvalContext{f.evaluator}, kEager), want));

  Values expect(in.v[0].size());
  for (std::size_t i = 0; i < expect.size(); ++i)
    expect[i] = 1.25 * in.v[0][i] - 0.25 * in.v[1][i] - 0.125 * in.v[2][i];
  const double bits = precision_bits(f.decrypt(got), expect);
  INFO("precision " << bits);
  CHECK(bits >= bound() - 2);
}

TEST_CASE("integer products and plain terms through + and -", "[expr][fusion]") {
  Fixture& f = fixture();
  const Four in = make(f, 602);
  auto x = lift(in.ct[0]), y = lift(in.ct[1]), z = lift(in.ct[2]), u = lift(in.ct[3]);
  auto e = x * integer(2) - y * integer(-3) + z - (u - x * integer(5));
  CHECK(plan_stats(e).fused_sums == 1);
  const Evaluator& ev = f.evaluator;
  Ciphertext want = ev.multiply_integer(in.ct[0], 2);
  ev.sub_inplace(want, ev.multiply_integer(in.ct[1], -3));
  ev.add_inplace(want, in.ct[2]);
  ev.sub_inplace(want, in.ct[3]);
  ev.add_inplace(want, ev.multiply_integer(in.ct[0], 5));
  CHECK(same_words(eval(e, EvalContext{f.evaluator}), want));
  CHECK(same_words(eval(e, EvalContext{f.evaluator}, kEager), want));
}

TEST_CASE("a difference of plaintext and ciphertext products is split into terms", "[expr][fusion]") {
  Fixture& f = fixture();
  const Four in = make(f, 603);
  auto rng = cerium_test::make_rng(604);
  const Plaintext p0 = f.encoder.encode(random_complex(rng, f.max_slots()));
  const Plaintext p1 = f.encoder.encode(random_complex(rng, f.max_slots()));
  const Plaintext p2 = f.encoder.encode(random_complex(rng, f.max_slots()));
  auto x = lift(in.ct[0]), y = lift(in.ct[1]), z = lift(in.ct[2]);
  // x w0 - (y w1 - z w2): z w2 joins the pass (subtracted twice), y w1 is computed and subtracted.
  auto e = x * lift(p0) - (y * lift(p1) - z * lift(p2));
  CHECK(plan_stats(e).fused_sums == 1);
  const Evaluator& ev = f.evaluator;
  Ciphertext want = ev.multiply(in.ct[0], p0);
  ev.sub_inplace(want, ev.multiply(in.ct[1], p1));
  ev.add_inplace(want, ev.multiply(in.ct[2], p2));
  CHECK(same_words(eval(e, EvalContext{f.evaluator}), want));
  CHECK(same_words(eval(e, EvalContext{f.evaluator}, kEager), want));

  // Tensors: a b + c d - a d as three terms, the subtracted one computed alone; one relinearization.
  auto products = rescale(x * y - y * z + z * x);
  CHECK(plan_stats(products).relinearizations == 1);
  Ciphertext wantp = ev.multiply_no_relin(in.ct[0], in.ct[1]);
  ev.sub_inplace(wantp, ev.multiply_no_relin(in.ct[1], in.ct[2]));
  ev.add_inplace(wantp, ev.multiply_no_relin(in.ct[2], in.ct[0]));
  ev.relinearize_inplace(wantp);
  ev.rescale_inplace(wantp);
  CHECK(same_words(eval(products, EvalContext{f.evaluator}), wantp));
}

TEST_CASE("complex constants and mismatched scales fall back to the eager sequence", "[expr][fusion]") {
  Fixture& f = fixture();
  const Four in = make(f, 605);
  auto x = lift(in.ct[0]), y = lift(in.ct[1]);
  const Complex c(0.5, -0.25);
  const Evaluator& ev = f.evaluator;
  auto e = x * c + y * 0.5;
  Ciphertext want = ev.multiply(in.ct[0], c);
  ev.add_inplace(want, ev.multiply(in.ct[1], 0.5));
  CHECK(same_words(eval(e, EvalContext{f.evaluator}), want));

  // Different levels: the eager sequence brings the higher operand down first.
  const Ciphertext low = ev.level_down(in.ct[1], 2);
  auto mixed = x * 0.5 - lift(low) * 0.25;
  Ciphertext want2 = ev.multiply(in.ct[0], 0.5);
  ev.sub_inplace(want2, ev.multiply(low, 0.25));
  CHECK(same_words(eval(mixed, EvalContext{f.evaluator}), want2));
}

TEST_CASE("rescale folded into the fused pass equals the sum then the rescale", "[expr][fusion][rescale]") {
  Fixture& f = fixture();
  const Four in = make(f, 606);
  auto rng = cerium_test::make_rng(607);
  std::vector<Plaintext> pt;
  for (int i = 0; i < 3; ++i) pt.push_back(f.encoder.encode(random_complex(rng, f.max_slots())));
  auto x = lift(in.ct[0]), y = lift(in.ct[1]), z = lift(in.ct[2]);
  auto e = rescale(x * lift(pt[0]) - y * lift(pt[1]) + z * lift(pt[2]));  // y * pt1 is left out: no fold
  auto folded = rescale(x * lift(pt[0]) + y * lift(pt[1]) + z * lift(pt[2]));
  CHECK(plan_stats(e).folded_rescales == 0);
  const auto stats = plan_stats(folded);
  CHECK(stats.folded_rescales == 1);
  CHECK(stats.rescales == 1);
  static_assert(cerium::plan::elementwise_passes_v<decltype(folded)> == 4);
  CHECK(stats.elementwise_passes == 4);
  CHECK(plan_stats(folded, {.fold_rescale = false}).elementwise_passes == 2 + 1);

  const Evaluator& ev = f.evaluator;
  Ciphertext want = ev.multiply(in.ct[0], pt[0]);
  ev.add_inplace(want, ev.multiply(in.ct[1], pt[1]));
  ev.add_inplace(want, ev.multiply(in.ct[2], pt[2]));
  ev.rescale_inplace(want);
  const Ciphertext got = eval(folded, EvalContext{f.evaluator});
  CHECK(got.level() == want.level());
  CHECK(got.scale() == want.scale());
  CHECK(same_words(got, want));
  CHECK(same_words(eval(folded, EvalContext{f.evaluator}, {.fold_rescale = false}), want));

  Ciphertext want2 = ev.multiply(in.ct[0], pt[0]);
  ev.sub_inplace(want2, ev.multiply(in.ct[1], pt[1]));
  ev.add_inplace(want2, ev.multiply(in.ct[2], pt[2]));
  ev.rescale_inplace(want2);
  CHECK(same_words(eval(e, EvalContext{f.evaluator}), want2));

  // Tensors (3 parts) are relinearized before their rescale: no fold.
  CHECK(plan_stats(rescale(x * y + y * z)).folded_rescales == 0);
}
