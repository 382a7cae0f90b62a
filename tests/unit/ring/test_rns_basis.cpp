#include <gmpxx.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/math/primes.hpp"
#include "cerium/ring/rns_basis.hpp"
#include "ring_test_support.hpp"
#include "support/catch.hpp"

using namespace cerium;
using namespace cerium::ring;

TEST_CASE("an RNS basis holds its primes with their tables", "[ring][basis]") {
  const auto log_n = GENERATE(4, 8, 12);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n));
  const auto primes = ring_test::mixed_primes(n, 5, rng);
  INFO("N = " << n << ", seed = " << cerium_test::test_seed());
  const RnsBasis basis(n, primes);
  REQUIRE(basis.ring_degree() == n);
  REQUIRE(basis.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(basis.prime(i) == primes[i]);
    CHECK(basis.primes()[i] == primes[i]);
    CHECK(basis.modulus(i).value == primes[i]);
    CHECK(basis.ntt(i).modulus() == primes[i]);
    CHECK(basis.ntt(i).degree() == n);
    CHECK(basis.index_of(primes[i]) == i);
  }
  CHECK_FALSE(basis.contains(12289));
  double bits = 0;
  for (auto q : primes) bits += std::log2(static_cast<double>(q));
  CHECK(std::abs(basis.log2_product() - bits) < 1e-9);  // (Catch::Approx is not spelled the same in Catch2 v2)
  const auto text = describe(basis);
  CHECK(text.find(std::to_string(primes[0])) != std::string::npos);
  CHECK(text.find("N = " + std::to_string(n)) != std::string::npos);
}

TEST_CASE("basis validation names the offending prime", "[ring][basis]") {
  const std::size_t n = 1024;
  const auto good = math::generate_ntt_primes({.bits = 30, .count = 2, .ring_degree = n});

  SECTION("repeated prime") {
    const std::vector<std::uint32_t> primes = {good[0], good[1], good[0]};
    REQUIRE_THROWS_AS(RnsBasis(n, primes), ParameterError);
    CHECK(ring_test::error_message([&] { RnsBasis(n, primes); }).find(std::to_string(good[0])) != std::string::npos);
  }
  SECTION("composite") {
    const std::vector<std::uint32_t> primes = {good[0], 12291};  // 3 * 4097
    REQUIRE_THROWS_AS(RnsBasis(n, primes), ParameterError);
    CHECK(ring_test::error_message([&] { RnsBasis(n, primes); }).find("12291") != std::string::npos);
  }
  SECTION("not below 2^31") {
    // Refused for its size, whatever its other properties.
    const std::vector<std::uint32_t> primes = {good[0], 2147565569u};
    REQUIRE_THROWS_AS(RnsBasis(n, primes), ParameterError);
    CHECK(ring_test::error_message([&] { RnsBasis(n, primes); }).find("2147565569") != std::string::npos);
  }
  SECTION("not 1 mod 2N") {
    // 12289 = 3 * 2^12 + 1 is 1 mod 2^12 but not 1 mod 2N = 2^13.
    const auto fine = math::generate_ntt_primes({.bits = 30, .count = 1, .ring_degree = 4096});
    const std::vector<std::uint32_t> primes = {fine[0], 12289};
    REQUIRE_THROWS_AS(RnsBasis(4096, primes), ParameterError);
    CHECK(ring_test::error_message([&] { RnsBasis(4096, primes); }).find("12289") != std::string::npos);
  }
  SECTION("ring degree and empty list") {
    REQUIRE_THROWS_AS(RnsBasis(1000, good), ParameterError);
    REQUIRE_THROWS_AS(RnsBasis(std::size_t{1} << 18, good), ParameterError);
    REQUIRE_THROWS_AS(RnsBasis(n, std::vector<std::uint32_t>{}), ParameterError);
  }
}

TEST_CASE("sub-bases and concatenations share the per-prime tables", "[ring][basis]") {
  const std::size_t n = 256;
  auto rng = cerium_test::make_rng(3);
  const auto primes = ring_test::mixed_primes(n, 6, rng);
  const RnsBasis basis(n, primes);

  const auto middle = basis.sub_basis(2, 3);
  REQUIRE(middle.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(middle.prime(i) == primes[2 + i]);
    CHECK(middle.prime_data(i).get() == basis.prime_data(2 + i).get());
  }
  REQUIRE_THROWS_AS(basis.sub_basis(4, 3), InvalidArgument);
  REQUIRE_THROWS_AS(basis.sub_basis(0, 0), InvalidArgument);

  const auto front = basis.sub_basis(0, 2);
  const auto back = basis.sub_basis(2, 4);
  const auto joined = front.concat(back);
  CHECK(joined == basis);
  CHECK(joined.prime_data(5).get() == basis.prime_data(5).get());
  REQUIRE_THROWS_AS(basis.concat(front), ParameterError);
  const auto other_degree = math::generate_ntt_primes({.bits = 30, .count = 1, .ring_degree = 2 * n});
  REQUIRE_THROWS_AS(basis.concat(RnsBasis(2 * n, other_degree)), MismatchError);

  const auto rest = basis.without(middle);
  REQUIRE(rest.has_value());
  REQUIRE(rest->size() == 3);
  CHECK(rest->prime(0) == primes[0]);
  CHECK(rest->prime(1) == primes[1]);
  CHECK(rest->prime(2) == primes[5]);
  CHECK_FALSE(basis.without(basis).has_value());
  CHECK_FALSE(basis == middle);
}

TEST_CASE("CRT constants agree with big-integer arithmetic", "[ring][basis]") {
  const auto count = GENERATE(1, 2, 3, 7, 12);
  const std::size_t n = 64;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(count) + 100);
  const auto primes = ring_test::mixed_primes(n, static_cast<std::size_t>(count), rng);
  const auto others = ring_test::mixed_primes(n, 4, rng, primes);
  INFO("primes = " << count << ", seed = " << cerium_test::test_seed());
  const RnsBasis basis(n, primes);
  mpz_class product = 1;
  for (auto q : primes) product *= q;
  for (std::size_t i = 0; i < primes.size(); ++i) {
    const mpz_class q_hat = product / primes[i];
    const auto c = basis.q_hat_inverse(i);
    CHECK(ring_test::mod(q_hat * c.value, primes[i]) == 1 % primes[i]);
    CHECK(c.quotient == math::shoup_quotient(c.value, primes[i]));
  }
  for (auto p : others) {
    const math::Modulus m(p);
    const auto row = basis.q_hat_mod(m);
    REQUIRE(row.size() == primes.size());
    for (std::size_t i = 0; i < primes.size(); ++i) CHECK(row[i] == ring_test::mod(product / primes[i], p));
    CHECK(basis.product_mod(m) == ring_test::mod(product, p));
  }
}
