// Encryption and decryption on plaintexts built directly as RNS polynomials (no encoder): the decrypted noise is
// within the fresh-noise bounds, seeded ciphertexts regenerate c1, fixed seeds are reproducible, and public
// decryption floods with noise of the documented size.

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/core/error.hpp"
#include "scheme_test_support.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;
using namespace cerium::ckks;
using cerium::ring::RnsPoly;
using namespace scheme_test;

namespace {

std::vector<std::int64_t> random_message(std::size_t n, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> dist(-(std::int64_t{1} << 20), std::int64_t{1} << 20);
  std::vector<std::int64_t> m(n);
  for (auto& x : m) x = dist(rng);
  return m;
}

Plaintext make_plaintext(const ContextPtr& context, const std::vector<std::int64_t>& m, int level) {
  RnsPoly poly = RnsPoly::from_signed(context->q_basis(level), m, {.form = ring::PolyForm::ntt});
  return Plaintext(context, std::move(poly), level, std::ldexp(1.0, 20), context->ring_degree() / 2);
}

// max |decrypted - m|; +inf when a coefficient does not even fit in int64.
double max_error(const Plaintext& decrypted, const std::vector<std::int64_t>& m) {
  try {
    const auto values = centered(decrypted.poly());
    double worst = 0;
    for (std::size_t i = 0; i < m.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(values[i] - m[i])));
    return worst;
  } catch (const InvalidArgument&) {
    return std::numeric_limits<double>::infinity();
  }
}

bool same_words(const Ciphertext& a, const Ciphertext& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a.part(i) == b.part(i))) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("public- and secret-key encryptions decrypt within the fresh-noise bounds at every level",
          "[encryption]") {
  const int index = GENERATE(0, 1, 2, 3, 4);
  const auto context = Context::create(toy_config(index));
  INFO(context->parameters().describe());
  auto rng = cerium_test::make_rng(500 + static_cast<std::uint64_t>(index));
  INFO("test seed " << cerium_test::test_seed());
  const KeyGenerator generator(context, seed_of(1));
  const Encryptor public_encryptor(generator.public_key(), seed_of(2));
  const Encryptor secret_encryptor(generator.secret_key(), seed_of(3));
  const Decryptor decryptor(generator.secret_key());
  REQUIRE(public_encryptor.uses_public_key());
  REQUIRE_FALSE(secret_encryptor.uses_public_key());
  const double public_bound = fresh_noise_bound_public_key(*context);
  const double secret_bound = fresh_noise_bound_secret_key(*context);

  for (int level = 0; level <= context->max_level(); ++level) {
    INFO("level " << level);
    const auto m = random_message(context->ring_degree(), rng);
    const Plaintext plaintext = make_plaintext(context, m, level);

    const Ciphertext by_public = public_encryptor.encrypt(plaintext);
    REQUIRE(by_public.size() == 2);
    REQUIRE(by_public.level() == level);
    REQUIRE(by_public.scale() == plaintext.scale());
    REQUIRE(by_public.slots() == plaintext.slots());
    REQUIRE(by_public.part(0).basis() == *context->q_basis(level));
    REQUIRE_FALSE(by_public.c1_seed().has_value());
    const Plaintext decrypted = decryptor.decrypt(by_public);
    REQUIRE(decrypted.level() == level);
    REQUIRE(decrypted.scale() == plaintext.scale());
    REQUIRE(decrypted.slots() == plaintext.slots());
    const double public_error = max_error(decrypted, m);
    INFO("public-key noise " << public_error << " (bound " << public_bound << ")");
    REQUIRE(public_error <= public_bound);
    REQUIRE(public_error >= 1);  // noise was added

    const Ciphertext by_secret = secret_encryptor.encrypt(plaintext);
    const double secret_error = max_error(decryptor.decrypt(by_secret), m);
    INFO("secret-key noise " << secret_error << " (bound " << secret_bound << ")");
    REQUIRE(secret_error <= secret_bound);
    REQUIRE(secret_error >= 1);
  }
  REQUIRE(public_encryptor.encryptions() == static_cast<std::uint64_t>(context->max_level() + 1));
}

