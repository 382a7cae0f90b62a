// The bootstrapping failure model (boot/failure_probability.hpp) against the Irwin-Hall distribution's closed forms
// and a Monte-Carlo sample, against ModRaise's actual overflow I at toy sizes (with the secret key), and a too
// small K failing exactly where the model says. Random inputs from fresh OS seeds (printed on failure).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/boot/failure_probability.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;
using namespace cerium::boot;

namespace {

std::uint64_t power_mod(std::uint64_t base, std::uint64_t exponent, std::uint64_t p) {
  std::uint64_t result = 1;
  for (base %= p; exponent > 0; exponent >>= 1, base = base * base % p)
    if (exponent & 1) result = result * base % p;
  return result;
}

// I per coefficient of a ModRaised ciphertext under the key s: c0 + c1 s = m + e + q0 I over the integers. The two
// base primes give m + e (centered mod q0, far below q0), the first level prime p then I = (dec - m - e) / q0 mod p.
std::vector<std::int64_t> overflow(const Fixture& f, const Ciphertext& raised) {
  const auto& params = f.context->parameters();
  REQUIRE(params.config().base_primes == 2);
  ring::RnsPoly dec = f.decryptor.decrypt(raised).take_poly();
  dec.to_coeff();
  const std::uint64_t qa = params.q_primes()[0], qb = params.q_primes()[1], p = params.q_primes()[2];
  const std::uint64_t q0 = qa * qb;
  const std::uint64_t qa_inverse = power_mod(qa, qb - 2, qb);
  const std::uint64_t q0_inverse = power_mod(q0 % p, p - 2, p);
  std::vector<std::int64_t> out(dec.n());
  std::size_t not_small = 0;
  for (std::size_t k = 0; k < dec.n(); ++k) {
    const std::uint64_t a = dec.limb(0)[k], b = dec.limb(1)[k];
    const std::uint64_t lifted = a + qa * ((b + qb - a % qb) % qb * qa_inverse % qb);  // in [0, q0)
    const bool negative = lifted > q0 / 2;
    const std::uint64_t magnitude = negative ? q0 - lifted : lifted;  // |m + e|
    not_small += magnitude >= q0 / 16;
    const std::uint64_t small_mod_p = negative ? (p - magnitude % p) % p : magnitude % p;
    const std::uint64_t i = (dec.limb(2)[k] + p - small_mod_p) % p * q0_inverse % p;
    out[k] = i > p / 2 ? static_cast<std::int64_t>(i) - static_cast<std::int64_t>(p) : static_cast<std::int64_t>(i);
  }
  REQUIRE(not_small == 0);
  return out;
}

// |observed - expected| within 5 binomial standard deviations (plus 2 for tiny expectations).
bool within_binomial(std::size_t count, std::size_t trials, double p) {
  const double expected = p * static_cast<double>(trials);
  return std::abs(static_cast<double>(count) - expected) <= 5 * std::sqrt(expected * (1 - p)) + 2;
}

double tail(int n, double x) { return std::exp2(irwin_hall_tail_log2(n, x).value()); }

// The observed counts of |I| > t against the model with weight h where it expects at least 10 (further out, the
// coefficients' weak correlation makes the counts overdispersed), and the max |I|: a larger one has probability
// <= 1e-4 under the model (a union bound, whatever the correlation), and so has a smaller one.
void check_against_model(const std::vector<std::int64_t>& samples, int h) {
  std::int64_t max = 0;
  for (auto i : samples) max = std::max<std::int64_t>(max, std::abs(i));
  const double m = static_cast<double>(samples.size());
  int high = 0, low = 0;
  while (m * tail(h, high + 0.5) > 1e-4) ++high;                           // P(max > high) <= 1e-4
  while (std::exp(-m * tail(h, low + 1.5)) <= 1e-4) ++low;                // P(max <= low) <= 1e-4
  INFO("h = " << h << ", " << samples.size() << " samples, max |I| " << max << ", model's range " << low + 1 << ".."
              << high << ", seed " << cerium_test::test_seed());
  CHECK(max > low);
  CHECK(max <= high);
  std::ostringstream summary;
  summary << "h = " << h << ", " << samples.size() << " samples: max |I| " << max << " (model " << low + 1 << ".."
          << high << "); |I| > t observed / expected:";
  for (int t = 0; t <= high; ++t) {
    const auto count = static_cast<std::size_t>(
        std::count_if(samples.begin(), samples.end(), [&](std::int64_t i) { return std::abs(i) > t; }));
    INFO("|I| > " << t << ": " << count << " observed, " << m * tail(h, t + 0.5) << " expected");
    if (m * tail(h, t + 0.5) >= 10) CHECK(within_binomial(count, samples.size(), tail(h, t + 0.5)));
    if (t % std::max(1, high / 8) == 0) summary << " " << t << ": " << count << " / " << m * tail(h, t + 0.5);
  }
  WARN(summary.str());
}

}  // namespace

