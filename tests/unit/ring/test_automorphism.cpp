#include <algorithm>
#include <cstdint>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/math/ntt_butterfly.hpp"
#include "cerium/ring/automorphism.hpp"
#include "ring_test_support.hpp"
#include "support/catch.hpp"

using namespace cerium;
using namespace cerium::ring;

namespace {

// a(X^k) mod (X^N + 1) from the definition: X^(ik) = (-1)^floor(ik / N) X^(ik mod N).
std::vector<std::uint32_t> substitute(std::span<const std::uint32_t> a, std::uint64_t k, std::uint32_t q) {
  const std::size_t n = a.size();
  std::vector<std::uint32_t> out(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t e = i * k;
    const bool negate = (e / n) % 2 == 1;
    out[e % n] = negate ? (q - a[i]) % q : a[i];
  }
  return out;
}

std::uint32_t evaluate(std::span<const std::uint32_t> a, std::uint32_t point, std::uint32_t q) {
  std::uint64_t value = 0, power = 1;
  for (auto c : a) {
    value = (value + c * power) % q;
    power = power * point % q;
  }
  return static_cast<std::uint32_t>(value);
}

std::vector<std::uint32_t> some_galois_elements(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::uint32_t> ks = {1, conjugation_galois_element(n), rotation_galois_element(1, n),
                                   rotation_galois_element(-1, n)};
  std::uniform_int_distribution<std::uint32_t> dist(0, static_cast<std::uint32_t>(n - 1));
  for (int i = 0; i < 3; ++i) ks.push_back(2 * dist(rng) + 1);
  return ks;
}

}  // namespace

TEST_CASE("automorphisms in coefficient form follow the definition", "[ring][automorphism]") {
  const auto log_n = GENERATE(4, 7, 12);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n));
  INFO("N = " << n << ", seed = " << cerium_test::test_seed());
  const auto basis = ring_test::random_basis(n, 2, rng);
  const auto x = ring_test::random_poly(basis, rng);
  for (auto k : some_galois_elements(n, rng)) {
    INFO("k = " << k);
    const Automorphism sigma(n, k);
    const auto y = sigma.apply(x);
    REQUIRE(y.form() == PolyForm::coefficient);
    for (std::size_t i = 0; i < basis->size(); ++i) {
      const auto q = basis->prime(i);
      REQUIRE(std::ranges::equal(y.limb(i), substitute(x.limb(i), k, q)));
    }
    // sigma_k(a)(psi^e) = a(psi^(k e)) at a few odd exponents.
    const auto q = basis->prime(0);
    const auto psi = basis->ntt(0).psi();
    for (std::uint64_t e = 1; e < 2 * n; e += 2 * (n / 4) + 2) {
      CHECK(evaluate(y.limb(0), math::pow_mod(psi, e, q), q) == evaluate(x.limb(0), math::pow_mod(psi, e * k, q), q));
    }
  }
}

TEST_CASE("automorphisms in NTT form are the permutation of the transformed definition", "[ring][automorphism]") {
  const auto log_n = GENERATE(1, 2, 4, 8, 12);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) + 30);
  INFO("N = " << n << ", seed = " << cerium_test::test_seed());
  const auto basis = ring_test::random_basis(n, 3, rng);
  auto x = ring_test::random_poly(basis, rng, PolyForm::ntt);
  for (auto k : some_galois_elements(n, rng)) {
    INFO("k = " << k);
    const Automorphism sigma(n, k);
    const auto y = sigma.apply(x);
    REQUIRE(y.form() == PolyForm::ntt);
    auto coeff = x.clone();
    coeff.to_coeff();
    auto expected = sigma.apply(coeff);
    expected.to_ntt();
    CHECK(y == expected);
  }
}

TEST_CASE("composing automorphisms multiplies Galois elements", "[ring][automorphism]") {
  const auto log_n = GENERATE(4, 10);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) + 60);
  INFO("N = " << n << ", seed = " << cerium_test::test_seed());
  const auto basis = ring_test::random_basis(n, 2, rng);
  const auto form = GENERATE(PolyForm::coefficient, PolyForm::ntt);
  const auto x = ring_test::random_poly(basis, rng, form);
  const auto ks = some_galois_elements(n, rng);
  for (auto k1 : ks) {
    for (auto k2 : ks) {
      const auto twice = Automorphism(n, k2).apply(Automorphism(n, k1).apply(x));
      CHECK(twice == Automorphism(n, compose_galois_elements(k1, k2, n)).apply(x));
    }
  }
  CHECK(Automorphism(n, 1).apply(x) == x);
}

TEST_CASE("Galois elements of rotations and conjugation", "[ring][automorphism]") {
  const auto log_n = GENERATE(2, 5, 12, 16);
  const std::size_t n = std::size_t{1} << log_n;
  const std::uint32_t two_n = static_cast<std::uint32_t>(2 * n);
  const auto slots = static_cast<std::int64_t>(n / 2);
  CHECK(rotation_galois_element(0, n) == 1);
  CHECK(rotation_galois_element(1, n) == 5 % two_n);
  CHECK(rotation_galois_element(slots, n) == 1);
  CHECK(conjugation_galois_element(n) == two_n - 1);
  for (std::int64_t r : {1, 2, 3, 7, 100, -1, -5, -100}) {
    INFO("r = " << r);
    const auto k = rotation_galois_element(r, n);
    CHECK(k % 2 == 1);
    CHECK(k < two_n);
    CHECK(compose_galois_elements(k, rotation_galois_element(-r, n), n) == 1);
    CHECK(compose_galois_elements(k, rotation_galois_element(3, n), n) == rotation_galois_element(r + 3, n));
    if (r > 0) CHECK(k == math::pow_mod(5, static_cast<std::uint64_t>(r), two_n));
  }
  REQUIRE_THROWS_AS(Automorphism(n, 2), InvalidArgument);
  REQUIRE_THROWS_AS(Automorphism(n, two_n + 1), InvalidArgument);
}

TEST_CASE("rotation by r moves NTT slot 5^(j + r) to slot 5^j at N = 2^16", "[ring][automorphism][large]") {
  const std::size_t n = std::size_t{1} << 16;
  const int log_n = 16;
  auto rng = cerium_test::make_rng(1616);
  INFO("seed = " << cerium_test::test_seed());
  const auto basis = ring_test::random_basis(n, 1, rng);
  const auto x = ring_test::random_poly(basis, rng, PolyForm::ntt);
  const std::uint32_t two_n = static_cast<std::uint32_t>(2 * n);
  // Index of the evaluation at psi^e in the NTT output.
  const auto index_of = [&](std::uint64_t e) { return math::bit_reverse(static_cast<std::uint32_t>((e - 1) / 2), log_n); };
  for (std::int64_t r : {1, -3, 1000}) {
    const auto k = rotation_galois_element(r, n);
    const Automorphism sigma(n, k);
    const auto y = sigma.apply(x);
    for (std::size_t j = 0; j < n / 2; j += 97) {
      const std::uint64_t slot = math::pow_mod(5, j, two_n);  // 5^j
      const std::uint64_t shifted = slot * k % two_n;  // 5^(j + r)
      REQUIRE(y.limb(0)[index_of(slot)] == x.limb(0)[index_of(shifted)]);
    }
  }
  auto coeff = x.clone();
  coeff.to_coeff();
  const Automorphism conj(n, conjugation_galois_element(n));
  auto expected = conj.apply(coeff);
  expected.to_ntt();
  CHECK(conj.apply(x) == expected);
}
