// The RLWE tier on its own, with no CKKS in sight: a context from a hand-made modulus ladder, switching keys made
// over it, and hybrid key switching checked against the exact relation d0 + d1 s = c s' + e with |e| within
// rlwe::key_switch_noise_bound, at every level, for seeded and expanded keys, with and without hoisting.

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/math/primes.hpp"
#include "cerium/math/sampler.hpp"
#include "cerium/ring/automorphism.hpp"
#include "cerium/rlwe/context.hpp"
#include "cerium/rlwe/key_switch.hpp"
#include "cerium/rlwe/small_poly.hpp"
#include "cerium/rlwe/switching_key.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"
#include "support/random_poly.hpp"

using namespace cerium;
using ring::RnsPoly;

namespace {

constexpr std::size_t n = 1024;

// Q: 7 primes of 28 bits over levels of 3, 5 and 7 limbs (level 0 holds 3), P: 3 primes of 30 bits.
rlwe::ModulusLadder test_ladder() {
  const auto q = math::generate_ntt_primes({.bits = 28, .count = 7, .ring_degree = n});
  const auto p = math::generate_ntt_primes({.bits = 30, .count = 3, .ring_degree = n});
  return {.ring_degree = n, .q_primes = q, .p_primes = p, .level_limbs = {3, 5, 7}};
}

math::Seed seed_of(std::uint32_t value) {
  math::Seed seed{};
  seed.words[0] = value;
  return seed;
}

double max_centered(const RnsPoly& x) {
  RnsPoly c = x.clone();
  c.to_coeff();
  double m = 0;
  for (auto v : c.to_signed()) m = std::max(m, std::abs(static_cast<double>(v)));
  return m;
}

// A secret's limbs over a sub-basis of the key basis (its first q limbs and all of P).
RnsPoly restrict(const rlwe::Context& context, const RnsPoly& over_key_basis, int level) {
  const auto& basis = context.qp_basis(level);
  RnsPoly out(basis, ring::PolyForm::ntt);
  for (std::size_t i = 0; i < basis->size(); ++i) {
    const auto from = over_key_basis.limb(*over_key_basis.basis().index_of(basis->prime(i)));
    std::copy(from.begin(), from.end(), out.limb(i).begin());
  }
  return out;
}

RnsPoly over_q(const rlwe::Context& context, const RnsPoly& over_key_basis, int level) {
  RnsPoly qp = restrict(context, over_key_basis, level);
  RnsPoly out(context.q_basis(level), ring::PolyForm::ntt);
  for (std::size_t i = 0; i < out.limb_count(); ++i) std::copy(qp.limb(i).begin(), qp.limb(i).end(), out.limb(i).begin());
  return out;
}

}  // namespace

