#include <gmpxx.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <map>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/core/error.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;
using namespace cerium::ckks;

namespace {

using Complex = std::complex<double>;

// Toy contexts are built once per shape and shared by the test cases.
ContextPtr toy_context(int log_n, int levels) {
  static std::map<std::pair<int, int>, ContextPtr> cache;
  auto& entry = cache[{log_n, levels}];
  if (!entry) entry = Context::create(CkksConfig{.log_n = log_n, .levels = levels, .insecure_opt_out = true});
  return entry;
}

std::vector<Complex> random_complex(std::mt19937_64& rng, std::size_t n, double bound = 1.0) {
  std::uniform_real_distribution<double> coordinate(-bound, bound);
  std::vector<Complex> v(n);
  for (auto& x : v) x = {coordinate(rng), coordinate(rng)};
  return v;
}

std::vector<double> random_real(std::mt19937_64& rng, std::size_t n, double bound = 1.0) {
  std::uniform_real_distribution<double> coordinate(-bound, bound);
  std::vector<double> v(n);
  for (auto& x : v) x = coordinate(rng);
  return v;
}

// Bits of precision: -log2 of the mean and of the largest absolute error (expected is zero-padded to the length
// of actual, as the encoder pads).
struct Precision {
  double mean_bits = 0;
  double min_bits = 0;
};

Precision precision(std::vector<Complex> expected, const std::vector<Complex>& actual) {
  expected.resize(actual.size());
  double sum = 0, largest = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double error = std::abs(expected[i] - actual[i]);
    sum += error;
    largest = std::max(largest, error);
  }
  const double mean = sum / static_cast<double>(actual.size());
  // An exact result counts as 64 bits, to keep the figures finite.
  return {mean == 0 ? 64.0 : -std::log2(mean), largest == 0 ? 64.0 : -std::log2(largest)};
}

std::vector<Complex> as_complex(const std::vector<double>& values) { return {values.begin(), values.end()}; }

bool message_contains(const std::exception& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

// round(value) mod q through GMP, as the independent reference for the exact reduction.
std::uint32_t gmp_residue(const mpz_class& x, std::uint32_t q) {
  return static_cast<std::uint32_t>(mpz_fdiv_ui(x.get_mpz_t(), q));
}

mpz_class gmp_rounded(double value) {
  mpz_class x;
  mpz_set_d(x.get_mpz_t(), std::round(value));  // exact: a rounded double is an integer
  return x;
}

// A coefficient-form polynomial over basis whose coefficient k is coefficients[k] (others zero), via GMP residues.
ring::RnsPoly poly_from_integers(const ring::RnsBasisPtr& basis, const std::map<std::size_t, mpz_class>& coefficients) {
  ring::RnsPoly poly(basis, ring::PolyForm::coefficient);
  for (std::size_t i = 0; i < basis->size(); ++i)
    for (const auto& [position, value] : coefficients) poly.limb(i)[position] = gmp_residue(value, basis->prime(i));
  return poly;
}

double log2_scale(double scale) { return std::log2(scale); }

}  // namespace

TEST_CASE("encode then decode recovers random vectors at every slot count and level", "[ckks][encoder]") {
  auto rng = cerium_test::make_rng(1);
  INFO("seed " << cerium_test::test_seed());
  for (const auto& [log_n, levels] : {std::pair{10, 2}, std::pair{11, 3}, std::pair{12, 2}}) {
    const auto context = toy_context(log_n, levels);
    const Encoder encoder(context);
    const std::size_t full = context->ring_degree() / 2;
    for (const std::size_t slots : {std::size_t{1}, std::size_t{2}, std::size_t{16}, full}) {
      for (const int level : {0, levels}) {
        INFO("log N = " << log_n << ", slots = " << slots << ", level = " << level);
        const EncodeOptions options{.level = level, .slots = slots};
        const auto z = random_complex(rng, slots);
        const Plaintext complex_pt = encoder.encode(z, options);
        REQUIRE(complex_pt.level() == level);
        REQUIRE(complex_pt.slots() == slots);
        REQUIRE(complex_pt.scale() == context->parameters().default_scale());
        REQUIRE(complex_pt.poly().form() == ring::PolyForm::ntt);
        REQUIRE(complex_pt.poly().basis() == *context->q_basis(level));
        const auto complex_precision = precision(z, encoder.decode(complex_pt));

        const auto x = random_real(rng, slots);
        const auto real_decoded = encoder.decode_real(encoder.encode(x, options));
        REQUIRE(real_decoded.size() == slots);
        const auto real_precision = precision(as_complex(x), as_complex(real_decoded));

        INFO("complex: mean " << complex_precision.mean_bits << " bits, worst " << complex_precision.min_bits
                              << " bits; real: mean " << real_precision.mean_bits << " bits, worst "
                              << real_precision.min_bits << " bits");
        // Scale 2^56: the bound for fresh encryptions is logScale - (logN + 2) bits; pure encoding loses
        // only the double-precision FFT error (measured 48 to 53 bits worst case, 50 to 55 mean).
        CHECK(complex_precision.mean_bits >= 56 - (log_n + 2));
        CHECK(complex_precision.mean_bits >= 48);
        CHECK(complex_precision.min_bits >= 45);
        CHECK(real_precision.min_bits >= 45);
      }
    }
  }
}

