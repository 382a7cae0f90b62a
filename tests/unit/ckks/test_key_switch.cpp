// Hybrid key switching at every level: (d0 + d1 s) - c s' must be small, for s' = s^2 and s' = sigma_k(s), with
// expanded and seeded keys, with and without hoisting.
//
// The bound checked is key_switch_noise_bound (rlwe/key_switch.hpp, for CKKS secrets in ckks/keys.hpp), the worst case
//   19 N sum_d alpha_d Q_d / P + (alpha - 1/2)(1 + ||s||_1),
// and, as a sharper statistical check, the typical size 3.2 sqrt(N digits (alpha/12 + alpha^2/4)) max(Q_d) / P
// (ModUp lifts are sums of alpha uniform fractions of Q_d) times 8, plus the rounding term alpha (sqrt(N) 8 + 1).

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cerium/backend/cpu_backend.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/rlwe/key_switch.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/core/error.hpp"
#include "cerium/ring/automorphism.hpp"
#include "scheme_test_support.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"
#include "support/random_poly.hpp"

using namespace cerium;
using namespace cerium::ckks;
using cerium::rlwe::DecomposedPoly;
using cerium::ring::RnsPoly;
using namespace scheme_test;

namespace {

double max_centered(const RnsPoly& x) {
  RnsPoly c = x.clone();
  c.to_coeff();
  try {
    double m = 0;
    for (auto v : c.to_signed()) m = std::max(m, std::abs(static_cast<double>(v)));
    return m;
  } catch (const InvalidArgument&) {
    return std::numeric_limits<double>::infinity();
  }
}

// The statistical size of key-switching noise at a level (see the file comment).
double typical_bound(const Context& context, int level) {
  const auto& params = context.parameters();
  const auto q = params.q_primes();
  const std::size_t limbs = params.limbs_at(level);
  const double alpha = static_cast<double>(params.alpha());
  const double n = static_cast<double>(context.ring_degree());
  double max_ratio = 0;
  for (std::size_t first = 0; first < limbs; first += params.alpha()) {
    double log_qd = 0;
    for (std::size_t i = first; i < std::min(first + params.alpha(), limbs); ++i) log_qd += std::log2(double(q[i]));
    max_ratio = std::max(max_ratio, std::exp2(log_qd - params.log_p()));
  }
  const double digits = static_cast<double>(context.digit_count(level));
  const double sd = 3.2 * std::sqrt(n * digits * (alpha / 12 + alpha * alpha / 4)) * max_ratio;
  return 8 * sd + alpha * (8 * std::sqrt(n) + 1);
}

// (d0 + d1 s) - c s' at a level, centered; s and s' over Q_l in NTT form.
double switch_error(const std::array<RnsPoly, 2>& d, const RnsPoly& c, const RnsPoly& s, const RnsPoly& s_from) {
  RnsPoly r = d[1] * s;
  r += d[0];
  r -= c * s_from;
  return max_centered(r);
}

}  // namespace

TEST_CASE("key switching works at every level for relinearization and Galois keys", "[keyswitch]") {
  const int index = GENERATE(0, 1, 2, 3, 4);
  const auto context = Context::create(toy_config(index));
  INFO(context->parameters().describe());
  auto rng = cerium_test::make_rng(100 + static_cast<std::uint64_t>(index));
  INFO("test seed " << cerium_test::test_seed());
  const KeyGenerator generator(context, seed_of(1));
  const RelinearizationKey rk = generator.relinearization_key();
  const RelinearizationKey rk_seeded = generator.relinearization_key(KeyStorage::seeded);
  const std::uint32_t k = ring::rotation_galois_element(5, context->ring_degree());
  const SwitchingKey gk = generator.galois_key(k, KeyStorage::seeded);
  const ring::Automorphism& sigma = context->automorphism(k);

  for (int level = 0; level <= context->max_level(); ++level) {
    INFO("level " << level);
    const auto& basis = context->q_basis(level);
    const RnsPoly s = generator.secret_key().poly_over(basis);
    const RnsPoly c = cerium_test::random_ntt_poly(basis, rng);
    const double bound = key_switch_noise_bound(*context, level);
    const double typical = typical_bound(*context, level);

    const auto relin = key_switch(*context, c, level, rk.key());
    REQUIRE(relin[0].basis() == *basis);
    REQUIRE(relin[1].form() == ring::PolyForm::ntt);
    const double relin_error = switch_error(relin, c, s, s * s);
    INFO("relinearization error " << relin_error << ", bound " << bound << ", typical " << typical);
    REQUIRE(relin_error <= bound);
    CHECK(relin_error <= typical);
    // Seeded storage expands the same a_d: the same words.
    const auto relin_seeded = key_switch(*context, c, level, rk_seeded.key());
    REQUIRE(relin_seeded[0] == relin[0]);
    REQUIRE(relin_seeded[1] == relin[1]);

    const auto galois = key_switch(*context, c, level, gk);
    const double galois_error = switch_error(galois, c, s, sigma.apply(s));
    INFO("Galois error " << galois_error);
    REQUIRE(galois_error <= bound);
    CHECK(galois_error <= typical);
  }
}

