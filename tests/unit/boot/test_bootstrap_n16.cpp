// Bootstrapping at N = 2^16 (presets::bootstrappable_n16, 128-bit, full slots 2^15, sparse-secret encapsulation).
// Hidden from the default run ([.slow]: minutes of key generation and a minute or more per bootstrap on one CPU
// core); run with `cerium_test_ckks "[n16-bootstrap]"`.
//
// Bound (the issue's): real inputs uniform in [-1, 1], mean precision >= 20 bits and worst slot >= 16 bits; ten
// chained bootstraps with a multiplication between each keep it.
#include "cerium/boot/bootstrapper.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;
using namespace cerium::boot;

namespace {

struct N16 {
  Fixture f{presets::bootstrappable_n16(), {.relinearization = false}};
  Bootstrapper boot{f.context, BootstrapConfig{.cache_plaintexts = false}};
  N16() { boot.set_keys(std::make_shared<const BootstrapKeys>(boot.generate_keys(f.keygen))); }
};

const N16& setup() {
  static const N16 s;
  return s;
}

std::pair<double, double> bits(const Values& got, const Values& want) {
  double total = 0, worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(got.at(i) - want[i]);
    total += e;
    worst = std::max(worst, e);
  }
  return {-std::log2(total / static_cast<double>(want.size())), -std::log2(worst)};
}

}  // namespace

TEST_CASE("bootstrapping at N = 2^16, full slots", "[.slow][n16-bootstrap]") {
  const N16& s = setup();
  auto rng = cerium_test::make_rng(16);
  const Values x = random_real(rng, s.boot.slots());
  const Ciphertext out = s.boot.bootstrap(s.f.encrypt(x, 1));
  const auto [mean_bits, worst_bits] = bits(s.f.decrypt(out), x);
  INFO("N = 2^16: mean " << mean_bits << " bits, worst " << worst_bits << " bits, level " << out.level()
                         << ", seed " << cerium_test::test_seed());
  CHECK(out.level() == 9);
  CHECK(mean_bits >= 20);
  CHECK(worst_bits >= 16);
}

TEST_CASE("ten chained bootstraps at N = 2^16 with a multiplication between each", "[.slow][n16-bootstrap-chain]") {
  const N16& s = setup();
  auto rng = cerium_test::make_rng(17);
  std::uniform_real_distribution<double> size(0.9, 1.0);
  std::bernoulli_distribution sign(0.5);
  Values want = random_real(rng, s.boot.slots());
  Ciphertext ct = s.f.encrypt(want, 1);
  for (int round = 0; round < 10; ++round) {
    ct = s.boot.bootstrap(ct);
    // A fresh encryption of random signs of size 0.9..1: the values keep their size and mean zero (see the
    // toy chained test for why the mean matters to the automatic message ratio).
    Values w(s.boot.slots());
    for (auto& v : w) v = sign(rng) ? size(rng) : -size(rng);
    const Ciphertext cw = s.f.encrypt(w, ct.level(), 0, ct.scale());
    ct = s.f.evaluator.rescale(s.boot.evaluator().multiply(ct, cw));
    want = zip(want, w, [](Complex u, Complex v) { return u * v; });
    const auto [mean_bits, worst_bits] = bits(s.f.decrypt(ct), want);
    INFO("round " << round << ": mean " << mean_bits << " bits, worst " << worst_bits << " bits");
    CHECK(mean_bits >= 19);
    CHECK(worst_bits >= 16);
  }
}

// The MiniLM example's case: 16384 slots (message 2^6 below q0) and values up to about 14.6, concentrated in one
// coefficient (12 + 2.6 u). The default bootstrapper (message_bound 1) loses them; one made for them
// (message_bound 64, what graph::required_message_bound gives for 14.6) keeps them.
TEST_CASE("bootstrapping values up to 14.6 at N = 2^16, 16384 slots, message_bound 64", "[.slow][n16-bootstrap-bound]") {
  Fixture f{presets::bootstrappable_n16(), {.relinearization = false}};
  auto rng = cerium_test::make_rng(1646);
  for (const double bound : {256.0, 64.0, 1.0}) {
    Bootstrapper boot{f.context, BootstrapConfig{.slots = 16384, .message_bound = bound, .cache_plaintexts = false}};
    boot.set_keys(std::make_shared<const BootstrapKeys>(boot.generate_keys(f.keygen)));
    Values x = random_real(rng, boot.slots());
    for (auto& v : x) v = 12.0 + 2.6 * v;
    const Ciphertext out = boot.bootstrap(f.encrypt(x, 1, boot.slots()));
    const auto [mean_bits, worst_bits] = bits(f.decrypt(out), x);
    WARN("message_bound " << bound << ": mean " << mean_bits << " bits, worst " << worst_bits << " bits, seed "
                          << cerium_test::test_seed());
    if (bound > 1) {
      CHECK(mean_bits >= 10);
    } else {
      CHECK(worst_bits < 8);
    }
  }
}