TEST_CASE("a secret-key ciphertext records the seed its c1 expands from", "[encryption]") {
  const auto context = Context::create(toy_config(1));
  auto rng = cerium_test::make_rng(600);
  const KeyGenerator generator(context, seed_of(4));
  const Encryptor encryptor(generator.secret_key(), seed_of(5));
  for (const int level : {context->max_level(), 1}) {
    const Ciphertext ct = encryptor.encrypt(make_plaintext(context, random_message(context->ring_degree(), rng), level));
    REQUIRE(ct.c1_seed().has_value());
    const PolySeed& seed = *ct.c1_seed();
    REQUIRE(ct.part(1) == expand_uniform(context->q_basis(level), seed.seed, seed.stream));
    // The seed is public: derived, never the encryptor's master seed, and distinct from the key generator's
    // public seed even when one master seed serves both.
    REQUIRE_FALSE(seed.seed == seed_of(5));
    const Encryptor same_master(generator.secret_key(), seed_of(4));
    REQUIRE_FALSE(same_master.encrypt(make_plaintext(context, random_message(context->ring_degree(), rng), level))
                      .c1_seed()
                      ->seed == generator.uniform_seed());
    // A copy keeps the seed.
    REQUIRE(ct.clone().c1_seed().has_value());
  }
}

TEST_CASE("fixed seeds give identical ciphertexts; different seeds do not", "[encryption]") {
  const auto context = Context::create(toy_config(2));
  auto rng = cerium_test::make_rng(700);
  const KeyGenerator generator(context, seed_of(6));
  const PublicKey pk = generator.public_key();
  const Plaintext plaintext = make_plaintext(context, random_message(context->ring_degree(), rng), 2);

  const Encryptor a(pk, seed_of(7)), b(pk, seed_of(7)), c(pk, seed_of(8));
  const Ciphertext a1 = a.encrypt(plaintext), a2 = a.encrypt(plaintext);
  const Ciphertext b1 = b.encrypt(plaintext), b2 = b.encrypt(plaintext);
  REQUIRE(same_words(a1, b1));
  REQUIRE(same_words(a2, b2));
  REQUIRE_FALSE(same_words(a1, a2));  // each encryption draws fresh streams
  REQUIRE_FALSE(same_words(a1, c.encrypt(plaintext)));

  const Encryptor s(generator.secret_key(), seed_of(9)), t(generator.secret_key(), seed_of(9));
  REQUIRE(same_words(s.encrypt(plaintext), t.encrypt(plaintext)));
  // Fresh OS seeds differ.
  const Encryptor fresh1(pk), fresh2(pk);
  REQUIRE_FALSE(same_words(fresh1.encrypt(plaintext), fresh2.encrypt(plaintext)));
}

TEST_CASE("a 3-part ciphertext decrypts as c0 + c1 s + c2 s^2", "[encryption]") {
  const auto context = Context::create(toy_config(3));
  auto rng = cerium_test::make_rng(800);
  const KeyGenerator generator(context, seed_of(10));
  const Decryptor decryptor(generator.secret_key());
  const int level = 2;
  const auto& basis = context->q_basis(level);
  const auto m = random_message(context->ring_degree(), rng);
  const RnsPoly s = generator.secret_key().poly_over(basis);
  RnsPoly c1 = expand_uniform(basis, seed_of(11), 0);
  RnsPoly c2 = expand_uniform(basis, seed_of(11), 1);
  RnsPoly c0 = RnsPoly::from_signed(basis, m, {.form = ring::PolyForm::ntt});
  c0 -= c1 * s;
  c0 -= c2 * s * s;
  std::vector<RnsPoly> parts;
  parts.push_back(std::move(c0));
  parts.push_back(std::move(c1));
  parts.push_back(std::move(c2));
  const Ciphertext ct(context, std::move(parts), level, 1.0, 1);
  REQUIRE(max_error(decryptor.decrypt(ct), m) == 0);
}

