#include <algorithm>
#include <cstdint>
#include <set>

#include "cerium/core/error.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/math/primes.hpp"
#include "support/catch.hpp"

using namespace cerium::math;

namespace {
bool is_prime_by_trial_division(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}
}  // namespace

TEST_CASE("Miller-Rabin agrees with trial division", "[math][primes]") {
  for (std::uint64_t n = 0; n < 20000; ++n) REQUIRE(is_prime(n) == is_prime_by_trial_division(n));
  // Strong pseudoprimes to several bases and Carmichael numbers must be rejected.
  for (std::uint64_t n : {561ull, 1105ull, 2047ull, 1373653ull, 25326001ull, 3215031751ull, 2152302898747ull,
                          3474749660383ull, 341550071728321ull, 3825123056546413051ull}) {
    INFO(n);
    REQUIRE_FALSE(is_prime(n));
  }
  for (std::uint64_t p : {2147483647ull, 4294967291ull, 18446744073709551557ull}) REQUIRE(is_prime(p));
  for (std::uint64_t n = 2147483000; n < 2147484000; ++n) REQUIRE(is_prime(n) == is_prime_by_trial_division(n));
}

TEST_CASE("NTT-friendly primes: right size, 1 mod 2N, distinct, descending, exclusions honoured", "[math][primes]") {
  for (std::size_t n : {1024u, 1u << 12, 1u << 16, 1u << 17}) {
    for (int bits : {28, 30, 31}) {
      const auto primes = generate_ntt_primes({.bits = bits, .count = 8, .ring_degree = n});
      REQUIRE(primes.size() == 8);
      REQUIRE(std::is_sorted(primes.rbegin(), primes.rend()));
      REQUIRE(std::set<std::uint32_t>(primes.begin(), primes.end()).size() == primes.size());
      for (auto q : primes) {
        INFO("q = " << q << ", N = " << n);
        REQUIRE(is_prime_by_trial_division(q));
        REQUIRE(q % (2 * n) == 1);
        REQUIRE(q < (std::uint64_t{1} << bits));
        REQUIRE(q >= (std::uint64_t{1} << (bits - 1)));
      }
      const auto more = generate_ntt_primes({.bits = bits, .count = 3, .ring_degree = n, .exclude = primes});
      for (auto q : more) REQUIRE(std::find(primes.begin(), primes.end(), q) == primes.end());
      REQUIRE(more[0] < primes.back());  // the next ones down
    }
  }
}

TEST_CASE("prime generation rejects impossible requests with a typed error", "[math][primes]") {
  REQUIRE_THROWS_AS(generate_ntt_primes({.bits = 32, .count = 1, .ring_degree = 1024}), cerium::ParameterError);
  REQUIRE_THROWS_AS(generate_ntt_primes({.bits = 30, .count = 1, .ring_degree = 1000}), cerium::ParameterError);
  // Only a handful of 20-bit primes are 1 mod 2^18.
  REQUIRE_THROWS_AS(generate_ntt_primes({.bits = 20, .count = 100, .ring_degree = 1u << 17}), cerium::ParameterError);
}

TEST_CASE("primitive roots of unity have exactly the requested order", "[math][primes]") {
  for (std::size_t n : {2u, 16u, 1024u, 1u << 16}) {
    const auto q = generate_ntt_primes({.bits = 30, .count = 1, .ring_degree = n})[0];
    const auto g = primitive_root(q);
    for (auto f : prime_factors(q - 1)) REQUIRE(pow_mod(g, (q - 1) / f, q) != 1);
    const auto psi = minimal_primitive_root_of_unity(q, 2 * n);
    REQUIRE(pow_mod(psi, 2 * n, q) == 1);
    REQUIRE(pow_mod(psi, n, q) == q - 1);  // order exactly 2N
  }
  REQUIRE_THROWS_AS(minimal_primitive_root_of_unity(17, 32), cerium::InvalidArgument);
  REQUIRE_THROWS_AS(primitive_root(15), cerium::InvalidArgument);
}