TEST_CASE("rlwe::Context builds the level bases, digits and rescalers of a modulus ladder", "[rlwe]") {
  const auto ladder = test_ladder();
  const auto context = rlwe::Context::create(ladder);
  REQUIRE(context->ring_degree() == n);
  REQUIRE(context->max_level() == 2);
  REQUIRE(context->alpha() == 3);
  for (int level = 0; level <= 2; ++level) {
    const std::size_t limbs = ladder.level_limbs[static_cast<std::size_t>(level)];
    CHECK(context->limbs_at(level) == limbs);
    CHECK(context->q_basis(level)->size() == limbs);
    CHECK(context->qp_basis(level)->size() == limbs + 3);
    CHECK(context->digit_count(level) == (limbs + 2) / 3);
    for (std::size_t i = 0; i < limbs; ++i) CHECK(context->q_basis(level)->prime(i) == ladder.q_primes[i]);
  }
  CHECK(context->key_basis()->size() == 10);
  CHECK(context->rescaler(2).kept().size() == 5);
  CHECK(context->rescaler(1).kept().size() == 3);
  CHECK_THROWS_AS(context->rescaler(0), LevelError);
  CHECK_THROWS_AS(context->q_basis(3), LevelError);
  CHECK_THROWS_AS(context->mod_up(0, 1), InvalidArgument);  // level 0 has one digit
  CHECK(context->describe() == "N = 2^10, 7 + 3 primes, 2 levels");

  // Equal ladders are interchangeable; another ladder is a typed mismatch naming both.
  const auto twin = rlwe::Context::create(ladder);
  CHECK_NOTHROW(rlwe::require_same_ladder(context.get(), twin.get(), "test"));
  auto shorter = ladder;
  shorter.level_limbs = {5, 7};
  const auto other = rlwe::Context::create(shorter);
  try {
    rlwe::require_same_ladder(context.get(), other.get(), "test");
    FAIL("different ladders were accepted");
  } catch (const MismatchError& e) {
    const std::string message = e.what();
    CHECK(message.find("different moduli") != std::string::npos);
    CHECK(message.find("1 levels") != std::string::npos);
  }

  SECTION("inconsistent ladders are refused") {
    auto bad = ladder;
    bad.level_limbs = {3, 3, 7};
    CHECK_THROWS_AS(rlwe::Context::create(bad), InvalidArgument);
    bad.level_limbs = {3, 5, 6};
    CHECK_THROWS_AS(rlwe::Context::create(bad), InvalidArgument);
    bad.level_limbs = {3, 7};  // a rescale divides by one or two primes
    CHECK_THROWS_AS(rlwe::Context::create(bad), InvalidArgument);
    bad = ladder;
    bad.p_primes.clear();
    CHECK_THROWS_AS(rlwe::Context::create(bad), InvalidArgument);
    bad = ladder;
    bad.ring_degree = 1000;
    CHECK_THROWS_AS(rlwe::Context::create(bad), InvalidArgument);
  }
}

TEST_CASE("rlwe key switching over a bare RLWE context meets its noise bound at every level", "[rlwe]") {
  const auto context = rlwe::Context::create(test_ladder());
  auto rng = cerium_test::make_rng(31);
  INFO("test seed " << cerium_test::test_seed());

  // s and s' ternary over the key basis; the switching key from s' to s.
  std::vector<std::int8_t> s_values(n), s_from_values(n);
  math::Prng prng(seed_of(static_cast<std::uint32_t>(rng())), 0);
  math::sample_ternary(prng, s_values);
  math::sample_ternary(prng, s_from_values);
  const RnsPoly s = rlwe::small_poly(context->key_basis(), std::span<const std::int8_t>(s_values));
  const RnsPoly s_from = rlwe::small_poly(context->key_basis(), std::span<const std::int8_t>(s_from_values));
  const rlwe::SwitchingKeyDraw draw{.uniform = seed_of(7), .noise = seed_of(8), .base_stream = 256};
  const auto expanded = rlwe::make_switching_key(context, s, s_from, draw);
  auto seeded_draw = draw;
  seeded_draw.storage = rlwe::KeyStorage::seeded;
  const auto seeded = rlwe::make_switching_key(context, s, s_from, seeded_draw);
  REQUIRE(seeded.stored_a(0) == nullptr);
  for (std::size_t d = 0; d < expanded.digit_count(); ++d) REQUIRE(seeded.a(d) == *expanded.stored_a(d));

  const std::uint32_t k = ring::rotation_galois_element(3, n);
  const ring::Automorphism& sigma = context->automorphism(k);
  for (int level = 0; level <= context->max_level(); ++level) {
    INFO("level " << level);
    const RnsPoly c = cerium_test::random_ntt_poly(context->q_basis(level), rng);
    const RnsPoly s_l = over_q(*context, s, level);
    const RnsPoly s_from_l = over_q(*context, s_from, level);
    const double bound = rlwe::key_switch_noise_bound(*context, level, static_cast<double>(n));

    const auto d = rlwe::key_switch(*context, c, level, expanded);
    RnsPoly e = d[1] * s_l;
    e += d[0];
    e -= c * s_from_l;
    CHECK(max_centered(e) <= bound);
    CHECK(max_centered(e) > 0);  // a real key switch adds noise
    CHECK(rlwe::key_switch(*context, c, level, seeded)[0] == d[0]);

    // Hoisted: one ModUp, the automorphism applied to the digits; the result switches sigma(c) from sigma(s').
    const auto decomposed = rlwe::decompose_and_mod_up(*context, c, level);
    const auto hoisted = rlwe::key_switch_apply(*context, decomposed, expanded, &sigma);
    RnsPoly e_hoisted = hoisted[1] * s_l;
    e_hoisted += hoisted[0];
    e_hoisted -= sigma.apply(c) * s_from_l;
    CHECK(max_centered(e_hoisted) <= bound);
  }

  // Keys and operands of another ladder are refused with typed errors.
  auto other_ladder = test_ladder();
  other_ladder.level_limbs = {5, 7};
  const auto other = rlwe::Context::create(other_ladder);
  const RnsPoly c = cerium_test::random_ntt_poly(context->q_basis(1), rng);
  CHECK_THROWS_AS(rlwe::key_switch(*other, cerium_test::random_ntt_poly(other->q_basis(1), rng), 1, expanded), MismatchError);
  CHECK_THROWS_AS(rlwe::key_switch(*context, c, 2, expanded), MismatchError);
  CHECK_THROWS_AS(rlwe::make_switching_key(context, over_q(*context, s, 2), s_from, draw), MismatchError);
}

