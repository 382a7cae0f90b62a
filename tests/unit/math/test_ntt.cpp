#include <algorithm>
#include <cstdint>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/math/ntt.hpp"
#include "cerium/math/ntt_butterfly.hpp"
#include "cerium/math/primes.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium::math;

namespace {
// Schoolbook product in Z_q[X]/(X^N + 1): X^N = -1 wraps with a sign change.
std::vector<std::uint32_t> negacyclic_product(const std::vector<std::uint32_t>& a,
                                              const std::vector<std::uint32_t>& b, std::uint32_t q) {
  const std::size_t n = a.size();
  std::vector<std::uint64_t> acc(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint64_t p = static_cast<std::uint64_t>(a[i]) * b[j] % q;
      const std::size_t k = i + j;
      if (k < n) acc[k] = (acc[k] + p) % q;
      else acc[k - n] = (acc[k - n] + q - p) % q;
    }
  }
  return {acc.begin(), acc.end()};
}
}  // namespace

TEST_CASE("NTT multiplication equals the schoolbook negacyclic product", "[math][ntt]") {
  const auto log_n = GENERATE(1, 2, 3, 6, 8, 10);
  const auto bits = GENERATE(20, 28, 30, 31);
  const std::size_t n = std::size_t{1} << log_n;
  const auto q = generate_ntt_primes({.bits = bits, .count = 1, .ring_degree = n})[0];
  INFO("N = " << n << ", q = " << q << ", seed = " << cerium_test::test_seed());
  NttTables tables(q, n);
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n * 100 + bits));
  auto a = cerium_test::random_residues(rng, n, q);
  auto b = cerium_test::random_residues(rng, n, q);
  const auto expected = negacyclic_product(a, b, q);
  ntt_forward(a, tables);
  ntt_forward(b, tables);
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<std::uint32_t>(static_cast<std::uint64_t>(a[i]) * b[i] % q);
  ntt_inverse(a, tables);
  CHECK(a == expected);
}

TEST_CASE("inverse NTT undoes the forward NTT for N = 2^10 .. 2^17", "[math][ntt]") {
  const auto log_n = GENERATE(10, 12, 14, 16, 17);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n));
  for (int bits : {28, 31}) {
    const auto q = generate_ntt_primes({.bits = bits, .count = 1, .ring_degree = n})[0];
    INFO("N = " << n << ", q = " << q << ", seed = " << cerium_test::test_seed());
    NttTables tables(q, n);
    const auto original = cerium_test::random_residues(rng, n, q);
    auto a = original;
    ntt_forward(a, tables);
    REQUIRE(a != original);
    REQUIRE(std::all_of(a.begin(), a.end(), [q](auto x) { return x < q; }));
    ntt_inverse(a, tables);
    REQUIRE(a == original);
  }
}

TEST_CASE("the NTT is linear and evaluates at the odd powers of psi in bit-reversed order", "[math][ntt]") {
  const std::size_t n = 256;
  const auto q = generate_ntt_primes({.bits = 30, .count = 1, .ring_degree = n})[0];
  NttTables tables(q, n);
  auto rng = cerium_test::make_rng(77);
  auto a = cerium_test::random_residues(rng, n, q);
  auto b = cerium_test::random_residues(rng, n, q);
  const std::uint32_t c = cerium_test::random_residues(rng, 1, q)[0];
  std::vector<std::uint32_t> combo(n);
  for (std::size_t i = 0; i < n; ++i) combo[i] = (a[i] + static_cast<std::uint64_t>(c) * b[i]) % q;
  const auto a_coeff = a;
  ntt_forward(a, tables);
  ntt_forward(b, tables);
  ntt_forward(combo, tables);
  for (std::size_t i = 0; i < n; ++i) REQUIRE(combo[i] == (a[i] + static_cast<std::uint64_t>(c) * b[i]) % q);
  // Definition: output k is a(psi^(2 bitrev(k) + 1)).
  for (std::size_t k = 0; k < n; k += 37) {
    const auto point = pow_mod(tables.psi(), 2 * bit_reverse(static_cast<u32>(k), tables.log_degree()) + 1, q);
    std::uint64_t value = 0, power = 1;
    for (std::size_t i = 0; i < n; ++i) {
      value = (value + a_coeff[i] * power) % q;
      power = power * point % q;
    }
    REQUIRE(a[k] == value);
  }
}

TEST_CASE("NTT tables reject bad moduli and degrees", "[math][ntt]") {
  REQUIRE_THROWS_AS(NttTables(12289, 1000), cerium::InvalidArgument);         // not a power of two
  REQUIRE_THROWS_AS(NttTables(12289, 1u << 18), cerium::InvalidArgument);     // too large
  REQUIRE_THROWS_AS(NttTables(12289, 1u << 13), cerium::InvalidArgument);     // 12289 != 1 mod 2^14
  REQUIRE_THROWS_AS(NttTables(12291, 16), cerium::InvalidArgument);           // not prime
  NttTables tables(12289, 1024);
  std::vector<std::uint32_t> wrong(512);
  REQUIRE_THROWS_AS(ntt_forward(wrong, tables), cerium::InvalidArgument);
}

TEST_CASE("the sparse forward NTT gives the full transform's words", "[math][ntt]") {
  const auto log_n = GENERATE(4, 10, 16);
  const std::size_t n = std::size_t{1} << log_n;
  const auto q = generate_ntt_primes({.bits = 30, .count = 1, .ring_degree = n})[0];
  const NttTables tables(q, n);
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n * 7 + 3));
  INFO("N = " << n << ", seed = " << cerium_test::test_seed());
  for (std::size_t gap = 1; gap <= n; gap *= 2) {
    INFO("gap " << gap);
    const auto values = cerium_test::random_residues(rng, n / gap, q);
    std::vector<std::uint32_t> a(n, 0);
    for (std::size_t k = 0; k < n / gap; ++k) a[k * gap] = values[k];
    std::vector<std::uint32_t> want = a;
    ntt_forward(want, tables);
    ntt_forward_sparse(a, tables, gap);
    CHECK(a == want);
  }
  std::vector<std::uint32_t> a(n);
  CHECK_THROWS_AS(ntt_forward_sparse(a, tables, 3), cerium::InvalidArgument);
  CHECK_THROWS_AS(ntt_forward_sparse(a, tables, 2 * n), cerium::InvalidArgument);
}