TEST_CASE("hoisted key switching (one ModUp, automorphism on read) matches key switching of sigma(c)",
          "[keyswitch]") {
  // Not word for word by design: ModUp's fast conversion lifts [c]_{Q_d} to an integer in [0, alpha Q_d), and
  // the automorphism negates coefficients, so sigma(ModUp(c)) and ModUp(sigma(c)) differ by small multiples of
  // Q_d. Both results must decrypt within the bound, and their difference within twice the bound.
  const int index = GENERATE(0, 2, 3);
  const auto context = Context::create(toy_config(index));
  INFO(context->parameters().describe());
  auto rng = cerium_test::make_rng(200 + static_cast<std::uint64_t>(index));
  INFO("test seed " << cerium_test::test_seed());
  const KeyGenerator generator(context, seed_of(2));
  const std::vector<std::int64_t> steps = {1, -3};
  const GaloisKeys gk = generator.galois_keys(steps, true);
  const RelinearizationKey rk = generator.relinearization_key();

  for (int level = 0; level <= context->max_level(); ++level) {
    INFO("level " << level);
    const auto& basis = context->q_basis(level);
    const RnsPoly s = generator.secret_key().poly_over(basis);
    const RnsPoly c = cerium_test::random_ntt_poly(basis, rng);
    const DecomposedPoly decomposed = decompose_and_mod_up(*context, c, level);
    REQUIRE(decomposed.level == level);
    REQUIRE(decomposed.digits.size() == context->digit_count(level));
    const double bound = key_switch_noise_bound(*context, level);

    // The identity automorphism reads the digits in place: word for word the plain key switch.
    const auto plain = key_switch_apply(*context, decomposed, rk.key());
    const auto identity = key_switch_apply(*context, decomposed, rk.key(), &context->automorphism(1));
    REQUIRE(identity[0] == plain[0]);
    REQUIRE(identity[1] == plain[1]);
    const auto direct_plain = key_switch(*context, c, level, rk.key());
    REQUIRE(direct_plain[0] == plain[0]);

    for (const std::uint32_t k : gk.galois_elements()) {
      INFO("Galois element " << k);
      const ring::Automorphism& sigma = context->automorphism(k);
      const RnsPoly sigma_c = sigma.apply(c);
      const RnsPoly sigma_s = sigma.apply(s);
      const auto hoisted = key_switch_apply(*context, decomposed, gk.at(k), &sigma);
      const auto direct = key_switch(*context, sigma_c, level, gk.at(k));
      const double hoisted_error = switch_error(hoisted, sigma_c, s, sigma_s);
      const double direct_error = switch_error(direct, sigma_c, s, sigma_s);
      INFO("hoisted error " << hoisted_error << ", direct error " << direct_error << ", bound " << bound);
      REQUIRE(hoisted_error <= bound);
      REQUIRE(direct_error <= bound);
      RnsPoly difference = (hoisted[1] - direct[1]) * s;
      difference += hoisted[0] - direct[0];
      REQUIRE(max_centered(difference) <= 2 * bound);
    }
  }
}

