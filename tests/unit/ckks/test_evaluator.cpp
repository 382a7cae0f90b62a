// The evaluator's arithmetic, end to end through encode/encrypt/decrypt/decode, on fresh random inputs in [-1, 1]:
// precision in bits (-log2 of the largest slot error) is reported with INFO and checked against a stated bound.
//
// Bounds. The noise of a fresh public-key encryption (v e + e0 + e1 s) has coefficients of about
// sigma sqrt(2N/3), and the canonical embedding multiplies that by about sqrt(N) in the slots: the largest slot
// error is about 2^5 N / scale, and a multiply + relinearize + rescale keeps that order (the products x e_y + y e_x,
// the rescale's rounding and the key switch are each about as large). Measured: log2(scale) - log2(N) - 5 give or
// take a bit, for scale 2^56 (two 28-bit primes per level) and 2^28 (one). We require 4 bits less:
// log2(scale) - log2(N) - 9 (36 bits at N = 2^11 and scale 2^56; 9 bits at N = 2^10 and scale 2^28), and 2 bits
// more for additions, which add no noise of their own. The INFO lines give the figures.

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "cerium/ckks/scale.hpp"
#include "evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

namespace {

double bound_for(const CkksConfig& config) { return config.level_prime_bits * config.level_width - config.log_n - 9.0; }

std::vector<CkksConfig> toy_configs() {
  return {toy(10, 3, 1, 1), toy(11, 4, 2, 2), toy(12, 3, 2, 3), toy(11, 5, 1, 3)};
}

}  // namespace

TEST_CASE("add, sub and negate of ciphertexts, plaintexts and constants", "[ckks][evaluator]") {
  auto rng = cerium_test::make_rng(101);
  for (const auto& config : {toy(11, 2, 2, 2), toy(10, 2, 1, 1)}) {
    Fixture f(config, {.relinearization = false});
    const double bound = bound_for(config) + 2;  // additions add no noise beyond the inputs'
    const std::size_t n = f.max_slots();
    const Values x = random_complex(rng, n), y = random_complex(rng, n);
    const Ciphertext a = f.encrypt(x), b = f.encrypt(y);
    const Plaintext p = f.encoder.encode(y, {.scale = a.scale()});
    const double r = std::uniform_real_distribution<double>(-1, 1)(rng);
    const Complex c(std::uniform_real_distribution<double>(-1, 1)(rng),
                    std::uniform_real_distribution<double>(-1, 1)(rng));

    struct Case {
      const char* name;
      Ciphertext result;
      Values want;
    };
    std::vector<Case> cases;
    cases.push_back({"ct + ct", f.evaluator.add(a, b), zip(x, y, [](Complex u, Complex v) { return u + v; })});
    cases.push_back({"ct - ct", f.evaluator.sub(a, b), zip(x, y, [](Complex u, Complex v) { return u - v; })});
    cases.push_back({"-ct", f.evaluator.negate(a), map(x, [](Complex u) { return -u; })});
    cases.push_back({"ct + pt", f.evaluator.add(a, p), zip(x, y, [](Complex u, Complex v) { return u + v; })});
    cases.push_back({"ct - pt", f.evaluator.sub(a, p), zip(x, y, [](Complex u, Complex v) { return u - v; })});
    cases.push_back({"ct + real", f.evaluator.add(a, r), map(x, [r](Complex u) { return u + r; })});
    cases.push_back({"ct - real", f.evaluator.sub(a, r), map(x, [r](Complex u) { return u - r; })});
    cases.push_back({"ct + complex", f.evaluator.add(a, c), map(x, [c](Complex u) { return u + c; })});
    cases.push_back({"ct - complex", f.evaluator.sub(a, c), map(x, [c](Complex u) { return u - c; })});
    Ciphertext in_place = a.clone();
    f.evaluator.add_inplace(in_place, b);
    f.evaluator.sub_inplace(in_place, 0.5);
    f.evaluator.negate_inplace(in_place);
    cases.push_back({"-(ct + ct - 0.5) in place", std::move(in_place),
                     zip(x, y, [](Complex u, Complex v) { return -(u + v - 0.5); })});
    for (const auto& test : cases) {
      const double bits = precision_bits(f.decrypt(test.result), test.want);
      INFO(f.context->parameters().describe() << ": " << test.name << ": " << bits << " bits (bound " << bound << ")");
      CHECK(bits >= bound);
      CHECK(test.result.level() == a.level());
      CHECK(test.result.scale() == a.scale());
    }
  }
}

