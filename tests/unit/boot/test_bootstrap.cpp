// Bootstrapping at toy sizes (insecure parameters by explicit opt-out): full and sparse slots, with and without
// sparse-secret encapsulation, chained bootstraps, and the errors of misuse.
//
// Precision bound: real inputs uniform in [-1, 1], error against the plaintext values, in bits (-log2 of the
// error). At N = 2^11 with the default BootstrapConfig (K = 17, degree 31, 4 double angles, ratio 2^10) the
// mean error is asserted below 2^-20 and the worst slot below 2^-16, the bound for N = 2^16.
#include <chrono>

#include "cerium/boot/bootstrapper.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;
using namespace cerium::boot;

namespace {

struct Precision {
  double mean_bits = 0;
  double worst_bits = 0;
};

Precision measure(const Values& got, const Values& want) {
  double total = 0, worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(got.at(i) - want[i]);
    total += e;
    worst = std::max(worst, e);
  }
  return {-std::log2(total / static_cast<double>(want.size())), worst == 0 ? 100.0 : -std::log2(worst)};
}

// A context, the user's keys and a bootstrapper with its keys.
struct BootFixture {
  Fixture f;
  Bootstrapper boot;
  explicit BootFixture(const CkksConfig& params, const BootstrapConfig& config)
      : f(params, {.relinearization = true}), boot(f.context, config) {
    boot.set_keys(std::make_shared<const BootstrapKeys>(boot.generate_keys(f.keygen)));
  }
  std::size_t slots() const { return boot.slots(); }
};

Precision bootstrap_precision(const BootFixture& b, std::uint64_t salt) {
  auto rng = cerium_test::make_rng(salt);
  const Values x = random_real(rng, b.slots());
  const Ciphertext ct = b.f.encrypt(x, 1, b.slots());
  const Ciphertext out = b.boot.bootstrap(ct);
  REQUIRE(out.level() == b.boot.levels().output);
  const Precision p = measure(b.f.decrypt(out), x);
  INFO("seed " << cerium_test::test_seed());
  return p;
}

}  // namespace

TEST_CASE("bootstrapping, full slots, sparse-secret encapsulation (N = 2^11)", "[ckks][bootstrap]") {
  static const BootFixture b(presets::bootstrappable_toy(11), {});
  const Precision p = bootstrap_precision(b, 1);
  INFO("full slots: mean " << p.mean_bits << " bits, worst " << p.worst_bits << " bits, seed "
                           << cerium_test::test_seed());
  CHECK(p.mean_bits >= 20);
  CHECK(p.worst_bits >= 16);
}

// Two real ciphertexts for one bootstrap (a + i b, then the conjugate splits them): each keeps a single
// bootstrap's precision bound, against its own plaintext values.
TEST_CASE("two real ciphertexts bootstrapped as one: each within one bootstrap's bound (N = 2^11)",
          "[ckks][bootstrap]") {
  static const BootFixture b(presets::bootstrappable_toy(11), {});
  auto rng = cerium_test::make_rng(17);
  Values x = random_real(rng, b.slots()), y = random_real(rng, b.slots());
  for (auto& v : x) v *= 0.7;  // |x + i y| <= 1
  for (auto& v : y) v *= 0.7;
  const Ciphertext cx = b.f.encrypt(x, 1, b.slots()), cy = b.f.encrypt(y, 1, b.slots());
  const auto [bx, by] = b.boot.bootstrap_pair(cx, cy);
  CHECK(bx.level() == b.boot.levels().output);
  CHECK(by.level() == b.boot.levels().output);
  const Precision px = measure(b.f.decrypt(bx), x), py = measure(b.f.decrypt(by), y);
  INFO("paired: x mean " << px.mean_bits << " worst " << px.worst_bits << ", y mean " << py.mean_bits << " worst "
                         << py.worst_bits << " bits, seed " << cerium_test::test_seed());
  CHECK(px.mean_bits >= 20);
  CHECK(px.worst_bits >= 16);
  CHECK(py.mean_bits >= 20);
  CHECK(py.worst_bits >= 16);
  // Within a bit of bootstrapping x alone.
  const Precision single = measure(b.f.decrypt(b.boot.bootstrap(cx)), x);
  INFO("alone: x mean " << single.mean_bits << " worst " << single.worst_bits << " bits");
  CHECK(px.mean_bits >= single.mean_bits - 1);
  // With a factor folded into EvalMod, as bootstrap(input, log2_factor): the results times 2^-3.
  const auto [sx, sy] = b.boot.bootstrap_pair(cx, cy, -3);
  Values x8 = x, y8 = y;
  for (auto& v : x8) v /= 8;
  for (auto& v : y8) v /= 8;
  CHECK(measure(b.f.decrypt(sx), x8).mean_bits >= 22);
  CHECK(measure(b.f.decrypt(sy), y8).mean_bits >= 22);
  // Imaginary parts (the noise a real computation carries, here 0.2 in every slot: far above it) stay out: each
  // result is its input's real part, as precise as without them (before, each leaked into the other's result).
  Values noisy_x = x, noisy_y = y;
  for (std::size_t i = 0; i < x.size(); ++i) {
    noisy_x[i] += std::complex<double>(0, 0.2 * y[i].real());
    noisy_y[i] -= std::complex<double>(0, 0.2 * x[(i + 1) % x.size()].real());
  }
  const auto [nx, ny] = b.boot.bootstrap_pair(b.f.encrypt(noisy_x, 1, b.slots()), b.f.encrypt(noisy_y, 1, b.slots()));
  const Precision qx = measure(b.f.decrypt(nx), x), qy = measure(b.f.decrypt(ny), y);
  INFO("imaginary parts in the inputs: x mean " << qx.mean_bits << ", y mean " << qy.mean_bits << " bits");
  CHECK(qx.mean_bits >= px.mean_bits - 1);
  CHECK(qy.mean_bits >= py.mean_bits - 1);
  // Inputs that differ, and a factor past EvalMod's range less the pair's halving.
  CHECK_THROWS_AS(b.boot.bootstrap_pair(cx, b.f.encrypt(y, 2, b.slots())), MismatchError);
  CHECK_THROWS_AS(b.boot.bootstrap_pair(cx, cy, -Bootstrapper::max_shrink_bits), InvalidArgument);
  CHECK_THROWS_AS(b.boot.bootstrap_pair(cx, cy, 1), InvalidArgument);
}

