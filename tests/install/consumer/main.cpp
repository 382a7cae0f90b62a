// A program outside the Cerium tree, built against the installed package.
#include <cerium/math/ntt.hpp>
#include <cerium/math/primes.hpp>
#include <cerium/version.hpp>

#include <cstdio>
#include <vector>

int main() {
  const std::size_t n = 1024;
  const auto primes = cerium::math::generate_ntt_primes({.bits = 30, .count = 1, .ring_degree = n});
  cerium::math::NttTables tables(primes[0], n);
  std::vector<std::uint32_t> a(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<std::uint32_t>(i * 7919 % primes[0]);
  const auto original = a;
  cerium::math::ntt_forward(a, tables);
  cerium::math::ntt_inverse(a, tables);
  if (a != original) {
    std::puts("round trip through the installed NTT failed");
    return 1;
  }
  std::printf("Cerium %s installed package works\n", cerium::version_string);
  return 0;
}
