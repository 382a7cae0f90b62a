// Expressions own their operands: an `auto` expression built in a scope whose ciphertexts and plaintexts are
// then destroyed still evaluates to the right values.

#include <optional>

#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;

namespace {
// Everything the expression refers to is a local of this function, gone when it returns.
auto build(Fixture& f, const Values& vx, const Values& vy, const Values& vw) {
  Ciphertext cx = f.encrypt(vx);
  const Ciphertext cy = f.encrypt(vy);
  const Plaintext pw = f.encoder.encode(vw);
  auto x = lift(std::move(cx));  // moved in
  auto y = lift(cy);             // copied in
  auto w = lift(pw);
  return rescale(x * y) + rescale(rotate(x, 1) * w);
}
}  // namespace

TEST_CASE("expressions do not dangle when their sources are gone", "[expr][lifetime]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(401);
  const std::size_t n = f.max_slots();
  const Values vx = random_complex(rng, n), vy = random_complex(rng, n), vw = random_complex(rng, n);
  std::optional<decltype(build(f, vx, vy, vw))> e;
  {
    e.emplace(build(f, vx, vy, vw));
  }
  // Overwrite the heap a little so that a dangling reference would read garbage.
  std::vector<Ciphertext> noise;
  for (int i = 0; i < 4; ++i) noise.push_back(f.encrypt(vw));
  const Ciphertext out = eval(*e, EvalContext{f.evaluator});
  Values want(n);
  const Values rx = rotated(vx, 1);
  for (std::size_t i = 0; i < n; ++i) want[i] = vx[i] * vy[i] + rx[i] * vw[i];
  const double bits = precision_bits(f.decrypt(out), want);
  INFO("precision " << bits << " bits");
  CHECK(bits >= bound() - 4);
}
