#pragma once
// Seeded random inputs for tests. Each test draws fresh values from a seed that it prints on failure, and
// CERIUM_TEST_SEED overrides the seed to reproduce a run.

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

namespace cerium_test {

inline std::uint64_t test_seed() {
  if (const char* env = std::getenv("CERIUM_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  static const std::uint64_t seed = std::random_device{}() ^ (std::uint64_t{std::random_device{}()} << 32);
  return seed;
}

inline std::mt19937_64 make_rng(std::uint64_t salt = 0) { return std::mt19937_64(test_seed() ^ (salt * 0x9e3779b97f4a7c15ull)); }

// n values uniform in [0, q).
inline std::vector<std::uint32_t> random_residues(std::mt19937_64& rng, std::size_t n, std::uint32_t q) {
  std::uniform_int_distribution<std::uint32_t> dist(0, q - 1);
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace cerium_test