TEST_CASE("Irwin-Hall tails: closed forms, exact rationals and a Monte-Carlo sample", "[boot][failure]") {
  // n = 1: 1 - 2x; n = 2: (1 - x)^2. Exact rationals (Python's fractions, the alternating-sum CDF) for the rest.
  CHECK(irwin_hall_tail_log2(1, 0.3).value() == Catch::Approx(std::log2(0.4)).epsilon(1e-14));
  CHECK(irwin_hall_tail_log2(2, 0.3).value() == Catch::Approx(std::log2(0.49)).epsilon(1e-14));
  CHECK(irwin_hall_tail_log2(32, 8.5).value() == Catch::Approx(-24.166706601990157).epsilon(1e-12));
  CHECK(irwin_hall_tail_log2(32, 15.5).value() == Catch::Approx(-148.6632636523603).epsilon(1e-12));
  CHECK(irwin_hall_tail_log2(683, 17.5).value() == Catch::Approx(-5.619599958061372).epsilon(1e-12));
  CHECK(irwin_hall_tail_log2(32, 16) == -std::numeric_limits<double>::infinity());  // beyond the support
  CHECK(irwin_hall_tail_log2(32, 0) == 0);
  CHECK_FALSE(irwin_hall_tail_log2(43691, 17.5).has_value());  // a dense secret at N = 2^16: too many steps
  // Lighter tails than the Gaussian's far out, nearly the same near the centre.
  CHECK(irwin_hall_tail_log2(32, 12.5).value() < gaussian_tail_log2(32, 12.5) - 10);
  CHECK(irwin_hall_tail_log2(683, 17.5).value() == Catch::Approx(gaussian_tail_log2(683, 17.5)).epsilon(1e-3));

  auto rng = cerium_test::make_rng(1);
  std::uniform_real_distribution<double> uniform(-0.5, 0.5);
  constexpr std::size_t trials = 100000;
  struct Case {
    int n;
    std::vector<double> bounds;
  };
  for (const Case& c : {Case{3, {0.9, 1.3}}, Case{12, {2.0, 3.0}}, Case{33, {3.5, 5.5}}}) {
    std::vector<std::size_t> counts(c.bounds.size(), 0);
    for (std::size_t t = 0; t < trials; ++t) {
      double sum = 0;
      for (int i = 0; i < c.n; ++i) sum += uniform(rng);
      for (std::size_t b = 0; b < c.bounds.size(); ++b) counts[b] += std::abs(sum) > c.bounds[b];
    }
    for (std::size_t b = 0; b < c.bounds.size(); ++b) {
      const double p = tail(c.n, c.bounds[b]);
      INFO("n = " << c.n << ", |S| > " << c.bounds[b] << ": " << counts[b] << " of " << trials << ", expected "
                  << p * trials << " (Gaussian " << std::exp2(gaussian_tail_log2(c.n, c.bounds[b])) * trials
                  << "), seed " << cerium_test::test_seed());
      CHECK(within_binomial(counts[b], trials, p));
    }
  }
}

TEST_CASE("failure probability of the presets: encapsulation with h = 32 never exceeds K = 17", "[boot][failure]") {
  const FailureProbability n16 = failure_probability(Parameters(presets::bootstrappable_n16()), BootstrapConfig{});
  CHECK(n16.hamming_weight == 32);
  CHECK_FALSE(n16.dense_secret);
  CHECK(n16.coefficients == 65536);
  CHECK(n16.exact);
  CHECK(n16.per_coefficient_log2 == -std::numeric_limits<double>::infinity());  // |I| <= h / 2 = 16 < K
  CHECK(n16.gaussian_per_coefficient_log2 == Catch::Approx(-86.6).margin(0.1));
  CHECK(n16.gaussian_per_bootstrap_log2 == Catch::Approx(-70.6).margin(0.1));
  // Sparse slots: the union bound runs over the 2 * slots coefficients EvalMod reads.
  CHECK(failure_probability(32, 12, 65536).per_bootstrap_log2 == Catch::Approx(-58.83 + 16).margin(0.01));
  CHECK(failure_probability(32, 12, 128).per_bootstrap_log2 == Catch::Approx(-58.83 + 7).margin(0.01));
  // Without encapsulation a dense ternary secret (h ~ 2N/3) overflows K = 17 in about 2% of the coefficients.
  const Parameters toy(presets::bootstrappable_toy(10));
  const FailureProbability dense = failure_probability(toy, BootstrapConfig{.sparse_encapsulation = false});
  CHECK(dense.dense_secret);
  CHECK(dense.hamming_weight == 683);
  CHECK(dense.per_coefficient_log2 == Catch::Approx(-5.62).margin(0.01));
  CHECK(dense.per_bootstrap_log2 == 0);
}