// Sparse slots, halves joined or not (ResNet-20's bootstrapper): the monomial X^(N/2) is i in every slot of any
// sparse packing, so a pair works there too.
TEST_CASE("two real ciphertexts bootstrapped as one with sparse slots (N = 2^11, 64 slots, halves joined or not)",
          "[ckks][bootstrap]") {
  for (const bool join : {false, true}) {
    const BootFixture b(presets::bootstrappable_toy(11), {.slots = 64, .join_halves = join});
    auto rng = cerium_test::make_rng(18);
    Values x = random_real(rng, b.slots()), y = random_real(rng, b.slots());
    for (auto& v : x) v *= 0.7;
    for (auto& v : y) v *= 0.7;
    const Ciphertext cx = b.f.encrypt(x, 1, b.slots()), cy = b.f.encrypt(y, 1, b.slots());
    const auto [bx, by] = b.boot.bootstrap_pair(cx, cy);
    const Precision px = measure(b.f.decrypt(bx), x), py = measure(b.f.decrypt(by), y);
    const Precision single = measure(b.f.decrypt(b.boot.bootstrap(cx)), x);
    INFO("halves joined " << join << ": paired x " << px.mean_bits << " / y " << py.mean_bits << " bits mean, alone "
                          << single.mean_bits << "; seed " << cerium_test::test_seed());
    // 64 slots: a pair keeps within 2 bits of one bootstrapped alone (0.5 to 1.3 bits less over seeds; the
    // halved message meets the same EvalMod error).
    CHECK(px.mean_bits >= single.mean_bits - 2);
    CHECK(py.mean_bits >= single.mean_bits - 2);
    CHECK(px.mean_bits >= 22);
    CHECK(py.mean_bits >= 22);
    CHECK(px.worst_bits >= 16);
    CHECK(py.worst_bits >= 16);
  }
}

// The size examples/bootstrap.cpp runs by default. Its scale chain once drifted past scales_match's tolerance in
// EvalMod's double angles (each squaring doubles a round-off in the tracked scale) and the bootstrap threw.
TEST_CASE("bootstrapping, full slots, sparse-secret encapsulation (N = 2^12)", "[ckks][bootstrap]") {
  const BootFixture b(presets::bootstrappable_toy(12), {});
  const Precision p = bootstrap_precision(b, 3);
  INFO("N = 2^12: mean " << p.mean_bits << " bits, worst " << p.worst_bits << " bits, seed "
                         << cerium_test::test_seed());
  CHECK(p.mean_bits >= 20);
  CHECK(p.worst_bits >= 16);
}