TEST_CASE("multiply, relinearize and rescale at every level down to 0", "[ckks][evaluator]") {
  auto rng = cerium_test::make_rng(102);
  for (const auto& config : toy_configs()) {
    Fixture f(config);
    const double bound = bound_for(config);
    for (int level = f.context->max_level(); level >= 1; --level) {
      const Values x = random_complex(rng, f.max_slots()), y = random_complex(rng, f.max_slots());
      const Ciphertext a = f.encrypt(x, level), b = f.encrypt(y, level);
      const Ciphertext product = f.evaluator.multiply(a, b);
      REQUIRE(product.size() == 2);
      REQUIRE(product.scale() == a.scale() * b.scale());
      const Ciphertext c = f.evaluator.rescale(product);
      REQUIRE(c.level() == level - 1);
      REQUIRE(c.scale() == a.scale() * b.scale() / f.evaluator.level_prime_product(level));
      const double bits = precision_bits(f.decrypt(c), zip(x, y, [](Complex u, Complex v) { return u * v; }));
      INFO(f.context->parameters().describe()
           << ", level " << level << ": multiply+relinearize+rescale " << bits << " bits (bound " << bound << ")");
      CHECK(bits >= bound);

      // The tensor product and relinearization as separate steps give the same words.
      const Ciphertext three = f.evaluator.multiply_no_relin(a, b);
      REQUIRE(three.size() == 3);
      CHECK(precision_bits(f.decrypt(f.evaluator.rescale(three)),
                           zip(x, y, [](Complex u, Complex v) { return u * v; })) >= bound);
      CHECK(same_words(f.evaluator.relinearize(three), product));
      // The fused forms give the words of the two steps.
      CHECK(same_words(f.evaluator.multiply_rescale(a, b), c));
      CHECK(same_words(f.evaluator.relinearize_rescale(three), c));
      CHECK(same_words(f.evaluator.relinearize_rescale(product), c));
      // Squaring through one object (in place, a aliasing b).
      Ciphertext square = a.clone();
      f.evaluator.multiply_inplace(square, square);
      f.evaluator.rescale_inplace(square);
      CHECK(precision_bits(f.decrypt(square), map(x, [](Complex u) { return u * u; })) >= bound);
    }
  }
}

TEST_CASE("lazy relinearization: a sum of tensor products relinearized once", "[ckks][evaluator]") {
  auto rng = cerium_test::make_rng(107);
  const CkksConfig config = toy(11, 3, 2, 2);
  Fixture f(config);
  const std::size_t n = f.max_slots();
  const Values w = random_complex(rng, n), x = random_complex(rng, n), y = random_complex(rng, n),
               z = random_complex(rng, n);
  Ciphertext sum = f.evaluator.multiply_no_relin(f.encrypt(w), f.encrypt(x));
  f.evaluator.add_inplace(sum, f.evaluator.multiply_no_relin(f.encrypt(y), f.encrypt(z)));
  REQUIRE(sum.size() == 3);
  f.evaluator.rescale_inplace(sum);  // rescaling before relinearizing is valid too
  f.evaluator.relinearize_inplace(sum);
  REQUIRE(sum.size() == 2);
  Values want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = w[i] * x[i] + y[i] * z[i];
  const double bits = precision_bits(f.decrypt(sum), want);
  INFO("w x + y z with one relinearization: " << bits << " bits (bound " << bound_for(config) - 1 << ")");
  CHECK(bits >= bound_for(config) - 1);
}