TEST_CASE("a periodic vector encodes at its period and decodes to the repeated values", "[ckks][encoder]") {
  auto rng = cerium_test::make_rng(11);
  INFO("seed " << cerium_test::test_seed());
  const auto context = toy_context(12, 3);
  const Encoder encoder(context);
  const std::size_t full = context->ring_degree() / 2;
  for (const std::size_t slots : {std::size_t{64}, full}) {
    for (const std::size_t period : {std::size_t{1}, std::size_t{8}, slots}) {
      for (const int level : {0, 3}) {
        INFO("slots " << slots << ", period " << period << ", level " << level);
        const auto z = random_complex(rng, period);
        const EncodeOptions options{.level = level, .slots = slots};
        const Plaintext periodic = encoder.encode_periodic(z, options);
        CHECK(periodic.slots() == slots);
        CHECK(periodic.level() == level);
        // The period's own sparse encoding, relabelled: the same words; compressed, the same once expanded.
        const Plaintext at_period = encoder.encode(z, {.level = level, .slots = period});
        CHECK(periodic.poly() == at_period.poly());
        const PeriodicPlaintext compressed = encoder.encode_periodic_compressed(z, options);
        CHECK(compressed.words.size() == context->q_basis(level)->size() * 2 * period);
        CHECK(compressed.expand().poly() == periodic.poly());
        // Against the repeated vector: its decoding, and encode's words up to the FFT's rounding.
        std::vector<Complex> repeated(slots);
        for (std::size_t i = 0; i < slots; ++i) repeated[i] = z[i % period];
        CHECK(precision(repeated, encoder.decode(periodic)).min_bits >= 45);
        const Plaintext direct = encoder.encode(repeated, options);
        CHECK(precision(encoder.decode(direct), encoder.decode(periodic)).min_bits >= 45);
      }
    }
  }
  const auto z = random_complex(rng, 12);
  CHECK_THROWS_AS(encoder.encode_periodic(z, {.slots = 64}), InvalidArgument);  // 12 is not a power of two
  CHECK_THROWS_AS(encoder.encode_periodic(random_complex(rng, 128), {.slots = 64}), InvalidArgument);
}