TEST_CASE("public decryption floods with noise of standard deviation 2^(s/2) sqrt(q) B", "[encryption]") {
  const auto context = Context::create(toy_config(2));  // N = 4096
  auto rng = cerium_test::make_rng(900);
  INFO("test seed " << cerium_test::test_seed());
  const KeyGenerator generator(context, seed_of(12));
  const Encryptor encryptor(generator.public_key(), seed_of(13));
  const Decryptor decryptor(generator.secret_key(), seed_of(14));
  const auto m = random_message(context->ring_degree(), rng);
  const NoiseFlooding flooding{.noise_bound = fresh_noise_bound_public_key(*context)};
  const double sigma = flooding_sigma(flooding);
  REQUIRE(std::abs(sigma / (std::exp2(15.0) * 32.0 * flooding.noise_bound) - 1) < 1e-12);

  for (const int level : {0, context->max_level()}) {
    INFO("level " << level);
    const Ciphertext ct = encryptor.encrypt(make_plaintext(context, m, level));
    const auto plain = centered(decryptor.decrypt(ct).poly());
    double sum = 0, sum_sq = 0, worst = 0;
    std::size_t count = 0;
    for (int query = 0; query < 4; ++query) {
      const Plaintext flooded = decryptor.decrypt_public(ct, flooding);
      REQUIRE(flooded.level() == level);
      REQUIRE(flooded.poly().form() == ring::PolyForm::ntt);
      const auto values = centered(flooded.poly());
      for (std::size_t i = 0; i < values.size(); ++i) {
        const double x = static_cast<double>(values[i] - plain[i]);
        sum += x;
        sum_sq += x * x;
        worst = std::max(worst, std::abs(static_cast<double>(values[i] - m[i])));
        ++count;
      }
    }
    const double mean = sum / static_cast<double>(count);
    const double sd = std::sqrt(sum_sq / static_cast<double>(count) - mean * mean);
    INFO("flood sd " << sd << " vs sigma " << sigma << ", mean " << mean << ", worst " << worst);
    REQUIRE(std::abs(sd / sigma - 1) < 0.10);
    REQUIRE(std::abs(mean) < 6 * sigma / std::sqrt(static_cast<double>(count)));
    REQUIRE(worst <= flooding.noise_bound + 9 * sigma);  // still decrypts: the documented tail and B
  }
  REQUIRE(decryptor.public_decryptions() == 8);

  const Ciphertext ct = encryptor.encrypt(make_plaintext(context, m, 0));
  REQUIRE_THROWS_AS(decryptor.decrypt_public(ct, NoiseFlooding{.noise_bound = 0}), InvalidArgument);
  REQUIRE_THROWS_AS(decryptor.decrypt_public(ct, NoiseFlooding{.noise_bound = -1}), InvalidArgument);
  REQUIRE_THROWS_AS(decryptor.decrypt_public(ct, NoiseFlooding{.noise_bound = 10, .query_budget = 0}),
                    InvalidArgument);
  // Too much flood for level 0 of a one-prime base.
  const auto small = Context::create(
      {.log_n = 10, .levels = 1, .level_width = 1, .base_primes = 1, .dnum = 1, .insecure_opt_out = true});
  const KeyGenerator small_generator(small, seed_of(15));
  const Encryptor small_encryptor(small_generator.secret_key(), seed_of(16));
  const Ciphertext small_ct = small_encryptor.encrypt(make_plaintext(small, random_message(small->ring_degree(), rng), 0));
  REQUIRE_THROWS_AS(Decryptor(small_generator.secret_key()).decrypt_public(small_ct, NoiseFlooding{.noise_bound = 1e6}),
                    LevelError);
}

TEST_CASE("encryption and decryption reject objects of another context", "[encryption]") {
  const auto context = Context::create(toy_config(0));
  const auto other = Context::create(toy_config(3));
  auto rng = cerium_test::make_rng(1000);
  const KeyGenerator generator(context, seed_of(17));
  const KeyGenerator other_generator(other, seed_of(18));
  const Plaintext foreign = make_plaintext(other, random_message(other->ring_degree(), rng), 0);
  REQUIRE_THROWS_AS(Encryptor(generator.public_key(), seed_of(19)).encrypt(foreign), MismatchError);
  REQUIRE_THROWS_AS(Encryptor(generator.secret_key(), seed_of(19)).encrypt(foreign), MismatchError);
  REQUIRE_THROWS_AS(Encryptor(generator.secret_key()).encrypt(Plaintext()), MismatchError);

  const Ciphertext foreign_ct = Encryptor(other_generator.secret_key(), seed_of(20)).encrypt(foreign);
  const Decryptor decryptor(generator.secret_key());
  REQUIRE_THROWS_AS(decryptor.decrypt(foreign_ct), MismatchError);
  REQUIRE_THROWS_AS(decryptor.decrypt_public(foreign_ct, NoiseFlooding{.noise_bound = 19}), MismatchError);
  REQUIRE_THROWS_AS(decryptor.decrypt(Ciphertext()), MismatchError);
}

TEST_CASE("encryption at presets::leveled_n14", "[encryption]") {
  const auto context = Context::create(presets::leveled_n14());
  auto rng = cerium_test::make_rng(1100);
  const KeyGenerator generator(context, seed_of(21));
  const Encryptor encryptor(generator.public_key(), seed_of(22));
  const Decryptor decryptor(generator.secret_key());
  const auto m = random_message(context->ring_degree(), rng);
  const Ciphertext ct = encryptor.encrypt(make_plaintext(context, m, context->max_level()));
  const double error = max_error(decryptor.decrypt(ct), m);
  INFO("public-key noise " << error);
  REQUIRE(error <= fresh_noise_bound_public_key(*context));
}