TEST_CASE("the bootstrappable N = 2^16 preset: 128-bit classical, log2(QP) <= 1747, 8 levels left", "[ckks][bootstrap]") {
  const Parameters params(presets::bootstrappable_n16());  // throws SecurityError if the check fails
  INFO(params.describe());
  CHECK(params.security().compliant);
  CHECK(params.log_modulus() <= 1747);
  CHECK_FALSE(params.config().insecure_opt_out);
  const BootstrapLevels levels = bootstrap_levels(params, BootstrapConfig{});
  CHECK(levels.output - 1 >= 8);  // the next bootstrap needs level 1
  CHECK(params.default_scale() == std::ldexp(1.0, 56));
}

// Values up to 8 (a constant offset concentrates them in one coefficient, the worst case for the sine): the
// default bootstrapper (made for |x| <= 1) returns garbage (about 5.6 bits); one made with message_bound = 32, four
// times the largest value as graph::required_message_bound chooses, about 15.5 bits.
TEST_CASE("bootstrapping values up to 8 needs a message bound (N = 2^11)", "[ckks][bootstrap]") {
  auto rng = cerium_test::make_rng(17);
  const auto large = [&](const BootFixture& b) {
    Values x = random_real(rng, b.slots());
    for (auto& v : x) v = 6.0 + 2.0 * v;
    const Values out = b.f.decrypt(b.boot.bootstrap(b.f.encrypt(x, 1, b.slots())));
    return measure(out, x);
  };
  const BootFixture bounded(presets::bootstrappable_toy(11), {.message_bound = 32});
  const Precision p = large(bounded);
  INFO("message_bound 32: mean " << p.mean_bits << " bits, worst " << p.worst_bits << " bits, seed "
                                << cerium_test::test_seed());
  CHECK(p.mean_bits >= 15);
  CHECK(p.worst_bits >= 14);
  const BootFixture unbounded(presets::bootstrappable_toy(11), {});
  const Precision q = large(unbounded);
  INFO("message_bound 1: mean " << q.mean_bits << " bits, worst " << q.worst_bits << " bits");
  CHECK(q.worst_bits < 8);
}

TEST_CASE("bootstrapping, sparse slots, sparse-secret encapsulation (N = 2^11, 64 slots)", "[ckks][bootstrap]") {
  static const BootFixture b(presets::bootstrappable_toy(11), {.slots = 64});
  const Precision p = bootstrap_precision(b, 2);
  INFO("64 slots: mean " << p.mean_bits << " bits, worst " << p.worst_bits << " bits, seed "
                         << cerium_test::test_seed());
  CHECK(p.mean_bits >= 20);
  CHECK(p.worst_bits >= 16);
}

// [slow]: the sanitizer builds skip it (the other bootstrap tests run the same transforms and rotations there).
TEST_CASE("sparse slots with joined halves: one EvalMod, the same precision (N = 2^11, 64 and 512 slots)",
          "[ckks][bootstrap][slow]") {
  for (const std::size_t slots : {std::size_t{64}, std::size_t{512}}) {
    const BootFixture joined(presets::bootstrappable_toy(11), {.slots = slots, .join_halves = true});
    REQUIRE(joined.boot.joins_halves());
    const Precision p = bootstrap_precision(joined, 3);
    INFO(slots << " slots, halves joined: mean " << p.mean_bits << " bits, worst " << p.worst_bits << " bits");
    CHECK(p.mean_bits >= 20);
    CHECK(p.worst_bits >= 16);
    // The stages one by one give the bootstrap's words: CoeffToSlot's halves in 2n slots, joined, one EvalMod.
    auto rng = cerium_test::make_rng(4);
    const Ciphertext ct = joined.f.encrypt(random_real(rng, slots), 1, slots);
    const auto& b = joined.boot;
    const auto halves = b.coeff_to_slot(b.sub_sum(b.mod_raise(b.scale_down(ct))));
    CHECK(halves[0].slots() == 2 * slots);
    const Ciphertext staged = b.slot_to_coeff(b.eval_mod(b.join_halves(halves)));
    const Ciphertext whole = b.bootstrap(ct);
    CHECK(staged.slots() == slots);
    CHECK(staged.level() == whole.level());
    for (std::size_t k = 0; k < staged.size(); ++k) CHECK(staged.part(k) == whole.part(k));
  }
  // Full slots have no free half: the option is ignored there, and the joined stages refuse.
  const Bootstrapper full(Context::create(presets::bootstrappable_toy(11)), {.join_halves = true});
  CHECK_FALSE(full.joins_halves());
  CHECK_THROWS_AS(full.join_halves({Ciphertext{}, Ciphertext{}}), InvalidArgument);
}