TEST_CASE("an unscaled plaintext encodes to encode_periodic's words at any level and scale", "[ckks][encoder]") {
  auto rng = cerium_test::make_rng(21);
  INFO("seed " << cerium_test::test_seed());
  const auto context = toy_context(10, 4);
  const Encoder encoder(context);
  const std::size_t full = context->parameters().max_slots();
  for (const std::size_t period : {std::size_t{1}, std::size_t{16}, full}) {
    for (const double magnitude : {1.0, 1e6}) {
      const auto z = random_complex(rng, period, magnitude);
      const UnscaledPlaintext unscaled = encoder.unscaled(z, full);
      REQUIRE(unscaled.period() == period);
      REQUIRE(unscaled.count() * unscaled.gap() == context->ring_degree());
      REQUIRE(unscaled.bytes() == 2 * period * sizeof(double));
      for (int level = 0; level <= context->max_level(); ++level) {
        // The top scale gives integers beyond 2^64 for the larger values (round_exact's shifted form).
        for (const int log_scale : {25, 20 + 20 * level}) {
          INFO("period " << period << ", magnitude " << magnitude << ", level " << level << ", scale 2^"
                         << log_scale);
          const EncodeOptions options{.level = level, .scale = std::ldexp(1.0, log_scale), .slots = full};
          const Plaintext want = encoder.encode_periodic(z, options);
          const Plaintext got = encoder.encode(unscaled, {.level = level, .scale = options.scale});
          CHECK(got.slots() == full);
          CHECK(got.scale() == options.scale);
          CHECK(got.poly() == want.poly());
        }
      }
    }
  }
  // encode's checks: scale overflow names the level, a slot count below the period, levels, contexts.
  const UnscaledPlaintext unscaled = encoder.unscaled(random_complex(rng, 16), 64);
  CHECK(encoder.encode(unscaled).slots() == 64);
  CHECK_THROWS_AS(encoder.encode(unscaled, {.level = 0, .scale = std::ldexp(1.0, 120)}), InvalidArgument);
  CHECK_THROWS_AS(encoder.encode(unscaled, {.slots = 8}), InvalidArgument);
  CHECK_THROWS_AS(encoder.encode(unscaled, {.level = 9}), LevelError);
  CHECK_THROWS_AS(Encoder(toy_context(10, 2)).encode(unscaled), MismatchError);
  CHECK_THROWS_AS(encoder.encode(UnscaledPlaintext{}), MismatchError);
  CHECK_THROWS_AS(encoder.unscaled(random_complex(rng, 12), 64), InvalidArgument);  // not a power of two
  CHECK_THROWS_AS(encoder.unscaled(random_complex(rng, 128), 64), InvalidArgument);
  const std::vector<Complex> not_finite = {{1, 0}, {std::nan(""), 0}};
  CHECK_THROWS_AS(encoder.unscaled(not_finite, 64), InvalidArgument);

  // An evaluator's unscaled (on the CPU: the encoder's, uploaded) and its encode give the encoder's words.
  const Evaluator evaluator(context);
  const auto z = random_complex(rng, 32, 3.0);
  const UnscaledPlaintext from_evaluator = evaluator.unscaled(z, 64);
  const UnscaledPlaintext from_encoder = encoder.unscaled(z, 64);
  CHECK(std::ranges::equal(from_evaluator.host_coefficients(), from_encoder.host_coefficients()));
  CHECK(from_evaluator.largest() == from_encoder.largest());
  CHECK(evaluator.encode(from_evaluator, {.level = 1}).poly() == encoder.encode(from_encoder, {.level = 1}).poly());
  CHECK_THROWS_AS(evaluator.unscaled(not_finite, 64), InvalidArgument);
}

TEST_CASE("short vectors are zero-padded and scales other than the default work", "[ckks][encoder]") {
  auto rng = cerium_test::make_rng(2);
  INFO("seed " << cerium_test::test_seed());
  const auto context = toy_context(10, 2);
  const Encoder encoder(context);
  const auto z = random_complex(rng, 5);
  const auto decoded = encoder.decode(encoder.encode(z, {.slots = 8}));
  REQUIRE(decoded.size() == 8);
  CHECK(precision(z, decoded).min_bits >= 45);

  // Precision follows the scale: about log2(scale) - 5 bits at N = 2^10 (rounding error sqrt(N)/2 per slot).
  for (const double log_scale : {20.0, 30.0, 40.0, 90.0}) {
    const double scale = std::ldexp(1.0, static_cast<int>(log_scale));
    const auto w = random_complex(rng, 512);
    const Plaintext pt = encoder.encode(w, {.scale = scale});
    REQUIRE(pt.scale() == scale);
    const auto p = precision(w, encoder.decode(pt));
    INFO("scale 2^" << log_scale << ": mean " << p.mean_bits << " bits, worst " << p.min_bits << " bits");
    CHECK(p.min_bits >= std::min(log_scale - 8, 45.0));
  }
}

TEST_CASE("the encoded polynomial evaluated at zeta^(5^j) gives slot j (direct long double evaluation)",
          "[ckks][encoder]") {
  auto rng = cerium_test::make_rng(3);
  INFO("seed " << cerium_test::test_seed());
  const auto context = toy_context(10, 2);
  const Encoder encoder(context);
  const std::size_t n = context->ring_degree();
  // zeta^t = exp(i pi t / N) for t < 2N: exponents are reduced exactly, so no error accumulates in the powers.
  std::vector<std::complex<long double>> zeta(2 * n);
  for (std::size_t t = 0; t < 2 * n; ++t) {
    const long double angle =
        std::numbers::pi_v<long double> * static_cast<long double>(t) / static_cast<long double>(n);
    zeta[t] = {std::cos(angle), std::sin(angle)};
  }
  for (const std::size_t slots : {n / 2, std::size_t{8}, std::size_t{1}}) {
    INFO("slots " << slots);
    const auto z = random_complex(rng, slots);
    const Plaintext pt = encoder.encode(z, {.slots = slots});
    auto poly = pt.poly().clone();
    poly.to_coeff();
    const std::vector<std::int64_t> m = poly.to_signed();
    const long double scale = pt.scale();
    // Every one of the N/2 points, so sparse packing's repetition of the slots is checked too.
    double worst = 0;
    std::uint64_t exponent = 1;  // 5^j mod 2N
    for (std::size_t j = 0; j < n / 2; ++j, exponent = exponent * 5 % (2 * n)) {
      // The point zeta^(5^j) holds slot j mod n; its conjugate zeta^(-5^j) holds the conjugate (m is real).
      std::complex<long double> at_point = 0, at_conjugate = 0;
      for (std::size_t k = 0; k < n; ++k) {
        if (m[k] == 0) continue;
        const auto coefficient = static_cast<long double>(m[k]);
        at_point += coefficient * zeta[exponent * k % (2 * n)];
        at_conjugate += coefficient * zeta[(2 * n - exponent) * k % (2 * n)];
      }
      const std::complex<long double> expected(z[j % slots].real(), z[j % slots].imag());
      worst = std::max(worst, static_cast<double>(std::abs(at_point / scale - expected)));
      worst = std::max(worst, static_cast<double>(std::abs(at_conjugate / scale - std::conj(expected))));
    }
    INFO("worst error " << worst << " = 2^" << std::log2(worst));
    CHECK(worst < std::ldexp(1.0, -45));
  }
}