TEST_CASE("the key switch's inner product then ModDown gives key_switch_apply's words", "[rlwe]") {
  const auto context = rlwe::Context::create(test_ladder());
  auto rng = cerium_test::make_rng(32);
  INFO("test seed " << cerium_test::test_seed());
  std::vector<std::int8_t> s_values(n), s_from_values(n);
  math::Prng prng(seed_of(static_cast<std::uint32_t>(rng())), 0);
  math::sample_ternary(prng, s_values);
  math::sample_ternary(prng, s_from_values);
  const RnsPoly s = rlwe::small_poly(context->key_basis(), std::span<const std::int8_t>(s_values));
  const RnsPoly s_from = rlwe::small_poly(context->key_basis(), std::span<const std::int8_t>(s_from_values));
  const rlwe::SwitchingKeyDraw draw{.uniform = seed_of(9), .noise = seed_of(10), .base_stream = 512,
                                    .storage = rlwe::KeyStorage::expanded};
  const auto key = rlwe::make_switching_key(context, s, s_from, draw);
  const ring::Automorphism& sigma = context->automorphism(ring::rotation_galois_element(5, n));
  for (int level = 0; level <= context->max_level(); ++level) {
    INFO("level " << level);
    const auto decomposed = rlwe::decompose_and_mod_up(*context, cerium_test::random_ntt_poly(context->q_basis(level), rng), level);
    for (const ring::Automorphism* automorphism : {static_cast<const ring::Automorphism*>(nullptr), &sigma}) {
      INFO("automorphism " << (automorphism != nullptr));
      const auto sums = rlwe::key_switch_inner_product(*context, decomposed, key, automorphism);
      REQUIRE(sums[0].basis() == *context->qp_basis(level));
      REQUIRE(sums[0].form() == ring::PolyForm::ntt);
      const auto want = rlwe::key_switch_apply(*context, decomposed, key, automorphism);
      const ring::ModDown& mod_down = context->mod_down(level);
      CHECK(mod_down.apply(sums[0]) == want[0]);
      CHECK(mod_down.apply(sums[1]) == want[1]);
      // Linear before the ModDown: u0 + u1 s = P sigma(c) s' + E over Q_l u P, so the sum of two pairs is the
      // pair of the summed digits (what double hoisting relies on).
      RnsPoly twice = sums[0].clone();
      twice += sums[0];
      rlwe::DecomposedPoly doubled{level, {}};
      for (const auto& digit : decomposed.digits) {
        RnsPoly d = digit.clone();
        d += digit;
        doubled.digits.push_back(std::move(d));
      }
      CHECK(rlwe::key_switch_inner_product(*context, doubled, key, automorphism)[0] == twice);
    }
  }
}