TEST_CASE("the backend's key-switch inner product then its ModDown gives key_switch_apply's words",
          "[keyswitch]") {
  // Double hoisting (circuits/raised_ciphertext.hpp) takes the sums before ModDown and ModDowns them later: one
  // pair alone must give back the ordinary key switch exactly, at every level, with and without an automorphism.
  const auto context = Context::create(toy_config(2));
  auto rng = cerium_test::make_rng(205);
  INFO("test seed " << cerium_test::test_seed());
  const KeyGenerator generator(context, seed_of(3));
  const GaloisKeys gk = generator.galois_keys(std::vector<std::int64_t>{2, -5}, false);
  const RelinearizationKey rk = generator.relinearization_key();
  const backend::CpuBackend cpu;
  for (int level = 0; level <= context->max_level(); ++level) {
    INFO("level " << level);
    const RnsPoly c = cerium_test::random_ntt_poly(context->q_basis(level), rng);
    const DecomposedPoly decomposed = cpu.mod_up(*context, c, level);
    std::vector<std::pair<const SwitchingKey*, const ring::Automorphism*>> cases{{&rk.key(), nullptr}};
    for (const std::uint32_t k : gk.galois_elements()) cases.emplace_back(&gk.at(k), &context->automorphism(k));
    for (const auto& [key, automorphism] : cases) {
      const auto sums = cpu.key_switch_inner_product(*context, decomposed, *key, automorphism);
      REQUIRE(sums[0].basis() == *context->qp_basis(level));
      REQUIRE(sums[1].form() == ring::PolyForm::ntt);
      const auto want = cpu.key_switch_apply(*context, decomposed, *key, automorphism);
      CHECK(cpu.mod_down(context->mod_down(level), sums[0]) == want[0]);
      CHECK(cpu.mod_down(context->mod_down(level), sums[1]) == want[1]);
    }
  }
}

TEST_CASE("key switching at presets::leveled_n14", "[keyswitch]") {
  const auto context = Context::create(presets::leveled_n14());
  auto rng = cerium_test::make_rng(300);
  INFO("test seed " << cerium_test::test_seed());
  const KeyGenerator generator(context, seed_of(3));
  const RelinearizationKey rk = generator.relinearization_key(KeyStorage::seeded);
  for (const int level : {context->max_level(), 0}) {
    INFO("level " << level);
    const auto& basis = context->q_basis(level);
    const RnsPoly s = generator.secret_key().poly_over(basis);
    const RnsPoly c = cerium_test::random_ntt_poly(basis, rng);
    const auto d = key_switch(*context, c, level, rk.key());
    const double error = switch_error(d, c, s, s * s);
    INFO("error " << error << ", bound " << key_switch_noise_bound(*context, level));
    REQUIRE(error <= key_switch_noise_bound(*context, level));
    CHECK(error <= typical_bound(*context, level));
  }
}

TEST_CASE("key switching rejects mismatched inputs", "[keyswitch]") {
  const auto context = Context::create(toy_config(3));
  const auto other = Context::create(toy_config(2));
  auto rng = cerium_test::make_rng(400);
  const KeyGenerator generator(context, seed_of(4));
  const KeyGenerator other_generator(other, seed_of(4));
  const RelinearizationKey rk = generator.relinearization_key();
  const RnsPoly c = cerium_test::random_ntt_poly(context->q_basis(1), rng);

  REQUIRE_THROWS_AS(key_switch(*context, c, 2, rk.key()), MismatchError);  // basis of another level
  RnsPoly coefficient_form = c.clone();
  coefficient_form.to_coeff();
  REQUIRE_THROWS_AS(key_switch(*context, coefficient_form, 1, rk.key()), MismatchError);
  REQUIRE_THROWS_AS(key_switch(*context, c, 1, other_generator.relinearization_key().key()), MismatchError);
  REQUIRE_THROWS_AS(key_switch(*context, c, 9, rk.key()), LevelError);

  DecomposedPoly decomposed = decompose_and_mod_up(*context, c, 1);
  decomposed.digits.pop_back();
  REQUIRE_THROWS_AS(key_switch_apply(*context, decomposed, rk.key()), MismatchError);
  const ring::Automorphism wrong_degree(2 * context->ring_degree(), 5);
  REQUIRE_THROWS_AS(key_switch_apply(*context, decompose_and_mod_up(*context, c, 1), rk.key(), &wrong_degree),
                    MismatchError);
}