TEST_CASE("values whose scaled size exceeds 2^64 decode correctly", "[ckks][encoder]") {
  auto rng = cerium_test::make_rng(4);
  INFO("seed " << cerium_test::test_seed());
  const auto context = toy_context(11, 3);  // log2(Q) about 230
  const Encoder encoder(context);
  struct Case {
    double bound;
    double log_scale;
  };
  // |value| * scale: 2^66, 2^96 and 2^102 (a product's scale), far beyond 64-bit words.
  for (const Case c : {Case{1024, 56}, Case{std::ldexp(1.0, 40), 56}, Case{1024, 92}}) {
    const double scale = std::ldexp(1.0, static_cast<int>(c.log_scale));
    INFO("values up to " << c.bound << " at scale 2^" << c.log_scale);
    const auto z = random_complex(rng, 1024, c.bound);
    const auto decoded = encoder.decode(encoder.encode(z, {.scale = scale}));
    const auto p = precision(z, decoded);
    const double relative_bits = p.min_bits + std::log2(c.bound);
    INFO("worst absolute error 2^-" << p.min_bits << ", relative to the bound 2^-" << relative_bits);
    CHECK(relative_bits >= 45);
  }
  // Level 0 has only log2(Q) = 62 bits: 2^10 at scale 2^56 is a scale overflow there.
  try {
    (void)encoder.encode(std::vector<double>{1024.0}, {.level = 0, .slots = 1});
    FAIL("encoded a coefficient beyond Q/2");
  } catch (const InvalidArgument& e) {
    INFO(e.what());
    CHECK(message_contains(e, "scale overflow"));
    CHECK(message_contains(e, "level 0"));
  }
}

TEST_CASE("round_to_residues matches GMP for doubles up to 2^100 and rejects what would wrap", "[ckks][encoder]") {
  auto rng = cerium_test::make_rng(5);
  INFO("seed " << cerium_test::test_seed());
  const auto context = toy_context(10, 2);
  const ring::RnsBasis& basis = *context->q_basis(2);
  std::vector<std::uint32_t> out(basis.size());
  std::uniform_real_distribution<double> mantissa(0.5, 1.0);
  std::uniform_int_distribution<int> exponent(-3, 100);
  std::bernoulli_distribution sign;
  std::vector<double> values = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -7.49,
                                std::ldexp(1.0, 63), -std::ldexp(1.0, 63), std::ldexp(1.0, 64), -std::ldexp(1.0, 64),
                                std::ldexp(1.0, 64) - 2048, std::ldexp(1.0, 100), -std::ldexp(3.0, 99)};
  for (int i = 0; i < 2000; ++i) {
    const double v = std::ldexp(mantissa(rng), exponent(rng));
    values.push_back(sign(rng) ? -v : v);
  }
  for (const double v : values) {
    round_to_residues(v, basis, out);
    const mpz_class x = gmp_rounded(v);
    for (std::size_t i = 0; i < basis.size(); ++i) {
      INFO("value " << v << " prime " << basis.prime(i));
      REQUIRE(out[i] == gmp_residue(x, basis.prime(i)));
    }
  }
  // Rounding is half away from zero: 2.5 -> 3, -2.5 -> -3.
  round_to_residues(-2.5, basis, out);
  CHECK(out[0] == basis.prime(0) - 3);

  const double log_q = basis.log2_product();
  CHECK_NOTHROW(round_to_residues(std::exp2(log_q - 1.001), basis, out));
  for (const double bad : {std::exp2(log_q - 1), -std::exp2(log_q), std::exp2(log_q + 5)}) {
    try {
      round_to_residues(bad, basis, out);
      FAIL("accepted " << bad);
    } catch (const InvalidArgument& e) {
      INFO(e.what());
      CHECK(message_contains(e, "scale overflow"));
      CHECK(message_contains(e, fmt::format("{:.2f}", log_q)));
    }
  }
  CHECK_THROWS_AS(round_to_residues(std::nan(""), basis, out), InvalidArgument);
  CHECK_THROWS_AS(round_to_residues(INFINITY, basis, out), InvalidArgument);
  CHECK_THROWS_AS(round_to_residues(-INFINITY, basis, out), InvalidArgument);
  std::vector<std::uint32_t> short_out(basis.size() - 1);
  CHECK_THROWS_AS(round_to_residues(1.0, basis, short_out), InvalidArgument);
}