TEST_CASE("bootstrapping without encapsulation under a sparse secret (N = 2^10, 8 slots, one-level DFTs)",
          "[ckks][bootstrap]") {
  CkksConfig params = presets::bootstrappable_toy(10, 14);
  params.secret = SecretDistribution::hamming_weight;
  params.hamming_weight = 32;
  static const BootFixture b(params, {.slots = 8, .coeff_to_slot_levels = 1, .slot_to_coeff_levels = 1,
                                      .sparse_encapsulation = false});
  const Precision p = bootstrap_precision(b, 3);
  INFO("8 slots: mean " << p.mean_bits << " bits, worst " << p.worst_bits << " bits, seed "
                        << cerium_test::test_seed());
  CHECK(p.mean_bits >= 20);
  CHECK(p.worst_bits >= 16);
}

TEST_CASE("chained bootstraps with a multiplication between each keep their precision (N = 2^11)",
          "[ckks][bootstrap]") {
  // Each round multiplies by a fresh encryption of w with |w| in [0.9, 1] and a random sign: the values keep
  // their size and mean zero. (A product with a large mean, such as x^2, puts a large constant coefficient into
  // the message; the automatic message ratio assumes coefficients of about |slots| / sqrt(slots) and would then
  // need message_ratio_bits raised: see BootstrapConfig.)
  static const BootFixture b(presets::bootstrappable_toy(11), {});
  auto rng = cerium_test::make_rng(4);
  std::uniform_real_distribution<double> size(0.9, 1.0);
  std::bernoulli_distribution sign(0.5);
  Values want = random_real(rng, b.slots());
  Ciphertext ct = b.f.encrypt(want, 1, b.slots());
  for (int round = 0; round < 4; ++round) {
    ct = b.boot.bootstrap(ct);
    Values w(b.slots());
    for (auto& v : w) v = sign(rng) ? size(rng) : -size(rng);
    const Ciphertext cw = b.f.encrypt(w, ct.level(), b.slots(), ct.scale());
    ct = b.f.evaluator.rescale(b.boot.evaluator().multiply(ct, cw));
    want = zip(want, w, [](Complex u, Complex v) { return u * v; });
    b.f.evaluator.level_down_inplace(ct, 1);
    const Precision p = measure(b.f.decrypt(ct), want);
    INFO("round " << round << ": mean " << p.mean_bits << " bits, worst " << p.worst_bits << " bits, seed "
                  << cerium_test::test_seed());
    CHECK(p.mean_bits >= 20);
    CHECK(p.worst_bits >= 16);
  }
}

TEST_CASE("double-hoisted DFTs keep the bootstrap's precision: same keys, same inputs as single hoisting",
          "[ckks][bootstrap][heavy]") {
  // CoeffToSlot and SlotToCoeff double-hoisted (the default) against single hoisting (one ModDown per rotation),
  // on the same ciphertexts: the means over a few inputs of the mean and worst-slot bits may not lose 0.3 bits.
  // Full and 64 slots at N = 2^11; 8 slots with one-level DFTs (one giant each) under a sparse secret at 2^10.
  CkksConfig sparse_secret = presets::bootstrappable_toy(10, 14);
  sparse_secret.secret = SecretDistribution::hamming_weight;
  sparse_secret.hamming_weight = 32;
  struct Case {
    CkksConfig params;
    std::size_t slots;
    int dft_levels;
  };
  for (const Case& c : {Case{presets::bootstrappable_toy(11), 0, 3}, Case{presets::bootstrappable_toy(11), 64, 3},
                        Case{sparse_secret, 8, 1}}) {
    const std::size_t slots = c.slots;
    BootstrapConfig single_config;
    single_config.slots = slots;
    single_config.coeff_to_slot_levels = single_config.slot_to_coeff_levels = c.dft_levels;
    single_config.sparse_encapsulation = c.dft_levels != 1;
    single_config.transform_hoisting = cerium::circuits::Hoisting::single;
    BootstrapConfig doubled_config = single_config;
    doubled_config.transform_hoisting = cerium::circuits::Hoisting::automatic;
    Fixture f(c.params, {.relinearization = true});
    Bootstrapper single(f.context, single_config), doubled(f.context, doubled_config);
    const auto keys = std::make_shared<const BootstrapKeys>(doubled.generate_keys(f.keygen));
    single.set_keys(keys);
    doubled.set_keys(keys);
    auto rng = cerium_test::make_rng(6 + slots);
    Precision single_total, doubled_total;
    constexpr int inputs = 5;  // the worst slot of one input varies by about 0.2 bits between the two runs
    for (int i = 0; i < inputs; ++i) {
      const Values x = random_real(rng, doubled.slots());
      const Ciphertext ct = f.encrypt(x, 1, doubled.slots());
      const Precision a = measure(f.decrypt(single.bootstrap(ct)), x);
      const Precision b = measure(f.decrypt(doubled.bootstrap(ct)), x);
      single_total.mean_bits += a.mean_bits / inputs;
      single_total.worst_bits += a.worst_bits / inputs;
      doubled_total.mean_bits += b.mean_bits / inputs;
      doubled_total.worst_bits += b.worst_bits / inputs;
    }
    INFO(doubled.slots() << " slots: single hoisting mean " << single_total.mean_bits << " bits, worst "
                         << single_total.worst_bits << "; double hoisting mean " << doubled_total.mean_bits
                         << " bits, worst " << doubled_total.worst_bits << "; seed " << cerium_test::test_seed());
    CHECK(doubled_total.mean_bits >= single_total.mean_bits - 0.3);
    CHECK(doubled_total.worst_bits >= single_total.worst_bits - 0.3);
    CHECK(doubled_total.mean_bits >= 20);
  }
}