TEST_CASE("plaintext, constant and integer multiplication", "[ckks][evaluator]") {
  auto rng = cerium_test::make_rng(103);
  for (const auto& config : {toy(11, 3, 2, 2), toy(10, 3, 1, 2)}) {
    Fixture f(config, {.relinearization = false});
    const double bound = bound_for(config);
    const std::size_t n = f.max_slots();
    const Values x = random_complex(rng, n), y = random_complex(rng, n);
    const Ciphertext a = f.encrypt(x);
    const int top = a.level();

    // By a plaintext at the default scale, then rescaled.
    const Plaintext p = f.encoder.encode(y);
    Ciphertext by_plain = f.evaluator.rescale(f.evaluator.multiply(a, p));
    double bits = precision_bits(f.decrypt(by_plain), zip(x, y, [](Complex u, Complex v) { return u * v; }));
    INFO(f.context->parameters().describe() << ": ct * pt " << bits << " bits");
    CHECK(bits >= bound);

    // By real and complex constants: encoded at P_top, so a rescale restores the scale.
    const double r = std::uniform_real_distribution<double>(-1, 1)(rng);
    const Complex c(std::uniform_real_distribution<double>(-1, 1)(rng),
                    std::uniform_real_distribution<double>(-1, 1)(rng));
    for (const Complex constant : {Complex(r, 0.0), c}) {
      Ciphertext product =
          constant.imag() == 0 ? f.evaluator.multiply(a, constant.real()) : f.evaluator.multiply(a, constant);
      REQUIRE(product.scale() == a.scale() * f.evaluator.level_prime_product(top));
      f.evaluator.rescale_inplace(product);
      REQUIRE(product.level() == top - 1);
      CHECK(scales_match(product.scale(), a.scale()));
      bits = precision_bits(f.decrypt(product), map(x, [constant](Complex u) { return u * constant; }));
      INFO(f.context->parameters().describe() << ": ct * constant " << constant << ": " << bits << " bits");
      CHECK(bits >= bound);
    }
    // A constant larger than 1 (its rounded residues are exact at any size).
    Ciphertext big = f.evaluator.rescale(f.evaluator.multiply(a, 1234.5));
    bits = precision_bits(f.decrypt(big), map(x, [](Complex u) { return u * 1234.5; }));
    INFO("ct * 1234.5: " << bits << " bits");
    CHECK(bits >= bound - std::log2(1234.5) - 1);

    // By integers: no level, no scale change.
    for (const std::int64_t k : {std::int64_t{3}, std::int64_t{-5}, std::int64_t{0}}) {
      Ciphertext product = f.evaluator.multiply_integer(a, k);
      REQUIRE(product.level() == top);
      REQUIRE(product.scale() == a.scale());
      bits = precision_bits(f.decrypt(product), map(x, [k](Complex u) { return u * static_cast<double>(k); }));
      INFO("ct * " << k << ": " << bits << " bits");
      CHECK(bits >= bound - 3);
    }
  }
}

TEST_CASE("a chain of multiplications to the last level decrypts correctly", "[ckks][evaluator]") {
  auto rng = cerium_test::make_rng(104);
  for (const auto& config : {toy(11, 6, 2, 3), toy(10, 5, 1, 2)}) {
    Fixture f(config);
    const std::size_t n = f.max_slots();
    Values want = random_real(rng, n);
    Ciphertext acc = f.encrypt(want);
    // Each step multiplies by a fresh ciphertext at the top level: the evaluator brings it down to acc's level.
    while (acc.level() > 0) {
      const Values y = random_complex(rng, n);
      f.evaluator.multiply_inplace(acc, f.encrypt(y));
      f.evaluator.rescale_inplace(acc);
      want = zip(want, y, [](Complex u, Complex v) { return u * v; });
    }
    const double bits = precision_bits(f.decrypt(acc), want);
    const double bound = bound_for(config) - 2;
    INFO(f.context->parameters().describe()
         << ": " << config.levels << " multiplications: " << bits << " bits (bound " << bound << ")");
    CHECK(bits >= bound);
    CHECK(acc.level() == 0);
  }
}

TEST_CASE("levels and scales of operands are aligned automatically", "[ckks][evaluator]") {
  auto rng = cerium_test::make_rng(105);
  for (const auto& config : {toy(11, 4, 2, 2), toy(11, 4, 1, 2)}) {
    Fixture f(config);
    const double bound = bound_for(config) - 1;
    const std::size_t n = f.max_slots();
    const Values x = random_complex(rng, n), y = random_complex(rng, n), z = random_complex(rng, n);
    const Ciphertext a = f.encrypt(x), b = f.encrypt(y), c = f.encrypt(z);
    const int top = a.level();
    // x y at top - 1 with scale s^2 / P_top, which differs from s: adding c (top, scale s) needs c to come down one
    // level and onto that scale (the integer factor and a rescale).
    const Ciphertext xy = f.evaluator.rescale(f.evaluator.multiply(a, b));
    REQUIRE_FALSE(scales_match(xy.scale(), c.scale()));
    const Values xy_want = zip(x, y, [](Complex u, Complex v) { return u * v; });
    for (const bool swapped : {false, true}) {
      const Ciphertext sum = swapped ? f.evaluator.add(c, xy) : f.evaluator.add(xy, c);
      CHECK(sum.level() == top - 1);
      CHECK(scales_match(sum.scale(), xy.scale()));
      const double bits = precision_bits(f.decrypt(sum), zip(xy_want, z, [](Complex u, Complex v) { return u + v; }));
      INFO(f.context->parameters().describe() << (swapped ? ": c + xy " : ": xy + c ") << bits << " bits");
      CHECK(bits >= bound);
    }
    const Ciphertext diff = f.evaluator.sub(c, xy);
    CHECK(precision_bits(f.decrypt(diff), zip(z, xy_want, [](Complex u, Complex v) { return u - v; })) >= bound);

    // Two levels apart with matching scales: pure limb dropping, exact.
    const Ciphertext low = f.evaluator.level_down(c, top - 2);
    CHECK(low.scale() == c.scale());
    CHECK(precision_bits(f.decrypt(low), z) >= bound);
    const Ciphertext mixed = f.evaluator.add(a, low);
    CHECK(mixed.level() == top - 2);
    CHECK(precision_bits(f.decrypt(mixed), zip(x, z, [](Complex u, Complex v) { return u + v; })) >= bound);

    // Multiplication only aligns levels: the scales multiply.
    const Ciphertext prod = f.evaluator.multiply(xy, c);
    CHECK(prod.level() == top - 1);
    CHECK(prod.scale() == xy.scale() * c.scale());
    const double bits = precision_bits(f.decrypt(f.evaluator.rescale(prod)),
                                       zip(xy_want, z, [](Complex u, Complex v) { return u * v; }));
    INFO("xy * c across levels: " << bits << " bits");
    CHECK(bits >= bound - 1);

    // A plaintext at the top level added to a lower ciphertext loses its extra limbs; the scale must match.
    const Plaintext p = f.encoder.encode(y, {.scale = xy.scale()});
    CHECK(precision_bits(f.decrypt(f.evaluator.add(xy, p)),
                         zip(xy_want, y, [](Complex u, Complex v) { return u + v; })) >= bound);
    // adjust_scale moves a ciphertext one level down onto a chosen scale.
    const Ciphertext moved = f.evaluator.adjust_scale(c, xy.scale());
    CHECK(moved.level() == top - 1);
    CHECK(scales_match(moved.scale(), xy.scale()));
    CHECK(precision_bits(f.decrypt(moved), z) >= bound);
  }
}