TEST_CASE("decoding rebuilds big centered coefficients exactly (GMP reference)", "[ckks][encoder]") {
  INFO("seed " << cerium_test::test_seed());
  const auto context = toy_context(10, 3);
  const Encoder encoder(context);
  const std::size_t half = context->ring_degree() / 2;
  gmp_randclass gmp_random(gmp_randinit_default);
  gmp_random.seed(static_cast<unsigned long>(cerium_test::test_seed()));
  // With one slot, slot 0 is exactly (m_0 + i m_(N/2)) / scale: the decoded value exposes the rebuilt integers.
  const auto check = [&](int level, double scale, const mpz_class& re, const mpz_class& im) {
    const auto& basis = context->q_basis(level);
    Plaintext pt(context, poly_from_integers(basis, {{0, re}, {half, im}}), level, scale, 1);
    const Complex slot = encoder.decode(pt).at(0);
    const double expected_re = re.get_d() / scale, expected_im = im.get_d() / scale;  // get_d truncates: 1 ulp
    INFO("level " << level << " scale 2^" << log2_scale(scale) << " re " << re.get_str() << " im " << im.get_str());
    CHECK(std::abs(slot.real() - expected_re) <= std::abs(expected_re) * 0x1p-52);
    CHECK(std::abs(slot.imag() - expected_im) <= std::abs(expected_im) * 0x1p-52);
    CHECK(std::signbit(slot.real()) == (re < 0));
    CHECK(std::signbit(slot.imag()) == (im < 0));
  };
  for (const double log_scale : {0.0, 56.0, 100.0}) {
    const double scale = std::ldexp(1.0, static_cast<int>(log_scale));
    for (int level = 0; level <= 3; ++level) {
      // Messages up to 2^63 times the scale (the documented bound), capped by Q/2 where Q is smaller. A scale not
      // below Q is refused (ckks::scale_problem), so such levels are skipped.
      const double q_bits = context->q_basis(level)->log2_product();
      if (log_scale >= q_bits) continue;
      const auto bits = static_cast<unsigned long>(std::min(log_scale + 63, q_bits - 2));
      for (int i = 0; i < 50; ++i) {
        mpz_class re = gmp_random.get_z_bits(bits), im = gmp_random.get_z_bits(bits);
        if (i % 2 == 0) re = -re;
        if (i % 3 == 0) im = -im;
        check(level, scale, re, im);
      }
    }
  }
  // Integers below 2^53 come back exactly at scale 1.
  for (const long value : {0L, 1L, -1L, 123456789L, -(1L << 52) + 17}) {
    const auto& basis = context->q_basis(3);
    Plaintext pt(context, poly_from_integers(basis, {{0, mpz_class(value)}, {half, mpz_class(-value)}}), 3, 1.0, 1);
    const Complex slot = encoder.decode(pt).at(0);
    CHECK(slot.real() == static_cast<double>(value));
    CHECK(slot.imag() == -static_cast<double>(value));
  }
  // At level 0 all limbs are used: the extremes (Q - 1)/2 and -(Q - 1)/2 of the centered range.
  mpz_class q = 1;
  for (const auto p : context->q_basis(0)->primes()) q *= p;
  const mpz_class top = (q - 1) / 2;
  check(0, 1.0, top, -top);
  check(0, 1.0, top - 1, -top + 1);
  check(0, 1.0, -top, top);  // -(Q - 1)/2 has the residues of (Q + 1)/2
}