TEST_CASE("bootstrapping rejects misuse with typed errors", "[ckks][bootstrap]") {
  const ContextPtr context = Context::create(presets::bootstrappable_toy(10, 17));
  SECTION("too few levels for the stages") {
    const ContextPtr small = Context::create(presets::bootstrappable_toy(10, 12));
    CHECK_THROWS_AS(Bootstrapper(small, {}), ParameterError);
  }
  SECTION("a slot count that is not a power of two") {
    CHECK_THROWS_AS(Bootstrapper(context, {.slots = 24}), ParameterError);
  }
  SECTION("a level budget beyond the butterfly stages") {
    CHECK_THROWS_AS(Bootstrapper(context, {.slots = 4, .coeff_to_slot_levels = 3}), ParameterError);
  }
  SECTION("inputs at level 0, with other slot counts, or before the keys") {
    Fixture f(context, {.relinearization = false});
    Bootstrapper boot(context, {});
    const Values x(boot.slots(), Complex(0.5));
    CHECK_THROWS_AS(boot.bootstrap(f.encrypt(x, 1, boot.slots())), MissingKeyError);
    try {  // the message names the call and the fix, not an internal stage
      boot.bootstrap(f.encrypt(x, 1, boot.slots()));
    } catch (const MissingKeyError& e) {
      CHECK(std::string(e.what()).rfind("bootstrap: no bootstrapping keys; call set_keys", 0) == 0);
    }
    CHECK_THROWS_AS(boot.bootstrap(f.encrypt(x, 0, boot.slots())), LevelError);
    CHECK_THROWS_AS(boot.bootstrap(f.encrypt(Values(4, Complex(0.5)), 1, 4)), MismatchError);
  }
}

TEST_CASE("a small value raised before bootstrapping and shrunk in EvalMod keeps its relative precision (N = 2^11)",
          "[ckks][bootstrap]") {
  static const BootFixture b(presets::bootstrappable_toy(11), {});
  auto rng = cerium_test::make_rng(31);
  const int shrink = 8;
  Values x = random_real(rng, b.slots());
  for (auto& v : x) v *= std::ldexp(0.8, -shrink);  // |x| <= 0.8 / 256
  const Ciphertext ct = b.f.encrypt(x, 1, b.slots());
  // Bootstrapped as it is, the error is the bootstrap's absolute one: a large part of so small a value.
  const Precision plain = measure(b.f.decrypt(b.boot.bootstrap(ct)), x);
  // Read at a scale 2^8 smaller (the same words: x 2^8, up to 0.8), bootstrapped with the result times 2^-8.
  Ciphertext raised = ct.clone();
  raised.set_scale(std::ldexp(ct.scale(), -shrink));
  const Ciphertext out = b.boot.bootstrap(raised, -shrink);
  REQUIRE(out.level() == b.boot.levels().output);
  REQUIRE(out.scale() == b.boot.bootstrap(ct).scale());
  const Precision scaled = measure(b.f.decrypt(out), x);
  INFO("plain: mean " << plain.mean_bits << " bits, worst " << plain.worst_bits << "; raised and shrunk: mean "
                      << scaled.mean_bits << ", worst " << scaled.worst_bits << " (seed " << cerium_test::test_seed()
                      << ")");
  CHECK(scaled.mean_bits > plain.mean_bits + shrink - 2);
  CHECK(scaled.worst_bits > 16 + shrink - 1);
  CHECK_THROWS_AS(b.boot.bootstrap(raised, 1), cerium::InvalidArgument);
  CHECK_THROWS_AS(b.boot.bootstrap(raised, -Bootstrapper::max_shrink_bits - 1), cerium::InvalidArgument);
}
