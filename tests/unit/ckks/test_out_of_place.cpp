// The out-of-place forms write their result in one backend pass where the operands agree and fall back to a copy
// and the in-place form where they do not; either way their words, level, scale and seed must be exactly those of
// the copy followed by the in-place operation, and their inputs must stay as they were.

#include <complex>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "evaluator_test_support.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;
using namespace cerium::ckks;
using namespace evaluator_test;

namespace {

// out_of_place(a) against { copy = a.clone(); in_place(copy); }, and a unchanged.
void check_same(const std::string& what, const Ciphertext& a, const std::function<Ciphertext(const Ciphertext&)>& out_of_place,
                const std::function<void(Ciphertext&)>& in_place) {
  INFO(what);
  const Ciphertext before = a.clone();
  const Ciphertext got = out_of_place(a);
  Ciphertext want = a.clone();
  in_place(want);
  CHECK(same_words(got, want));
  CHECK(got.slots() == want.slots());
  CHECK(got.c1_seed().has_value() == want.c1_seed().has_value());
  CHECK(same_words(a, before));
}

}  // namespace

TEST_CASE("out-of-place operations give the words of a copy and the in-place form", "[evaluator][out_of_place]") {
  Fixture f(toy(11, 4, 2, 2), {.relinearization = true});
  auto rng = cerium_test::make_rng(77);
  INFO("test seed " << cerium_test::test_seed());
  const std::size_t slots = f.max_slots();
  const Ciphertext x = f.encrypt(random_complex(rng, slots));
  const Ciphertext y = f.encrypt(random_complex(rng, slots));
  const Ciphertext y_low = f.encrypt(random_complex(rng, slots), 2);  // another level: the aligning path
  const Plaintext p = f.encoder.encode(random_complex(rng, slots));
  const Plaintext p_low = f.encoder.encode(random_complex(rng, slots), {.level = 2});
  const Ciphertext x3 = f.evaluator.multiply_no_relin(x, y);
  const auto& ev = f.evaluator;

  for (const Ciphertext* b : {&y, &y_low, &x}) {  // x: an operand that is the other one
    const std::string which = b == &y ? "same level" : b == &x ? "one object" : "levels differ";
    check_same("add " + which, x, [&](const Ciphertext& a) { return ev.add(a, *b); },
               [&](Ciphertext& a) { ev.add_inplace(a, *b); });
    check_same("sub " + which, x, [&](const Ciphertext& a) { return ev.sub(a, *b); },
               [&](Ciphertext& a) { ev.sub_inplace(a, *b); });
    check_same("multiply_no_relin " + which, x, [&](const Ciphertext& a) { return ev.multiply_no_relin(a, *b); },
               [&](Ciphertext& a) { ev.multiply_no_relin_inplace(a, *b); });
    check_same("multiply " + which, x, [&](const Ciphertext& a) { return ev.multiply(a, *b); },
               [&](Ciphertext& a) { ev.multiply_inplace(a, *b); });
    check_same("multiply_rescale " + which, x, [&](const Ciphertext& a) { return ev.multiply_rescale(a, *b); },
               [&](Ciphertext& a) { ev.multiply_rescale_inplace(a, *b); });
  }
  const Ciphertext xy = f.evaluator.multiply(x, y);  // 2 parts at x3's scale
  check_same("add a 3-part operand", xy, [&](const Ciphertext& a) { return ev.add(a, x3); },
             [&](Ciphertext& a) { ev.add_inplace(a, x3); });
  check_same("sub from a 3-part operand", x3, [&](const Ciphertext& a) { return ev.sub(a, xy); },
             [&](Ciphertext& a) { ev.sub_inplace(a, xy); });
  for (const Plaintext* q : {&p, &p_low}) {
    const std::string which = q == &p ? "same level" : "levels differ";
    check_same("add plaintext " + which, x, [&](const Ciphertext& a) { return ev.add(a, *q); },
               [&](Ciphertext& a) { ev.add_inplace(a, *q); });
    check_same("multiply plaintext " + which, x, [&](const Ciphertext& a) { return ev.multiply(a, *q); },
               [&](Ciphertext& a) { ev.multiply_inplace(a, *q); });
  }
  const double c = std::uniform_real_distribution<double>(-3, 3)(rng);
  check_same("multiply real constant", x, [&](const Ciphertext& a) { return ev.multiply(a, c); },
             [&](Ciphertext& a) { ev.multiply_inplace(a, c); });
  check_same("multiply complex constant", x, [&](const Ciphertext& a) { return ev.multiply(a, std::complex<double>(c, 1)); },
             [&](Ciphertext& a) { ev.multiply_inplace(a, std::complex<double>(c, 1)); });
  check_same("multiply complex constant with no imaginary part", x,
             [&](const Ciphertext& a) { return ev.multiply(a, std::complex<double>(c, 0)); },
             [&](Ciphertext& a) { ev.multiply_inplace(a, std::complex<double>(c, 0)); });
  check_same("negate", x, [&](const Ciphertext& a) { return ev.negate(a); }, [&](Ciphertext& a) { ev.negate_inplace(a); });
  check_same("relinearize", x3, [&](const Ciphertext& a) { return ev.relinearize(a); },
             [&](Ciphertext& a) { ev.relinearize_inplace(a); });
  check_same("relinearize a 2-part ciphertext", x, [&](const Ciphertext& a) { return ev.relinearize(a); },
             [&](Ciphertext& a) { ev.relinearize_inplace(a); });
  check_same("relinearize_rescale", x3, [&](const Ciphertext& a) { return ev.relinearize_rescale(a); },
             [&](Ciphertext& a) { ev.relinearize_rescale_inplace(a); });
  for (const int level : {4, 3, 0}) {
    check_same("level_down to " + std::to_string(level), x, [&](const Ciphertext& a) { return ev.level_down(a, level); },
               [&](Ciphertext& a) { ev.level_down_inplace(a, level); });
  }

  // A fresh secret-key encryption keeps c1's seed through level_down, as in place.
  Encryptor symmetric(f.keygen.secret_key());
  const Ciphertext seeded = symmetric.encrypt(p);
  REQUIRE(seeded.c1_seed().has_value());
  check_same("level_down of a seeded ciphertext", seeded, [&](const Ciphertext& a) { return ev.level_down(a, 1); },
             [&](Ciphertext& a) { ev.level_down_inplace(a, 1); });

  // The checks run as in place: typed errors, nothing half done.
  CHECK_THROWS_AS(ev.level_down(x, 5), LevelError);
  CHECK_THROWS_AS(ev.multiply(x3, y), InvalidArgument);
  CHECK_THROWS_AS(ev.multiply(ev.level_down(x, 0), y), LevelError);
}
