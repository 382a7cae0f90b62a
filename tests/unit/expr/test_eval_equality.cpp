// Where the planner does not change rounding, eval(expression) equals the eager evaluator's words for the same
// computation in the planner's order (left operand first), with the same keys and ciphertexts: elementwise
// chains, rotations of one source summed (hoisted rotations equal single ones word for word), single products,
// sum_rotations, conjugation and level_down. Each case also checks the decrypted values.

#include <array>
#include <cstdint>
#include <span>

#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;

namespace {

struct Inputs {
  Values vx, vy, vw;
  Ciphertext x, y;
  Plaintext w;
};

Inputs make_inputs(Fixture& f, std::uint64_t seed) {
  auto rng = cerium_test::make_rng(seed);
  const std::size_t n = f.max_slots();
  Inputs in;
  in.vx = random_complex(rng, n);
  in.vy = random_complex(rng, n);
  in.vw = random_complex(rng, n);
  in.x = f.encrypt(in.vx);
  in.y = f.encrypt(in.vy);
  in.w = f.encoder.encode(in.vw);
  return in;
}

void check_values(Fixture& f, const Ciphertext& got, const Values& want, double bits) {
  const double p = precision_bits(f.decrypt(got), want);
  INFO("precision " << p << " bits, required " << bits);
  CHECK(p >= bits);
}

}  // namespace

TEST_CASE("eval equals eager: elementwise chain", "[expr][eval]") {
  Fixture& f = fixture();
  Inputs in = make_inputs(f, 201);
  auto x = lift(in.x.clone()), y = lift(in.y.clone());
  auto w = lift(in.w.clone());
  auto e = -(x + y) * w + x * w + 0.25;
  static_assert(cerium::expr::elementwise_v<decltype(e)>);
  const Ciphertext got = eval(e, EvalContext{f.evaluator});

  const Evaluator& ev = f.evaluator;
  Ciphertext want = ev.negate(ev.add(in.x, in.y));
  ev.multiply_inplace(want, in.w);
  ev.add_inplace(want, ev.multiply(in.x, in.w));
  ev.add_inplace(want, 0.25);
  CHECK(same_words(got, want));
  Values expect(in.vx.size());
  for (std::size_t i = 0; i < expect.size(); ++i)
    expect[i] = -(in.vx[i] + in.vy[i]) * in.vw[i] + in.vx[i] * in.vw[i] + 0.25;
  check_values(f, got, expect, bound() - 2);
}

TEST_CASE("eval equals eager: rotations of one source share a ModUp", "[expr][eval]") {
  Fixture& f = fixture();
  Inputs in = make_inputs(f, 202);
  auto x = lift(in.x.clone());
  auto e = rotate(x, 1) + rotate(x, 2) + rotate(x, -3) + x;
  CHECK(cerium::plan::plan_stats(e).mod_ups == 1);
  const Ciphertext got = eval(e, EvalContext{f.evaluator});

  const Evaluator& ev = f.evaluator;
  Ciphertext want = ev.rotate(in.x, 1);
  ev.add_inplace(want, ev.rotate(in.x, 2));
  ev.add_inplace(want, ev.rotate(in.x, -3));
  ev.add_inplace(want, in.x);
  CHECK(same_words(got, want));
  Values expect = in.vx;
  for (const std::int64_t k : {1, 2, -3}) expect = zip(expect, rotated(in.vx, k), [](Complex a, Complex b) {
                                            return a + b;
                                          });
  check_values(f, got, expect, bound() - 2);
}

TEST_CASE("eval equals eager: single products, rescale, constants", "[expr][eval]") {
  Fixture& f = fixture();
  Inputs in = make_inputs(f, 203);
  auto x = lift(in.x.clone()), y = lift(in.y.clone());
  const Evaluator& ev = f.evaluator;

  const Ciphertext got = eval(rescale(x * y), EvalContext{f.evaluator});
  CHECK(same_words(got, ev.rescale(ev.multiply(in.x, in.y))));
  check_values(f, got, zip(in.vx, in.vy, [](Complex a, Complex b) { return a * b; }), bound());

  const Ciphertext scaled = eval(rescale(x * 0.5) - 1.0, EvalContext{f.evaluator});
  CHECK(same_words(scaled, ev.sub(ev.rescale(ev.multiply(in.x, 0.5)), 1.0)));
  check_values(f, scaled, map(in.vx, [](Complex a) { return 0.5 * a - 1.0; }), bound());
}

TEST_CASE("eval equals eager: sum_rotations, conjugate, level_down", "[expr][eval]") {
  Fixture& f = fixture();
  Inputs in = make_inputs(f, 204);
  auto x = lift(in.x.clone());
  auto w = lift(in.w.clone());
  const Evaluator& ev = f.evaluator;

  const Ciphertext got = eval(sum_rotations(rescale(x * w), 0, 1, 2), EvalContext{f.evaluator});
  const Ciphertext product = ev.rescale(ev.multiply(in.x, in.w));
  const std::array<std::int64_t, 3> steps{0, 1, 2};
  auto rotations = ev.rotate_hoisted(product, std::span<const std::int64_t>(steps));
  Ciphertext want = std::move(rotations[0]);
  ev.add_inplace(want, rotations[1]);
  ev.add_inplace(want, rotations[2]);
  CHECK(same_words(got, want));
  const Values xw = zip(in.vx, in.vw, [](Complex a, Complex b) { return a * b; });
  Values expect = xw;
  for (const std::int64_t k : {1, 2}) expect = zip(expect, rotated(xw, k), [](Complex a, Complex b) { return a + b; });
  check_values(f, got, expect, bound() - 2);

  const Ciphertext conj = eval(conjugate(level_down(x, 1)), EvalContext{f.evaluator});
  CHECK(same_words(conj, ev.conjugate(ev.level_down(in.x, 1))));
  CHECK(conj.level() == 1);
  check_values(f, conj, map(in.vx, [](Complex a) { return std::conj(a); }), bound());
}
