// A sum of ciphertext products shares one relinearization: the 3-part tensors are summed and one key switch
// turns the sum into 2 parts, then one rescale. The eager path relinearizes each product, so the two results
// differ by key-switch noise (each key switch adds an error of the order of its noise, divided by the rescale
// like the rest): not word for word. Stated bound: both decrypt within log2(scale) - log2(N) - 9 - 2 bits of the
// exact result (3 products summed: at most 2 bits more than one product, see test_evaluator.cpp's bounds), and
// the shared plan is at least as precise as that bound; the plan does 1 relinearization instead of 3.

#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;

TEST_CASE("a sum of products shares one relinearization within the stated precision", "[expr][relin]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(301);
  const std::size_t n = f.max_slots();
  const Values a = random_complex(rng, n), b = random_complex(rng, n), c = random_complex(rng, n),
               d = random_complex(rng, n);
  const Ciphertext ca = f.encrypt(a), cb = f.encrypt(b), cc = f.encrypt(c), cd = f.encrypt(d);
  auto xa = lift(ca), xb = lift(cb), xc = lift(cc), xd = lift(cd);

  auto e = rescale(xa * xb + xc * xd - xa * xd);
  const auto stats = cerium::plan::plan_stats(e);
  CHECK(stats.relinearizations == 1);
  CHECK(stats.key_switches == 1);
  CHECK(stats.rescales == 1);
  const Ciphertext fused = eval(e, EvalContext{f.evaluator});

  const Evaluator& ev = f.evaluator;
  Ciphertext eager = ev.multiply(ca, cb);
  ev.add_inplace(eager, ev.multiply(cc, cd));
  ev.sub_inplace(eager, ev.multiply(ca, cd));
  ev.rescale_inplace(eager);

  Values want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = a[i] * b[i] + c[i] * d[i] - a[i] * d[i];
  const double fused_bits = precision_bits(f.decrypt(fused), want);
  const double eager_bits = precision_bits(f.decrypt(eager), want);
  const double gap_bits = precision_bits(f.decrypt(fused), f.decrypt(eager));
  INFO("fused " << fused_bits << " bits, eager " << eager_bits << " bits, fused vs eager " << gap_bits
                << " bits, bound " << bound() - 2);
  CHECK(fused.size() == 2);
  CHECK(fused.level() == eager.level());
  CHECK(fused.scale() == eager.scale());
  CHECK(fused_bits >= bound() - 2);
  CHECK(eager_bits >= bound() - 2);
  CHECK(gap_bits >= bound() - 2);
  CHECK_FALSE(same_words(fused, eager));  // the rounding did change: the rule is real
}