TEST_CASE("a plaintext decodes the same from any prefix of its limbs and in either form", "[ckks][encoder]") {
  auto rng = cerium_test::make_rng(7);
  INFO("seed " << cerium_test::test_seed());
  const auto context = toy_context(11, 3);
  const Encoder encoder(context);
  const auto z = random_complex(rng, 64);
  const Plaintext top = encoder.encode(z, {.slots = 64});
  const auto reference = encoder.decode(top);
  for (int level = 0; level < 3; ++level) {
    auto poly = top.poly().clone();
    poly.drop_to(context->q_basis(level));
    const Plaintext lower(context, std::move(poly), level, top.scale(), top.slots());
    const auto decoded = encoder.decode(lower);
    INFO("level " << level);
    CHECK(decoded == reference);  // the same integers, rebuilt from the same prefix
  }
  Plaintext coefficient_form = top.clone();
  coefficient_form.poly().to_coeff();
  CHECK(encoder.decode(coefficient_form) == reference);
}

TEST_CASE("encode_constant fills every slot with the constant", "[ckks][encoder]") {
  const auto context = toy_context(10, 2);
  const Encoder encoder(context);
  const std::size_t full = context->ring_degree() / 2;
  for (const Complex c : {Complex(0.75, 0), Complex(-3.25, 0.5), Complex(0, -1), Complex(1024.5, -2048.25)}) {
    for (const std::size_t slots : {full, std::size_t{4}, std::size_t{1}}) {
      for (const int level : {0, 2}) {
        if (std::abs(c) > 100 && level == 0) continue;  // 2^11 * 2^56 would overflow 62 bits
        INFO("constant (" << c.real() << ", " << c.imag() << "), slots " << slots << ", level " << level);
        const Plaintext pt = encoder.encode_constant(c, {.level = level, .slots = slots});
        REQUIRE(pt.slots() == slots);
        REQUIRE(pt.level() == level);
        const auto decoded = encoder.decode(pt);
        REQUIRE(decoded.size() == slots);
        CHECK(precision(std::vector<Complex>(slots, c), decoded).min_bits >= 50);
      }
    }
  }
  // The real overload, and the NTT-form shortcut: the same words as transforming the constant polynomial.
  const Plaintext real = encoder.encode_constant(-0.3);
  for (const double v : encoder.decode_real(real)) CHECK(std::abs(v + 0.3) < 1e-15);
  const auto& basis = context->q_basis(2);
  std::vector<std::uint32_t> residues(basis->size());
  round_to_residues(-0.3 * real.scale(), *basis, residues);
  ring::RnsPoly expected(basis, ring::PolyForm::coefficient);
  for (std::size_t i = 0; i < basis->size(); ++i) expected.limb(i)[0] = residues[i];
  expected.to_ntt();
  CHECK(real.poly() == expected);
}

TEST_CASE("encoder arguments outside their domain throw typed errors", "[ckks][encoder]") {
  const auto context = toy_context(10, 2);
  const Encoder encoder(context);
  const std::vector<double> values(4, 0.5);
  const auto expect_message = [](auto&& call, const std::string& text) {
    try {
      call();
      FAIL("no error for: " << text);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(message_contains(e, text));
    }
  };
  CHECK_THROWS_AS(Encoder(nullptr), InvalidArgument);
  // Too many values for the slots, and slot counts that are no power of two or exceed N/2.
  CHECK_THROWS_AS(encoder.encode(values, {.slots = 2}), InvalidArgument);
  expect_message([&] { (void)encoder.encode(values, {.slots = 2}); }, "4 values do not fit in 2 slots");
  CHECK_THROWS_AS(encoder.encode(std::vector<double>(513, 0.0)), InvalidArgument);
  CHECK_THROWS_AS(encoder.encode(values, {.slots = 6}), InvalidArgument);
  expect_message([&] { (void)encoder.encode(values, {.slots = 1024}); }, "slots = 1024 must be a power of two");
  CHECK_THROWS_AS(encoder.encode_constant(1.0, {.slots = 3}), InvalidArgument);
  // Levels.
  CHECK_THROWS_AS(encoder.encode(values, {.level = 3}), LevelError);
  CHECK_THROWS_AS(encoder.encode(values, {.level = -2}), LevelError);
  expect_message([&] { (void)encoder.encode(values, {.level = 7}); }, "level = 7 does not exist");
  CHECK_THROWS_AS(encoder.encode_constant(1.0, {.level = 3}), LevelError);
  // Scales.
  for (const double bad : {-1.0, std::nan(""), static_cast<double>(INFINITY)}) {
    CHECK_THROWS_AS(encoder.encode(values, {.scale = bad}), InvalidArgument);
    CHECK_THROWS_AS(encoder.encode_constant(1.0, {.scale = bad}), InvalidArgument);
  }
  expect_message([&] { (void)encoder.encode(values, {.scale = -1.0}); }, "scale = -1 must be positive");
  // Non-finite values.
  CHECK_THROWS_AS(encoder.encode(std::vector<double>{1.0, std::nan("")}), InvalidArgument);
  expect_message([&] { (void)encoder.encode(std::vector<double>{1.0, INFINITY}); }, "at index 1 is not finite");
  CHECK_THROWS_AS(encoder.encode_constant(Complex(0, std::nan(""))), InvalidArgument);
  CHECK_THROWS_AS(encoder.encode(std::vector<double>{1e300}), InvalidArgument);  // overflows to inf when scaled
  expect_message([&] { (void)encoder.encode_constant(64.0, {.level = 0}); }, "scale overflow");
  // Decoding: nothing to decode, and a plaintext of another context.
  CHECK_THROWS_AS(encoder.decode(Plaintext()), MismatchError);  // empty: no context
  const Encoder other(toy_context(11, 2));
  CHECK_THROWS_AS(encoder.decode(other.encode(values)), MismatchError);
}

