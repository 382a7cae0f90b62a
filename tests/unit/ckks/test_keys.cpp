// Keys and key generation: shapes, determinism, seeded storage, and the key equations checked in coefficient
// form with an independent (GMP) gadget.

#include <gmpxx.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/core/error.hpp"
#include "cerium/math/sampler.hpp"
#include "cerium/ring/automorphism.hpp"
#include "scheme_test_support.hpp"
#include "support/catch.hpp"

using namespace cerium;
using namespace cerium::ckks;
using cerium::ring::RnsPoly;
using namespace scheme_test;

namespace {

double max_abs(const std::vector<std::int64_t>& v) {
  double m = 0;
  for (auto x : v) m = std::max(m, std::abs(static_cast<double>(x)));
  return m;
}

double max_centered(const RnsPoly& x) {
  try {
    return max_abs(centered(x));
  } catch (const InvalidArgument&) {
    return std::numeric_limits<double>::infinity();
  }
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// [P g_d]_{p} for every prime p of the key basis, from the definition g_d = (Q/Q_d) [(Q/Q_d)^{-1}]_{Q_d}, in GMP.
std::vector<std::uint32_t> scaled_gadget(const Context& context, std::size_t digit) {
  const auto& params = context.parameters();
  const auto q = params.q_primes();
  const std::size_t first = digit * params.alpha();
  const std::size_t last = std::min(first + params.alpha(), q.size());
  mpz_class big_q = 1, q_d = 1, p = 1;
  for (std::size_t i = 0; i < q.size(); ++i) {
    big_q *= q[i];
    if (i >= first && i < last) q_d *= q[i];
  }
  for (auto x : params.p_primes()) p *= x;
  const mpz_class q_hat = big_q / q_d;
  mpz_class inverse;
  mpz_invert(inverse.get_mpz_t(), q_hat.get_mpz_t(), q_d.get_mpz_t());
  const mpz_class pg = p * q_hat * inverse;
  std::vector<std::uint32_t> residues;
  for (auto prime : context.key_basis()->primes()) {
    residues.push_back(static_cast<std::uint32_t>(mpz_fdiv_ui(pg.get_mpz_t(), prime)));
  }
  return residues;
}

// e_d = b_d + a_d s - P g_d s' for every digit; returns the largest |e_d| coefficient (and requires e_d != 0).
double switching_key_error(const Context& context, const SwitchingKey& key, const RnsPoly& s, const RnsPoly& s_from) {
  double worst = 0;
  for (std::size_t d = 0; d < key.digit_count(); ++d) {
    RnsPoly gadget_term = s_from.clone();
    gadget_term.multiply_scalar(scaled_gadget(context, d));
    RnsPoly e = key.b(d) + key.a(d) * s;
    e -= gadget_term;
    const double m = max_centered(e);
    INFO("digit " << d);
    CHECK(m >= 1);  // an error was added
    worst = std::max(worst, m);
  }
  return worst;
}

}  // namespace

TEST_CASE("secret keys are ternary (or of fixed Hamming weight) and match their polynomial", "[keys]") {
  const int index = GENERATE(0, 1, 2, 3);
  const auto context = Context::create(toy_config(index));
  const KeyGenerator generator(context, seed_of(1));
  const SecretKey& sk = generator.secret_key();
  REQUIRE(sk.poly().basis() == *context->key_basis());
  REQUIRE(sk.poly().form() == ring::PolyForm::ntt);
  REQUIRE(sk.coefficients().size() == context->ring_degree());
  const auto values = centered(sk.poly());
  std::size_t counts[3] = {0, 0, 0};
  for (std::size_t i = 0; i < values.size(); ++i) {
    REQUIRE(values[i] == sk.coefficients()[i]);
    REQUIRE(std::abs(values[i]) <= 1);
    ++counts[values[i] + 1];
  }
  for (auto count : counts) {  // about N/3 each
    CHECK(static_cast<double>(count) > 0.25 * static_cast<double>(values.size()));
  }
  // poly_over picks the key's limbs by prime.
  const auto& q0 = context->q_basis(0);
  REQUIRE(centered(sk.poly_over(q0)) == values);

  const auto sparse = Context::create(sparse_config());
  const KeyGenerator sparse_generator(sparse, seed_of(2));
  const auto& c = sparse_generator.secret_key().coefficients();
  REQUIRE(std::count_if(c.begin(), c.end(), [](std::int8_t x) { return x != 0; }) == 64);
}

TEST_CASE("keys have the documented shapes", "[keys]") {
  const auto context = Context::create(toy_config(GENERATE(0, 1, 2, 3)));
  const std::size_t n = context->ring_degree();
  const KeyGenerator generator(context, seed_of(3));

  const PublicKey pk = generator.public_key();
  REQUIRE(pk.b().basis() == *context->q_basis(context->max_level()));
  REQUIRE(pk.a().basis() == *context->q_basis(context->max_level()));
  REQUIRE(pk.b().form() == ring::PolyForm::ntt);

  const RelinearizationKey rk = generator.relinearization_key();
  REQUIRE(rk.key().digit_count() == context->digit_count(context->max_level()));
  REQUIRE(rk.key().digit_count() == context->parameters().digits_at(context->max_level()));
  for (std::size_t d = 0; d < rk.key().digit_count(); ++d) {
    REQUIRE(rk.key().b(d).basis() == *context->key_basis());
    REQUIRE(rk.key().stored_a(d) != nullptr);
    REQUIRE(rk.key().stored_a(d)->basis() == *context->key_basis());
  }

  // Steps 0 (identity), 1 + N/2 (same element as 1) and duplicates give no extra keys.
  std::vector<ProgressEvent> events;
  const std::vector<std::int64_t> steps = {1, -1, 3, 0, 1 + static_cast<std::int64_t>(n / 2), 3};
  const GaloisKeys gk = generator.galois_keys(steps, true, KeyStorage::expanded, [&](const ProgressEvent& e) {
    events.push_back(e);
  });
  REQUIRE(gk.size() == 4);
  REQUIRE(gk.contains(ring::rotation_galois_element(1, n)));
  REQUIRE(gk.contains(ring::rotation_galois_element(-1, n)));
  REQUIRE(gk.contains(ring::rotation_galois_element(3, n)));
  REQUIRE(gk.contains(ring::conjugation_galois_element(n)));
  REQUIRE_FALSE(gk.contains(1));
  REQUIRE(events.size() == 5);  // the start, then one per key
  REQUIRE(events.back().done == 4);
  REQUIRE(events.back().total == 4);
  REQUIRE(gk.galois_elements().size() == 4);
}

TEST_CASE("a fixed seed gives the same key words; another seed does not", "[keys]") {
  const auto context = Context::create(toy_config(GENERATE(1, 2)));
  const KeyGenerator a(context, seed_of(7));
  const KeyGenerator b(context, seed_of(7));
  const KeyGenerator other(context, seed_of(8));
  REQUIRE(a.secret_key().coefficients() == b.secret_key().coefficients());
  REQUIRE(a.secret_key().poly() == b.secret_key().poly());
  REQUIRE_FALSE(a.secret_key().poly() == other.secret_key().poly());

  const PublicKey pa = a.public_key(), pb = b.public_key();
  REQUIRE(pa.b() == pb.b());
  REQUIRE(pa.a() == pb.a());
  REQUIRE_FALSE(pa.a() == other.public_key().a());

  // The order of calls does not matter: keys are functions of the seed and the key's identity.
  const GaloisKeys ga = a.galois_keys({5, 2});
  const RelinearizationKey ra = a.relinearization_key();
  const RelinearizationKey rb = b.relinearization_key();
  const GaloisKeys gb = b.galois_keys({2, 5});
  for (std::size_t d = 0; d < ra.key().digit_count(); ++d) {
    REQUIRE(ra.key().b(d) == rb.key().b(d));
    REQUIRE(ra.key().a(d) == rb.key().a(d));
  }
  for (auto k : ga.galois_elements()) {
    REQUIRE(ga.at(k).b(0) == gb.at(k).b(0));
    REQUIRE(ga.at(k).a(0) == gb.at(k).a(0));
  }
  // Many keys at once are made on every core: the words of each made alone.
  const std::vector<std::int64_t> many = {1, 2, 3, 4, 5, 6, 7, 9, 11, 13, -1, -3};
  const GaloisKeys batch = a.galois_keys(many, true);
  REQUIRE(batch.size() == many.size() + 1);
  for (auto k : batch.galois_elements()) {
    const SwitchingKey alone = b.galois_key(k);
    for (std::size_t d = 0; d < alone.digit_count(); ++d) {
      REQUIRE(batch.at(k).b(d) == alone.b(d));
      REQUIRE(batch.at(k).a(d) == alone.a(d));
    }
  }
  // A generator built on the secret key with the same seed reproduces the keys too.
  const KeyGenerator again(a.secret_key().clone(), seed_of(7));
  REQUIRE(again.public_key().b() == pa.b());
}

TEST_CASE("seeded and expanded storage hold the same uniform halves", "[keys]") {
  const auto context = Context::create(toy_config(GENERATE(0, 1, 2, 3)));
  const KeyGenerator generator(context, seed_of(11));
  const RelinearizationKey expanded = generator.relinearization_key(KeyStorage::expanded);
  const RelinearizationKey seeded = generator.relinearization_key(KeyStorage::seeded);
  REQUIRE(seeded.key().storage() == KeyStorage::seeded);
  REQUIRE(seeded.key().seed().has_value());
  REQUIRE(*seeded.key().seed() == generator.uniform_seed());
  std::vector<std::uint32_t> limb(context->ring_degree());
  for (std::size_t d = 0; d < expanded.key().digit_count(); ++d) {
    REQUIRE(seeded.key().stored_a(d) == nullptr);
    const RnsPoly a = seeded.key().a(d);
    REQUIRE(a == *expanded.key().stored_a(d));
    REQUIRE(a == expand_uniform(context->key_basis(), generator.uniform_seed(), seeded.key().base_stream() + d));
    REQUIRE(seeded.key().b(d) == expanded.key().b(d));
    for (std::size_t j : {std::size_t{0}, context->key_basis()->size() - 1}) {
      seeded.key().a_limb(d, j, limb);
      REQUIRE(std::equal(limb.begin(), limb.end(), a.limb(j).begin()));
    }
  }
  // Clones of a seeded key stay seeded.
  const SwitchingKey copy = seeded.key().clone();
  REQUIRE(copy.stored_a(0) == nullptr);
  REQUIRE(copy.a(0) == seeded.key().a(0));
}

TEST_CASE("expand_uniform: independent limbs, prefix property, range checks", "[keys]") {
  const auto context = Context::create(toy_config(1));
  const auto& key_basis = context->key_basis();
  const math::Seed seed = seed_of(21);
  const RnsPoly full = expand_uniform(key_basis, seed, 5);
  REQUIRE(full.form() == ring::PolyForm::ntt);
  const RnsPoly prefix = expand_uniform(context->q_basis(0), seed, 5);
  for (std::size_t i = 0; i < prefix.limb_count(); ++i) {
    REQUIRE(std::equal(prefix.limb(i).begin(), prefix.limb(i).end(), full.limb(i).begin()));
  }
  REQUIRE_FALSE(expand_uniform(key_basis, seed, 6) == full);
  REQUIRE_FALSE(expand_uniform(key_basis, seed_of(22), 5) == full);
  // Uniform over each prime: values below q, mean near q/2.
  for (std::size_t i = 0; i < full.limb_count(); ++i) {
    const double q = key_basis->prime(i);
    double sum = 0;
    for (auto x : full.limb(i)) {
      REQUIRE(x < key_basis->prime(i));
      sum += x;
    }
    const double mean = sum / static_cast<double>(full.n());
    CHECK(std::abs(mean / q - 0.5) < 0.05);
  }
  REQUIRE_THROWS_AS(expand_uniform(key_basis, seed, max_uniform_stream), InvalidArgument);
}

TEST_CASE("the public key satisfies b + a s = e with a small Gaussian e", "[keys]") {
  const int index = GENERATE(0, 1, 2, 3);
  const auto context = Context::create(toy_config(index));
  const KeyGenerator generator(context, seed_of(31));
  const PublicKey pk = generator.public_key();
  const auto& q_top = context->q_basis(context->max_level());
  const auto e = centered(pk.b() + pk.a() * generator.secret_key().poly_over(q_top));
  double sum_sq = 0;
  for (auto x : e) sum_sq += static_cast<double>(x) * static_cast<double>(x);
  const double sd = std::sqrt(sum_sq / static_cast<double>(e.size()));
  INFO("max |e| = " << max_abs(e) << ", sd = " << sd);
  REQUIRE(max_abs(e) <= math::gaussian_tail_bound);  // 6 sigma, the sampler's cut
  REQUIRE(max_abs(e) >= 1);
  CHECK(std::abs(sd / math::gaussian_sigma - 1) < 0.15);
}

TEST_CASE("switching keys satisfy b_d + a_d s - P g_d s' = e_d with small e_d", "[keys]") {
  SECTION("relinearization and Galois keys for each toy parameter set") {
    const int index = GENERATE(0, 1, 2, 3);
    const auto context = Context::create(toy_config(index));
    INFO(context->parameters().describe());
    const KeyGenerator generator(context, seed_of(41));
    const RnsPoly& s = generator.secret_key().poly();
    for (const KeyStorage storage : {KeyStorage::expanded, KeyStorage::seeded}) {
      const RelinearizationKey rk = generator.relinearization_key(storage);
      REQUIRE(switching_key_error(*context, rk.key(), s, s * s) <= math::gaussian_tail_bound);
    }
    const std::uint32_t k = ring::rotation_galois_element(3, context->ring_degree());
    const SwitchingKey gk = generator.galois_key(k);
    const RnsPoly rotated = context->automorphism(k).apply(s);
    REQUIRE(switching_key_error(*context, gk, s, rotated) <= math::gaussian_tail_bound);
  }
  SECTION("a general switching key from another secret, with a sparse secret") {
    const auto context = Context::create(sparse_config());
    KeyGenerator generator(context, seed_of(42));
    const KeyGenerator other(context, seed_of(43));
    const RnsPoly& s = generator.secret_key().poly();
    const RnsPoly& s_other = other.secret_key().poly();
    const SwitchingKey first = generator.switching_key(s_other);
    const SwitchingKey second = generator.switching_key(s_other, KeyStorage::seeded);
    REQUIRE(switching_key_error(*context, first, s, s_other) <= math::gaussian_tail_bound);
    REQUIRE(switching_key_error(*context, second, s, s_other) <= math::gaussian_tail_bound);
    // Distinct keys draw from distinct streams.
    REQUIRE(first.base_stream() != second.base_stream());
    REQUIRE_FALSE(first.a(0) == second.a(0));
    REQUIRE(first.base_stream() != generator.relinearization_key().key().base_stream());
  }
}

TEST_CASE("a missing rotation key names the step and the Galois element", "[keys]") {
  const auto context = Context::create(toy_config(0));
  const std::size_t n = context->ring_degree();
  const KeyGenerator generator(context, seed_of(51));
  const GaloisKeys gk = generator.galois_keys({1});
  const std::uint32_t k3 = ring::rotation_galois_element(3, n);
  REQUIRE(k3 == 125);
  REQUIRE_THROWS_AS(gk.at(k3, 3), MissingKeyError);
  std::string message;
  try {
    gk.at(k3, 3);
  } catch (const MissingKeyError& e) {
    message = e.what();
  }
  INFO(message);
  CHECK(contains(message, "step 3"));
  CHECK(contains(message, "Galois element 125"));
  CHECK(contains(message, "KeyGenerator::galois_keys({3"));
  try {  // the step is recovered from the element when not given
    gk.at(k3);
  } catch (const MissingKeyError& e) {
    message = e.what();
  }
  CHECK(contains(message, "step 3"));
  try {
    gk.at(ring::conjugation_galois_element(n));
  } catch (const MissingKeyError& e) {
    message = e.what();
  }
  CHECK(contains(message, "conjugation"));
  REQUIRE_NOTHROW(gk.at(ring::rotation_galois_element(1, n), 1));
}

TEST_CASE("key constructors reject wrong contexts, bases and forms", "[keys]") {
  const auto context = Context::create(toy_config(0));
  const auto other = Context::create(toy_config(3));
  const KeyGenerator generator(context, seed_of(61));
  const SecretKey& sk = generator.secret_key();
  const std::vector<std::int8_t> coefficients = sk.coefficients();

  REQUIRE_THROWS_AS(SecretKey(nullptr, sk.poly().clone(), coefficients), MismatchError);
  REQUIRE_THROWS_AS(SecretKey(other, sk.poly().clone(), coefficients), MismatchError);
  RnsPoly coefficient_form = sk.poly().clone();
  coefficient_form.to_coeff();
  REQUIRE_THROWS_AS(SecretKey(context, std::move(coefficient_form), coefficients), MismatchError);
  REQUIRE_THROWS_AS(SecretKey(context, sk.poly_over(context->q_basis(0)), coefficients), MismatchError);
  std::vector<std::int8_t> wrong = coefficients;
  wrong[0] = 2;
  REQUIRE_THROWS_AS(SecretKey(context, sk.poly().clone(), wrong), MismatchError);

  const PublicKey pk = generator.public_key();
  REQUIRE_THROWS_AS(PublicKey(context, sk.poly().clone(), pk.a().clone()), MismatchError);  // key basis, not Q
  REQUIRE_THROWS_AS(PublicKey(nullptr, pk.b().clone(), pk.a().clone()), MismatchError);

  const RelinearizationKey rk = generator.relinearization_key();
  std::vector<std::array<RnsPoly, 2>> no_digits;
  REQUIRE_THROWS_AS(SwitchingKey(context, std::move(no_digits), KeyStorage::expanded, std::nullopt, 0), MismatchError);
  std::vector<std::array<RnsPoly, 2>> unseeded;
  unseeded.push_back({rk.key().b(0).clone(), RnsPoly()});
  REQUIRE_THROWS_AS(SwitchingKey(context, std::move(unseeded), KeyStorage::seeded, std::nullopt, 0), MismatchError);

  GaloisKeys foreign(other);
  REQUIRE_THROWS_AS(foreign.insert(5, rk.key().clone()), MismatchError);
  KeyGenerator mutable_generator(context, seed_of(62));
  RnsPoly wrong_basis = sk.poly_over(context->q_basis(1));
  REQUIRE_THROWS_AS(mutable_generator.switching_key(wrong_basis), MismatchError);
}
