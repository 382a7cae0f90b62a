#include <cmath>
#include <set>
#include <string>

#include "cerium/ckks/parameters.hpp"
#include "cerium/core/error.hpp"
#include "support/catch.hpp"

using namespace cerium;
using namespace cerium::ckks;

namespace {
bool message_contains(const std::exception& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}
}  // namespace

TEST_CASE("the presets meet 128-bit security and have the stated shape", "[ckks][parameters]") {
  for (const auto& config : {presets::leveled_n14(), presets::leveled_n15(), presets::leveled_n16()}) {
    const Parameters params(config);
    INFO(params.describe());
    REQUIRE(params.security().compliant);
    REQUIRE(params.log_modulus() <= *max_log_modulus(config.log_n, SecurityLevel::classical128));
    REQUIRE(params.q_primes().size() == params.limbs_at(params.max_level()));
    REQUIRE(params.alpha() == (params.q_primes().size() + config.dnum - 1) / config.dnum);
    REQUIRE(params.default_scale() == std::ldexp(1.0, 56));
    std::set<std::uint32_t> all(params.q_primes().begin(), params.q_primes().end());
    all.insert(params.p_primes().begin(), params.p_primes().end());
    REQUIRE(all.size() == params.q_primes().size() + params.p_primes().size());  // all distinct
    for (auto q : all) REQUIRE(q % (2 * params.ring_degree()) == 1);
  }
}

TEST_CASE("level primes pair up to a product near the scale", "[ckks][parameters]") {
  const Parameters params(presets::leveled_n14());
  for (int level = 1; level <= params.max_level(); ++level) {
    const auto first = params.limbs_at(level - 1);
    const double product = double(params.q_primes()[first]) * double(params.q_primes()[first + 1]);
    INFO("level " << level);
    REQUIRE(std::abs(std::log2(product) - 56.0) < 0.01);
  }
}

TEST_CASE("levels map to limb counts and back", "[ckks][parameters]") {
  const Parameters params(presets::leveled_n14());
  for (int level = 0; level <= params.max_level(); ++level) REQUIRE(params.level_of(params.limbs_at(level)) == level);
  REQUIRE(params.limbs_at(0) == 2);
  REQUIRE_THROWS_AS(params.limbs_at(params.max_level() + 1), LevelError);
  REQUIRE_THROWS_AS(params.level_of(3), LevelError);  // between levels
  REQUIRE(params.digits_at(params.max_level()) == 3);
  REQUIRE(params.digits_at(0) == 1);
}

TEST_CASE("narrow levels: one prime each on a chain that keeps its scale, wide levels above as before",
          "[ckks][parameters]") {
  const Parameters narrow(presets::bootstrappable_n16_narrow());  // throws SecurityError if over the bound
  INFO(narrow.describe());
  CHECK(narrow.security().compliant);
  CHECK(narrow.log_modulus() <= 1747);
  const int n = narrow.narrow_levels();
  REQUIRE(n == 16);
  // Limbs: base, then one per narrow level, then level_width per wide level; and back.
  for (int level = 0; level <= narrow.max_level(); ++level) {
    INFO("level " << level);
    const std::size_t expected = level <= n ? 2 + level : 2 + n + 2 * (level - n);
    CHECK(narrow.limbs_at(level) == expected);
    CHECK(narrow.level_of(narrow.limbs_at(level)) == level);
    if (level >= 1) CHECK(narrow.primes_at(level) == (level <= n ? 1 : 2));
  }
  CHECK_THROWS_AS(narrow.level_of(2 + n + 1), LevelError);  // inside the first wide level
  CHECK_THROWS_AS(narrow.primes_at(0), LevelError);
  CHECK(narrow.q_primes().size() == narrow.limbs_at(narrow.max_level()));
  std::set<std::uint32_t> all(narrow.q_primes().begin(), narrow.q_primes().end());
  all.insert(narrow.p_primes().begin(), narrow.p_primes().end());
  CHECK(all.size() == narrow.q_primes().size() + narrow.p_primes().size());
  for (const auto q : all) CHECK(q % (2 * narrow.ring_degree()) == 1);
  // The chain: Delta_(l-1) = Delta_l^2 / q_l exactly as the primes were chosen, near 2^30 at every narrow level.
  for (int level = 1; level <= n; ++level) {
    INFO("level " << level);
    const double q = narrow.q_primes()[narrow.limbs_at(level) - 1];
    const double delta = narrow.default_scale_at(level);
    CHECK(narrow.default_scale_at(level - 1) == delta * (delta / q));
    CHECK(std::abs(std::log2(delta) - 30) < 0.05);
    CHECK(std::abs(std::log2(q) - 30) < 0.05);
  }
  CHECK(narrow.default_scale_at(n) == std::ldexp(1.0, 30));
  CHECK(narrow.default_scale_at(n + 1) == std::ldexp(1.0, 56));
  CHECK(narrow.default_scale_at(narrow.max_level()) == narrow.default_scale());
  // Without narrow levels nothing changes: the same primes and fingerprint as a config that never had the field.
  CkksConfig plain = presets::bootstrappable_n16();
  const Parameters wide(plain);
  plain.narrow_prime_bits = 25;  // ignored without narrow levels
  CHECK(Parameters(plain).fingerprint() == wide.fingerprint());
  CHECK(wide.default_scale_at(0) == wide.default_scale());
  CHECK(wide.fingerprint() != narrow.fingerprint());
  // Out of range.
  CkksConfig bad = presets::bootstrappable_n16_narrow();
  bad.narrow_levels = bad.levels + 1;
  CHECK_THROWS_AS(Parameters(bad), ParameterError);
  bad = presets::bootstrappable_n16_narrow();
  bad.narrow_prime_bits = 31;
  CHECK_THROWS_AS(Parameters(bad), ParameterError);
}

