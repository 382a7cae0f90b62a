#include <cstdint>
#include <random>
#include <vector>

#include "cerium/math/modarith.hpp"
#include "cerium/math/primes.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium::math;

namespace {
using wide = u128;

// Moduli across the supported range: small, 28-bit, and the largest primes below 2^31.
std::vector<u32> test_moduli() {
  std::vector<u32> moduli = {3, 17, 257, 65537, 12289};
  for (int bits : {20, 28, 30, 31}) {
    for (auto q : generate_ntt_primes({.bits = bits, .count = 2, .ring_degree = 1024})) moduli.push_back(q);
  }
  moduli.push_back(2147483647u);  // 2^31 - 1, the largest prime below 2^31
  return moduli;
}

// Edge values for operands in [0, q): 0, 1, q-1 and the middle.
std::vector<u32> edges(u32 q) { return {0, 1, q - 1, q / 2, q - 2 > q ? 0 : q - 2}; }
}  // namespace

TEST_CASE("modular add, sub, neg and conditional subtraction agree with 64-bit arithmetic", "[math][modarith]") {
  auto rng = cerium_test::make_rng(1);
  for (u32 q : test_moduli()) {
    INFO("q = " << q << ", seed = " << cerium_test::test_seed());
    auto values = cerium_test::random_residues(rng, 2000, q);
    for (auto e : edges(q)) values.push_back(e);
    for (std::size_t i = 0; i + 1 < values.size(); ++i) {
      const u32 a = values[i], b = values[i + 1];
      REQUIRE(add_mod(a, b, q) == (u64{a} + b) % q);
      REQUIRE(sub_mod(a, b, q) == (u64{a} + q - b) % q);
      REQUIRE(neg_mod(a, q) == (q - u64{a}) % q);
      REQUIRE(csub(a + q, q) == a);
      REQUIRE(csub(a, q) == a);
    }
  }
}

TEST_CASE("Barrett reduction and multiplication agree with 128-bit arithmetic", "[math][modarith]") {
  auto rng = cerium_test::make_rng(2);
  std::uniform_int_distribution<u64> any64;
  for (u32 q : test_moduli()) {
    const Modulus m(q);
    INFO("q = " << q << ", seed = " << cerium_test::test_seed());
    auto values = cerium_test::random_residues(rng, 2000, q);
    for (auto e : edges(q)) values.push_back(e);
    for (std::size_t i = 0; i + 1 < values.size(); ++i) {
      const u32 a = values[i], b = values[i + 1];
      REQUIRE(mul_mod(a, b, m) == static_cast<u32>(static_cast<wide>(a) * b % q));
    }
    // Any 64-bit value, including those near 2^64.
    std::vector<u64> wide_values = {0, 1, ~u64{0}, ~u64{0} - 1, u64{1} << 63, (u64{q} - 1) * (u64{q} - 1)};
    for (int i = 0; i < 2000; ++i) wide_values.push_back(any64(rng));
    for (u64 x : wide_values) REQUIRE(barrett_reduce(x, m) == x % q);
  }
}

TEST_CASE("Shoup multiplication by a fixed operand agrees with 128-bit arithmetic", "[math][modarith]") {
  auto rng = cerium_test::make_rng(3);
  std::uniform_int_distribution<u32> any32;
  for (u32 q : test_moduli()) {
    INFO("q = " << q << ", seed = " << cerium_test::test_seed());
    auto constants = cerium_test::random_residues(rng, 50, q);
    for (auto e : edges(q)) constants.push_back(e);
    for (u32 w : constants) {
      const ShoupConstant c(w, q);
      for (int i = 0; i < 100; ++i) {
        const u32 a = any32(rng);  // lazy form accepts any 32-bit input
        const u32 lazy = mul_shoup_lazy(a, c.value, c.quotient, q);
        REQUIRE(lazy < 2 * u64{q});
        REQUIRE(lazy % q == static_cast<u64>(a) * w % q);
        REQUIRE(mul_shoup(a % q, c, q) == static_cast<u64>(a % q) * w % q);
      }
      REQUIRE(mul_shoup(0xffffffffu, c, q) == 0xffffffffull * w % q);
    }
  }
}

TEST_CASE("Montgomery form round trips and multiplies correctly", "[math][modarith]") {
  auto rng = cerium_test::make_rng(4);
  for (u32 q : test_moduli()) {
    const Modulus m(q);
    INFO("q = " << q << ", seed = " << cerium_test::test_seed());
    REQUIRE(static_cast<u32>(m.mont_qinv * q) == 0xffffffffu);  // q * (-q^-1) = -1 mod 2^32
    auto values = cerium_test::random_residues(rng, 2000, q);
    for (auto e : edges(q)) values.push_back(e);
    for (std::size_t i = 0; i + 1 < values.size(); ++i) {
      const u32 a = values[i], b = values[i + 1];
      const u32 am = to_montgomery(a, m), bm = to_montgomery(b, m);
      REQUIRE(am == (static_cast<u64>(a) << 32) % q);
      REQUIRE(from_montgomery(am, m) == a);
      REQUIRE(from_montgomery(mul_montgomery(am, bm, m), m) == static_cast<u64>(a) * b % q);
      REQUIRE(mul_mod_montgomery(a, b, m) == static_cast<u64>(a) * b % q);  // plain residues in and out
    }
  }
}

TEST_CASE("lazy 128-bit accumulation of products reduces once, exactly", "[math][modarith]") {
  auto rng = cerium_test::make_rng(5);
  for (u32 q : test_moduli()) {
    const Modulus m(q);
    INFO("q = " << q << ", seed = " << cerium_test::test_seed());
    for (std::size_t terms : {1u, 4u, 5u, 64u, 1000u}) {
      const auto a = cerium_test::random_residues(rng, terms, q);
      const auto b = cerium_test::random_residues(rng, terms, q);
      WideAccumulator acc;
      wide reference = 0;
      for (std::size_t i = 0; i < terms; ++i) {
        acc.add_product(a[i], b[i]);
        reference += static_cast<wide>(a[i]) * b[i];
      }
      REQUIRE(acc.reduce(m) == static_cast<u32>(reference % q));
    }
    // Worst case: products of (2^32 - 1) words summed past 2^64 several times.
    WideAccumulator acc;
    wide reference = 0;
    for (int i = 0; i < 100; ++i) {
      acc.add_product(0xffffffffu, 0xffffffffu);
      reference += static_cast<wide>(0xffffffffull) * 0xffffffffull;
    }
    REQUIRE(acc.reduce(m) == static_cast<u32>(reference % q));
  }
}

TEST_CASE("pow_mod and inv_mod", "[math][modarith]") {
  auto rng = cerium_test::make_rng(6);
  for (u32 q : test_moduli()) {
    for (u32 a : cerium_test::random_residues(rng, 200, q)) {
      if (a == 0) continue;
      const u64 inverse = inv_mod(a, q);
      REQUIRE(inverse < q);
      REQUIRE(static_cast<u64>(a) * inverse % q == 1);
      REQUIRE(pow_mod(a, q - 1, q) == 1);  // Fermat
      REQUIRE(pow_mod(a, q - 2, q) == inverse);
    }
  }
  REQUIRE(inv_mod(6, 9) == 0);  // no inverse
  REQUIRE(inv_mod(3, 10) == 7);
}