TEST_CASE("the leveled_n14 preset encodes and decodes at full precision", "[ckks][encoder]") {
  auto rng = cerium_test::make_rng(8);
  INFO("seed " << cerium_test::test_seed());
  static const auto context = Context::create(presets::leveled_n14());
  const Encoder encoder(context);
  for (const int level : {0, context->max_level()}) {
    const auto z = random_complex(rng, context->ring_degree() / 2);
    const auto p = precision(z, encoder.decode(encoder.encode(z, {.level = level})));
    INFO("level " << level << ": mean " << p.mean_bits << " bits, worst " << p.min_bits << " bits");
    CHECK(p.mean_bits >= 56 - (14 + 2));
    CHECK(p.mean_bits >= 48);
    CHECK(p.min_bits >= 45);
  }
}

TEST_CASE("the leveled_n16 preset encodes and decodes (N = 2^16)", "[ckks][encoder]") {
  auto rng = cerium_test::make_rng(9);
  INFO("seed " << cerium_test::test_seed());
  const auto context = Context::create(presets::leveled_n16());
  const Encoder encoder(context);
  const auto z = random_complex(rng, context->ring_degree() / 2);
  const auto p = precision(z, encoder.decode(encoder.encode(z)));
  INFO("mean " << p.mean_bits << " bits, worst " << p.min_bits << " bits");
  CHECK(p.mean_bits >= 56 - (16 + 2));
  CHECK(p.mean_bits >= 47);
  CHECK(p.min_bits >= 44);
}

// Hidden (run with "[encoder_report]"): prints the measured precision table.
TEST_CASE("encoder precision report", "[.][encoder_report]") {
  auto rng = cerium_test::make_rng(10);
  std::printf("%-24s %8s %6s %6s %8s %10s %10s\n", "parameters", "slots", "level", "scale", "|z| <", "mean bits",
              "worst bits");
  const auto report = [&](const char* name, const ContextPtr& context, std::size_t slots, int level,
                          int log_scale = 56, double bound = 1.0) {
    const Encoder encoder(context);
    const auto z = random_complex(rng, slots, bound);
    const EncodeOptions options{.level = level, .scale = std::ldexp(1.0, log_scale), .slots = slots};
    const auto p = precision(z, encoder.decode(encoder.encode(z, options)));
    std::printf("%-24s %8zu %6d %4s%2d %8g %10.2f %10.2f\n", name, slots, level, "2^", log_scale, bound, p.mean_bits,
                p.min_bits);
  };
  for (const int log_n : {10, 11, 12}) {
    const auto context = toy_context(log_n, 2);
    const std::string name = "toy log N = " + std::to_string(log_n);
    for (const std::size_t slots : {std::size_t{1}, std::size_t{16}, context->ring_degree() / 2})
      for (const int level : {0, 2}) report(name.c_str(), context, slots, level);
  }
  const auto toy = toy_context(11, 3);
  for (const int log_scale : {20, 30, 40, 90}) report("toy log N = 11", toy, 1024, 3, log_scale);
  report("toy log N = 11", toy, 1024, 3, 56, 1024.0);
  report("toy log N = 11", toy, 1024, 3, 56, std::ldexp(1.0, 40));
  report("toy log N = 11", toy, 1024, 3, 92, 1024.0);
  const auto n14 = Context::create(presets::leveled_n14());
  report("leveled_n14", n14, n14->ring_degree() / 2, n14->max_level());
  const auto n16 = Context::create(presets::leveled_n16());
  report("leveled_n16", n16, n16->ring_degree() / 2, n16->max_level());
  CHECK(true);
}