TEST_CASE("ModRaise's overflow I follows the model: encapsulation (N = 2^11, h = 32) and a dense secret (N = 2^10)",
          "[boot][failure]") {
  auto rng = cerium_test::make_rng(2);
  SECTION("sparse-secret encapsulation, h = 32") {
    const Fixture f(presets::bootstrappable_toy(11), {.relinearization = false});
    Bootstrapper boot(f.context, {.cache_plaintexts = false});
    // Only ModRaise runs: the encapsulation keys, no rotations.
    boot.set_keys(std::make_shared<const BootstrapKeys>(generate_bootstrap_keys(f.keygen, BootstrapKeyRequest{})));
    std::vector<std::int64_t> samples;
    for (int c = 0; c < 12; ++c) {
      const Ciphertext raised = boot.mod_raise(boot.scale_down(f.encrypt(random_real(rng, boot.slots()), 1)));
      const auto i = overflow(f, raised);
      samples.insert(samples.end(), i.begin(), i.end());
    }
    check_against_model(samples, 32);
  }
  SECTION("dense ternary secret, no encapsulation") {
    const Fixture f(presets::bootstrappable_toy(10, 14), {.relinearization = false});
    Bootstrapper boot(f.context, {.slots = 8, .coeff_to_slot_levels = 1, .slot_to_coeff_levels = 1,
                                  .sparse_encapsulation = false, .cache_plaintexts = false});
    BootstrapKeyRequest request;
    request.sparse_encapsulation = false;
    boot.set_keys(std::make_shared<const BootstrapKeys>(generate_bootstrap_keys(f.keygen, request)));
    const auto& s = f.keygen.secret_key().coefficients();
    const int h = static_cast<int>(std::count_if(s.begin(), s.end(), [](std::int8_t v) { return v != 0; }));
    std::vector<std::int64_t> samples;
    for (int c = 0; c < 16; ++c) {
      const Ciphertext raised = boot.mod_raise(boot.scale_down(f.encrypt(random_real(rng, boot.slots()), 1, 8)));
      const auto i = overflow(f, raised);
      samples.insert(samples.end(), i.begin(), i.end());
    }
    check_against_model(samples, h);
  }
}

TEST_CASE("a too small K fails exactly where |I| > K, at the predicted rate (N = 2^10, h = 32, K = 3)",
          "[boot][failure]") {
  // One double angle: then the degree-31 series is tight at K = 3 (|I| = 3 keeps 2^-44, |I| = 4 errs by 2^-9), where
  // the default 4 would extrapolate to |I| = 4 at 2^-24. 8 slots: EvalMod reads the 16 coefficients at multiples of
  // N / 16. P(|I| > 3) = P(|S_32| > 3.5), about 3% per coefficient, 40% per bootstrap.
  CkksConfig params = presets::bootstrappable_toy(10, 10);
  params.secret = SecretDistribution::hamming_weight;
  params.hamming_weight = 32;
  const Fixture f(params, {.relinearization = false});
  const BootstrapConfig config{.slots = 8, .coeff_to_slot_levels = 1, .slot_to_coeff_levels = 1,
                               .double_angle_steps = 1, .k_range = 3, .sparse_encapsulation = false};
  Bootstrapper boot(f.context, config);
  boot.set_keys(std::make_shared<const BootstrapKeys>(boot.generate_keys(f.keygen)));
  const std::size_t gap = f.context->ring_degree() / (2 * boot.slots());
  const double p = tail(32, 3.5);
  auto rng = cerium_test::make_rng(3);
  constexpr int runs = 12;
  int failures = 0;
  std::size_t overflowing = 0, coefficients = 0;
  for (int run = 0; run < runs; ++run) {
    const Values x = random_real(rng, boot.slots());
    const Ciphertext raised = boot.mod_raise(boot.scale_down(f.encrypt(x, 1, boot.slots())));
    const auto i = overflow(f, raised);
    bool predicted = false;
    for (std::size_t k = 0; k < i.size(); ++k) {
      overflowing += std::abs(i[k]) > config.k_range;
      if (k % gap == 0) predicted = predicted || std::abs(i[k]) > config.k_range;
    }
    coefficients += i.size();
    // The rest of the pipeline on this very ModRaise.
    auto halves = boot.coeff_to_slot(boot.sub_sum(raised));
    const Ciphertext out = boot.slot_to_coeff(boot.eval_mod(halves[0]), boot.eval_mod(halves[1]));
    const double bits = precision_bits(f.decrypt(out), x);
    INFO("run " << run << ": " << bits << " bits, overflow predicted " << predicted << ", seed "
                << cerium_test::test_seed());
    CHECK((predicted ? bits < 4 : bits > 15));  // garbage exactly when a coefficient EvalMod reads has |I| > K
    failures += predicted;
  }
  const double per_bootstrap = 1 - std::pow(1 - p, 16);
  INFO("per coefficient: " << overflowing << " of " << coefficients << " (model " << p * coefficients
                           << "); failed bootstraps " << failures << " of " << runs << " (model "
                           << per_bootstrap * runs << ")");
  CHECK(within_binomial(overflowing, coefficients, p));
  CHECK(within_binomial(static_cast<std::size_t>(failures), runs, per_bootstrap));
  WARN("K = 3, h = 32: |I| > K in " << overflowing << " of " << coefficients << " coefficients (model "
                                    << p * coefficients << "), " << failures << " of " << runs
                                    << " bootstraps failed (model " << per_bootstrap * runs << ")");
}