TEST_CASE("parameter sets over the security bound are rejected with the bound and the actual size", "[ckks][security]") {
  CkksConfig config = presets::leveled_n14();
  config.levels = 8;
  try {
    Parameters params(config);
    FAIL("accepted insecure parameters");
  } catch (const SecurityError& e) {
    INFO(e.what());
    REQUIRE(message_contains(e, "bound of 430"));
    REQUIRE(message_contains(e, "log2(QP)"));
  }
  config.insecure_opt_out = true;  // explicit opt-out: accepted, flagged
  const Parameters params(config);
  REQUIRE_FALSE(params.security().compliant);
}

TEST_CASE("special primes count toward the bound", "[ckks][security]") {
  // Q alone fits under 430 bits at N = 2^14; with dnum 1 the special primes (as many as Q's) push it over.
  CkksConfig config = presets::leveled_n14();
  config.dnum = 1;
  REQUIRE_THROWS_AS(Parameters(config), SecurityError);
}

TEST_CASE("sparse secrets are never called compliant", "[ckks][security]") {
  CkksConfig config = presets::leveled_n14();
  config.secret = SecretDistribution::hamming_weight;
  config.hamming_weight = 64;
  REQUIRE_THROWS_AS(Parameters(config), SecurityError);
  config.insecure_opt_out = true;
  const Parameters params(config);
  REQUIRE_FALSE(params.security().compliant);
  REQUIRE(check_security(14, 100, SecretDistribution::hamming_weight, SecurityLevel::classical128).compliant == false);
}

TEST_CASE("the bound tables", "[ckks][security]") {
  REQUIRE(max_log_modulus(16, SecurityLevel::classical128) == 1747);
  REQUIRE(max_log_modulus(17, SecurityLevel::classical128) == 3523);
  REQUIRE(max_log_modulus(12, SecurityLevel::classical128) == 106);
  REQUIRE_FALSE(max_log_modulus(9, SecurityLevel::classical128).has_value());
  for (int log_n = 10; log_n <= 17; ++log_n) {  // stricter levels allow less
    REQUIRE(*max_log_modulus(log_n, SecurityLevel::classical192) < *max_log_modulus(log_n, SecurityLevel::classical128));
    REQUIRE(*max_log_modulus(log_n, SecurityLevel::classical256) < *max_log_modulus(log_n, SecurityLevel::classical192));
  }
  REQUIRE(check_security(15, 868, SecretDistribution::uniform_ternary, SecurityLevel::classical128).compliant);
  REQUIRE_FALSE(check_security(15, 868.5, SecretDistribution::uniform_ternary, SecurityLevel::classical128).compliant);
  REQUIRE_FALSE(check_security(15, 700, SecretDistribution::uniform_ternary, SecurityLevel::classical192).compliant);
}

TEST_CASE("structural errors name the field", "[ckks][parameters]") {
  auto expect_error = [](CkksConfig config, const std::string& field) {
    try {
      Parameters params(config);
      FAIL("accepted " << field);
    } catch (const ParameterError& e) {
      INFO(e.what());
      REQUIRE(message_contains(e, field));
    }
  };
  auto base = presets::leveled_n14();
  auto c = base; c.level_width = 3; expect_error(c, "level_width");
  c = base; c.level_prime_bits = 32; expect_error(c, "level_prime_bits");
  c = base; c.dnum = 0; expect_error(c, "dnum");
  c = base; c.dnum = 100; expect_error(c, "dnum");
  c = base; c.log_n = 8; expect_error(c, "too small");
  c = base; c.base_primes = 0; expect_error(c, "base_primes");
  c = base; c.secret = SecretDistribution::hamming_weight; c.hamming_weight = 0; expect_error(c, "hamming_weight");
}

TEST_CASE("toy parameters need the explicit opt-out and are deterministic", "[ckks][parameters]") {
  const CkksConfig toy{.log_n = 6, .levels = 2, .dnum = 2, .insecure_opt_out = true};
  const Parameters a(toy), b(toy);
  REQUIRE(a == b);
  REQUIRE(a.fingerprint() == b.fingerprint());
  auto other = toy;
  other.dnum = 3;
  REQUIRE_FALSE(Parameters(other) == a);
}
