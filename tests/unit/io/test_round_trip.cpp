// Round trips of every serializable type at two toy parameter sets: the loaded object equals the saved one word
// for word, seeded forms stay seeded (about half the size) and loaded ciphertexts decrypt to the same values.

#include <filesystem>

#include "io_test_support.hpp"

using namespace io_test;

namespace {

template <class T>
T round_trip(const T& object, const ContextPtr& context, std::size_t* size = nullptr) {
  const Bytes bytes = io::to_bytes(object);
  if (size != nullptr) *size = bytes.size();
  return io::from_bytes<T>(bytes, context);
}

void require_same_key(const SwitchingKey& a, const SwitchingKey& b) {
  REQUIRE(a.digit_count() == b.digit_count());
  REQUIRE(a.storage() == b.storage());
  REQUIRE(a.seed() == b.seed());
  REQUIRE(a.base_stream() == b.base_stream());
  for (std::size_t d = 0; d < a.digit_count(); ++d) {
    REQUIRE(a.b(d) == b.b(d));
    REQUIRE(a.a(d) == b.a(d));
  }
}

}  // namespace

TEST_CASE("parameters round-trip and re-derive their primes", "[io]") {
  const Parameters params(toy(GENERATE(0, 1)));
  const Parameters loaded = round_trip(params, nullptr);
  REQUIRE(loaded.fingerprint() == params.fingerprint());
  REQUIRE(std::vector<std::uint32_t>(loaded.q_primes().begin(), loaded.q_primes().end()) ==
          std::vector<std::uint32_t>(params.q_primes().begin(), params.q_primes().end()));
  REQUIRE(loaded.config().dnum == params.config().dnum);
  REQUIRE(loaded.config().insecure_opt_out);
}

TEST_CASE("parameters with narrow levels round-trip", "[io]") {
  CkksConfig config = toy(1);
  config.narrow_levels = 2;
  const Parameters params(config);
  const Parameters loaded = round_trip(params, nullptr);
  CHECK(loaded.fingerprint() == params.fingerprint());
  CHECK(loaded.config().narrow_levels == 2);
  CHECK(loaded.config().narrow_prime_bits == params.config().narrow_prime_bits);
  CHECK(loaded.limbs_at(loaded.max_level()) == params.limbs_at(params.max_level()));
}

TEST_CASE("plaintexts and ciphertexts round-trip word for word and decrypt the same", "[io]") {
  const World world(toy(GENERATE(0, 1)));
  auto rng = cerium_test::make_rng(1);
  INFO("seed " << cerium_test::test_seed());
  const std::size_t slots = world.context->ring_degree() / 2 >> std::uniform_int_distribution<int>(0, 3)(rng);
  const int level = std::uniform_int_distribution<int>(0, world.context->max_level())(rng);
  const Plaintext pt = world.plaintext(rng, level, slots);

  const Plaintext pt2 = round_trip(pt, world.context);
  REQUIRE(pt2.poly() == pt.poly());
  REQUIRE(pt2.level() == pt.level());
  REQUIRE(pt2.scale() == pt.scale());
  REQUIRE(pt2.slots() == pt.slots());

  for (const bool secret : {false, true}) {
    const Ciphertext ct = (secret ? world.secret_encryptor : world.public_encryptor).encrypt(pt);
    REQUIRE(ct.c1_seed().has_value() == secret);
    std::size_t size = 0;
    const Ciphertext ct2 = round_trip(ct, world.context, &size);
    REQUIRE(ct2.size() == ct.size());
    for (std::size_t i = 0; i < ct.size(); ++i) REQUIRE(ct2.part(i) == ct.part(i));
    REQUIRE(ct2.level() == ct.level());
    REQUIRE(ct2.scale() == ct.scale());
    REQUIRE(ct2.slots() == ct.slots());
    REQUIRE(ct2.c1_seed().has_value() == secret);
    REQUIRE(world.decryptor.decrypt(ct2).poly() == world.decryptor.decrypt(ct).poly());
    const auto want = world.encoder.decode(pt);
    const auto got = world.encoder.decode(world.decryptor.decrypt(ct2));
    for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(std::abs(got[i] - want[i]) < 1e-3);
    if (secret) {
      // The same ciphertext without its seed: the seeded form is about half of it.
      Ciphertext unseeded = ct.clone();
      unseeded.set_c1_seed(std::nullopt);
      const double full = static_cast<double>(io::to_bytes(unseeded).size());
      CHECK(size < 0.52 * full);
      CHECK(size > 0.48 * full);
    }
  }

  // A 3-part ciphertext (as after a tensor product) and one whose c1 changed after its seed was recorded.
  Ciphertext ct = world.secret_encryptor.encrypt(pt);
  std::vector<ring::RnsPoly> parts;
  for (std::size_t i = 0; i < 2; ++i) parts.push_back(ct.part(i).clone());
  parts.push_back(ct.part(0).clone());
  const Ciphertext three(world.context, std::move(parts), ct.level(), ct.scale(), ct.slots());
  const Ciphertext three2 = round_trip(three, world.context);
  REQUIRE(three2.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) REQUIRE(three2.part(i) == three.part(i));
  ct.part(1).negate();  // the recorded seed is stale now: it must not be stored
  const Ciphertext stale = round_trip(ct, world.context);
  REQUIRE(stale.part(1) == ct.part(1));
  REQUIRE_FALSE(stale.c1_seed().has_value());
}