TEST_CASE("the scale-matching rule", "[ckks][evaluator]") {
  const double s = std::ldexp(1.0, 56);
  CHECK(scales_match(s, s));
  CHECK(scales_match(s, s * (1 + std::ldexp(1.0, -50))));  // double round-off in the tracking
  CHECK_FALSE(scales_match(s, s * (1 + std::ldexp(1.0, -40))));
  CHECK(scales_match(std::ldexp(1.0, 28), std::ldexp(1.0, 28) + 0.5));  // within one unit of the scaled integers
  CHECK_FALSE(scales_match(std::ldexp(1.0, 28), std::ldexp(1.0, 28) + 2));
}

TEST_CASE("fixed key and encryption seeds give the same ciphertext words on every run", "[ckks][evaluator]") {
  // Two independent pipelines from the same seeds (keys, encryption) and inputs must agree word for word, through
  // multiply, relinearize, rescale and rotate.
  const CkksConfig config = toy(10, 2, 2, 2);
  auto run = [&config]() {
    const ContextPtr context = Context::create(config);
    const KeyGenerator keygen(context, fixed_seed(7));
    const Encoder encoder(context);
    const Encryptor encryptor(keygen.public_key(), fixed_seed(8));
    Evaluator evaluator(context);
    evaluator.set_relinearization_key(std::make_shared<const RelinearizationKey>(keygen.relinearization_key()));
    evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(keygen.galois_keys({3})));
    Values x(context->ring_degree() / 2);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = {std::sin(0.1 * i), std::cos(0.3 * i)};
    const Ciphertext a = encryptor.encrypt(encoder.encode(x));
    const Ciphertext b = encryptor.encrypt(encoder.encode(x));
    return evaluator.rotate(evaluator.rescale(evaluator.multiply(a, b)), 3);
  };
  const Ciphertext first = run();
  const Ciphertext second = run();
  CHECK(same_words(first, second));
}

TEST_CASE("multiply and rotate at N = 2^14 (presets::leveled_n14)", "[ckks][evaluator][n14]") {
  auto rng = cerium_test::make_rng(106);
  Fixture f(presets::leveled_n14(), {.rotations = {1}});
  const std::size_t n = f.max_slots();
  const Values x = random_complex(rng, n), y = random_complex(rng, n);
  const Ciphertext c = f.evaluator.rotate(f.evaluator.rescale(f.evaluator.multiply(f.encrypt(x), f.encrypt(y))), 1);
  const double bits = precision_bits(f.decrypt(c), rotated(zip(x, y, [](Complex u, Complex v) { return u * v; }), 1));
  // log2(scale) - log2(N) - 9 = 33 with scale 2^56 and N = 2^14, one bit less for the rotation's key switch on
  // top of the product's (measured: 34.8 to 37.4 bits).
  INFO(f.context->parameters().describe() << ": multiply, rescale, rotate by 1: " << bits << " bits (bound 32)");
  CHECK(bits >= 32);
}
