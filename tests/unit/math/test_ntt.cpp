#include <cstdint>
#include <vector>

#include "cerium/math/ntt.hpp"
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