namespace {

// The centered integer of coefficient k of a coefficient-form polynomial (CRT through GMP), modulo p.
std::uint32_t gmp_centered_mod(const ring::RnsPoly& poly, std::size_t k, std::uint32_t p) {
  const ring::RnsBasis& basis = poly.basis();
  mpz_class product = 1;
  for (std::size_t i = 0; i < basis.size(); ++i) product *= basis.prime(i);
  mpz_class x = 0;
  for (std::size_t i = 0; i < basis.size(); ++i) {
    const mpz_class qi = basis.prime(i);
    const mpz_class rest = product / qi;
    mpz_class inverse;
    mpz_invert(inverse.get_mpz_t(), mpz_class(rest % qi).get_mpz_t(), qi.get_mpz_t());
    x += mpz_class(poly.limb(i)[k]) * rest * inverse;
  }
  x %= product;
  if (2 * x > product) x -= product;
  return gmp_residue(x, p);
}

ring::RnsPoly in_coefficients(const ring::RnsPoly& poly) {
  ring::RnsPoly c = poly.clone();
  c.to_coeff();
  return c;
}

// The first limbs of poly over basis.
ring::RnsPoly first_limbs(const ring::RnsPoly& poly, const ring::RnsBasisPtr& basis) {
  ring::RnsPoly out(basis, poly.form());
  for (std::size_t i = 0; i < basis->size(); ++i) std::ranges::copy(poly.limb(i), out.limb(i).begin());
  return out;
}

}  // namespace

TEST_CASE("encoding over Q_l u P: Q_l's limbs are encode's words and P's the same integers", "[ckks][encoder]") {
  const ContextPtr context = toy_context(10, 4);
  const Encoder encoder(context);
  auto rng = cerium_test::make_rng(77);
  INFO("test seed " << cerium_test::test_seed());
  for (const int level : {0, 2, 4}) {
    for (const std::size_t slots : {std::size_t{4}, std::size_t{512}}) {
      INFO("level " << level << ", " << slots << " slots");
      const auto values = random_complex(rng, slots, 3.0);
      const EncodeOptions options{.level = level, .scale = std::ldexp(1.0, 40), .slots = slots};
      const Plaintext pt = encoder.encode(std::span<const Complex>(values), options);
      const ring::RnsPoly extended = encoder.encode_extended(std::span<const Complex>(values), options);
      REQUIRE(extended.basis() == *context->qp_basis(level));
      REQUIRE(extended.form() == ring::PolyForm::ntt);
      CHECK(first_limbs(extended, context->q_basis(level)) == pt.poly());
      // The lift of the plaintext (CRT of every coefficient) finds the very same words.
      CHECK(encoder.extend(pt) == extended);
      // So does the unscaled route a device takes (and the evaluator's, here on the CPU).
      const UnscaledPlaintext unscaled = encoder.unscaled(std::span<const Complex>(values), slots);
      CHECK(encoder.encode_extended(unscaled, options) == extended);
      CHECK(Evaluator(context).encode_extended(unscaled, options) == extended);
      const ring::RnsPoly coefficients = in_coefficients(extended), q_coefficients = in_coefficients(pt.poly());
      const std::size_t q_limbs = context->q_basis(level)->size();
      for (std::size_t j = q_limbs; j < coefficients.limb_count(); ++j)
        for (std::size_t k = 0; k < coefficients.n(); k += 37)
          REQUIRE(coefficients.limb(j)[k] == gmp_centered_mod(q_coefficients, k, coefficients.basis().prime(j)));
    }
  }
}

TEST_CASE("extend lifts any plaintext's centered coefficients exactly, up to Q_l / 2", "[ckks][encoder]") {
  const ContextPtr context = toy_context(10, 4);
  const Encoder encoder(context);
  auto rng = cerium_test::make_rng(78);
  const int level = 3;
  const auto& basis = context->q_basis(level);
  ring::RnsPoly poly(basis, ring::PolyForm::coefficient);  // uniform residues: centered values of any size
  for (std::size_t i = 0; i < basis->size(); ++i) {
    const auto words = cerium_test::random_residues(rng, poly.n(), basis->prime(i));
    std::ranges::copy(words, poly.limb(i).begin());
  }
  const Plaintext pt(context, poly.clone(), level, 1.0, 8);
  const ring::RnsPoly coefficients = in_coefficients(encoder.extend(pt));
  CHECK(first_limbs(coefficients, basis) == poly);
  for (std::size_t j = basis->size(); j < coefficients.limb_count(); ++j)
    for (std::size_t k = 0; k < poly.n(); ++k)
      REQUIRE(coefficients.limb(j)[k] == gmp_centered_mod(poly, k, coefficients.basis().prime(j)));
  CHECK_THROWS_AS(encoder.extend(Plaintext{}), MismatchError);  // empty: no context
}