TEST_CASE("keys round-trip word for word; seeded switching keys stay seeded", "[io]") {
  const World world(toy(GENERATE(0, 1)));
  const SecretKey& sk = world.keygen.secret_key();
  const SecretKey sk2 = round_trip(sk, world.context);
  REQUIRE(sk2.poly() == sk.poly());
  REQUIRE(sk2.coefficients() == sk.coefficients());

  const PublicKey pk = world.keygen.public_key();
  const PublicKey pk2 = round_trip(pk, world.context);
  REQUIRE(pk2.b() == pk.b());
  REQUIRE(pk2.a() == pk.a());

  std::size_t expanded_size = 0, seeded_size = 0;
  const RelinearizationKey rk = world.keygen.relinearization_key();
  require_same_key(round_trip(rk, world.context, &expanded_size).key(), rk.key());
  const RelinearizationKey rk_seeded = world.keygen.relinearization_key(KeyStorage::seeded);
  const RelinearizationKey rk_seeded2 = round_trip(rk_seeded, world.context, &seeded_size);
  require_same_key(rk_seeded2.key(), rk_seeded.key());
  REQUIRE(rk_seeded2.key().stored_a(0) == nullptr);
  CHECK(seeded_size < 0.52 * static_cast<double>(expanded_size));

  for (const KeyStorage storage : {KeyStorage::expanded, KeyStorage::seeded}) {
    const GaloisKeys gk = world.keygen.galois_keys({1, 2, -1}, /*conjugation=*/true, storage);
    const GaloisKeys gk2 = round_trip(gk, world.context);
    REQUIRE(gk2.galois_elements() == gk.galois_elements());
    for (const std::uint32_t k : gk.galois_elements()) require_same_key(gk2.at(k), gk.at(k));
  }
  const GaloisKeys none = round_trip(GaloisKeys(world.context), world.context);
  REQUIRE(none.size() == 0);
}

TEST_CASE("files hold exactly one object", "[io]") {
  const World world(toy(0));
  auto rng = cerium_test::make_rng(2);
  const Ciphertext ct = world.secret_encryptor.encrypt(world.plaintext(rng, 1, 4));
  const auto path = std::filesystem::temp_directory_path() /
                    ("cerium_io_test_" + std::to_string(cerium_test::test_seed()) + ".bin");
  io::save_file(path, ct);
  const Ciphertext loaded = io::load_file<Ciphertext>(path, world.context);
  REQUIRE(loaded.part(0) == ct.part(0));
  REQUIRE(loaded.part(1) == ct.part(1));
  std::filesystem::remove(path);
  REQUIRE_THROWS_AS(io::load_file<Ciphertext>(path, world.context), SystemError);
}

TEST_CASE("a stream holds several objects one after another", "[io]") {
  const World world(toy(0));
  std::stringstream stream(std::ios::in | std::ios::out | std::ios::binary);
  io::save(stream, world.context->parameters());
  io::save(stream, world.keygen.public_key());
  io::save(stream, world.keygen.secret_key());
  const Parameters params = io::load_parameters(stream);
  const auto context = Context::create(params);
  REQUIRE(io::load_public_key(stream, context).b() == world.keygen.public_key().b());
  REQUIRE(io::load_secret_key(stream, context).poly() == world.keygen.secret_key().poly());
}
