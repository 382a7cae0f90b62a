// Every load path rejects corrupted input with a SerializationError that says what was wrong: header fields,
// truncation at every byte, trailing bytes, oversized counts (without allocating), out-of-range words and
// fields out of their bounds.

#include <cmath>
#include <limits>

#include "io_test_support.hpp"

using namespace io_test;

namespace {

// Payload offsets (format.hpp): the header is 24 bytes.
constexpr std::size_t payload = io::header_size;

struct Objects {
  World world;
  Plaintext plaintext;
  Ciphertext seeded, unseeded;
  explicit Objects(std::mt19937_64& rng)
      : world(toy(0)),
        plaintext(world.plaintext(rng, 0, 8)),
        seeded(world.secret_encryptor.encrypt(plaintext)),
        unseeded(world.public_encryptor.encrypt(plaintext)) {}
};

}  // namespace

TEST_CASE("every load path rejects corrupted headers, truncation and trailing bytes", "[io]") {
  auto rng = cerium_test::make_rng(3);
  const Objects o(rng);
  const auto& context = o.world.context;
  check_framing<Parameters>(io::to_bytes(context->parameters()), nullptr);
  check_framing<Plaintext>(io::to_bytes(o.plaintext), context);
  check_framing<Ciphertext>(io::to_bytes(o.seeded), context);
  check_framing<Ciphertext>(io::to_bytes(o.unseeded), context);
  check_framing<SecretKey>(io::to_bytes(o.world.keygen.secret_key()), context);
  check_framing<PublicKey>(io::to_bytes(o.world.keygen.public_key()), context);
  check_framing<RelinearizationKey>(io::to_bytes(o.world.keygen.relinearization_key(KeyStorage::seeded)), context);
  check_framing<RelinearizationKey>(io::to_bytes(o.world.keygen.relinearization_key()), context);
  check_framing<GaloisKeys>(io::to_bytes(o.world.keygen.galois_keys({1}, false, KeyStorage::seeded)), context);
}

TEST_CASE("objects of other parameters are rejected by their fingerprint", "[io]") {
  auto rng = cerium_test::make_rng(4);
  const Objects o(rng);
  const auto other = Context::create(toy(1));
  expect_error<Plaintext>(io::to_bytes(o.plaintext), other, "other parameters");
  expect_error<Ciphertext>(io::to_bytes(o.seeded), other, "other parameters");
  expect_error<SecretKey>(io::to_bytes(o.world.keygen.secret_key()), other, "other parameters");
  expect_error<PublicKey>(io::to_bytes(o.world.keygen.public_key()), other, "other parameters");
  expect_error<RelinearizationKey>(io::to_bytes(o.world.keygen.relinearization_key()), other, "other parameters");
  expect_error<GaloisKeys>(io::to_bytes(GaloisKeys(o.world.context)), other, "other parameters");
}

TEST_CASE("plaintext and ciphertext fields are bounded by the context", "[io]") {
  auto rng = cerium_test::make_rng(5);
  const Objects o(rng);
  const auto& context = o.world.context;
  const Bytes pt = io::to_bytes(o.plaintext);
  Bytes b = pt;
  put_u32(b, payload + 0, 99);
  expect_error<Plaintext>(b, context, "level 99");
  b = pt;
  put_u32(b, payload + 4, 0xffffffffu);  // limbs: bounded before any allocation
  expect_error<Plaintext>(b, context, "limb count is 4294967295");
  b = pt;
  put_u32(b, payload + 8, 2048);
  expect_error<Plaintext>(b, context, "ring degree is 2048");
  for (const double scale : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    b = pt;
    put_f64(b, payload + 12, scale);
    expect_error<Plaintext>(b, context, "scale");
  }
  for (const std::uint64_t slots : {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{1024}, std::uint64_t{1} << 60}) {
    b = pt;
    put_u64(b, payload + 20, slots);
    expect_error<Plaintext>(b, context, "slot count");
  }
  b = pt;
  put_u32(b, b.size() - 4, 0xffffffffu);
  expect_error<Plaintext>(b, context, "not below its prime");

  const Bytes ct = io::to_bytes(o.seeded);
  b = ct;
  put_u32(b, payload + 4, 4);
  expect_error<Ciphertext>(b, context, "4 parts");
  b = ct;
  put_u32(b, payload + 4, 0xffffffffu);
  expect_error<Ciphertext>(b, context, "4294967295 parts");
  b = ct;
  put_u32(b, payload + 8, 0xffffffffu);
  expect_error<Ciphertext>(b, context, "limb count");
  b = ct;
  b[payload + 32] = 2;
  expect_error<Ciphertext>(b, context, "seeded flag is 2");
  b = ct;
  put_u64(b, payload + 65, std::uint64_t{1} << 56);
  expect_error<Ciphertext>(b, context, "stream");
  b = ct;
  put_u32(b, payload + 73, 0x7fffffffu);  // first word of c0
  expect_error<Ciphertext>(b, context, "c0: coefficient 0 of limb 0");
  b = io::to_bytes(o.unseeded);
  put_u32(b, b.size() - 4, 0xfffffff0u);  // last word of c1
  expect_error<Ciphertext>(b, context, "c1: coefficient 1023 of limb");
  // A changed seed still loads (any seed is valid) but gives another c1: the fingerprint of a seed is its words.
  b = ct;
  b[payload + 33] ^= 1;
  REQUIRE_FALSE(io::from_bytes<Ciphertext>(b, context).part(1) == o.seeded.part(1));
}

TEST_CASE("key fields are bounded by the context", "[io]") {
  auto rng = cerium_test::make_rng(6);
  const Objects o(rng);
  const auto& context = o.world.context;
  Bytes b = io::to_bytes(o.world.keygen.secret_key());
  put_u32(b, payload, 0xffffffffu);
  expect_error<SecretKey>(b, context, "coefficient count is 4294967295");
  b = io::to_bytes(o.world.keygen.secret_key());
  b.back() = 2;
  expect_error<SecretKey>(b, context, "is 2, expected -1, 0 or 1");

  b = io::to_bytes(o.world.keygen.public_key());
  put_u32(b, payload, 1u << 30);
  expect_error<PublicKey>(b, context, "limb count");
  b = io::to_bytes(o.world.keygen.public_key());
  put_u32(b, b.size() - 4, 0xffffffffu);
  expect_error<PublicKey>(b, context, "not below its prime");

  const Bytes rk = io::to_bytes(o.world.keygen.relinearization_key(KeyStorage::seeded));
  b = rk;
  put_u32(b, payload, 0xffffffffu);
  expect_error<RelinearizationKey>(b, context, "digit count is 4294967295");
  b = rk;
  put_u32(b, payload + 4, 0xffffffffu);
  expect_error<RelinearizationKey>(b, context, "limb count is 4294967295");
  b = rk;
  b[payload + 12] = 7;
  expect_error<RelinearizationKey>(b, context, "storage is 7");
  b = rk;
  b[payload + 13] = 0;  // seeded storage without a seed (the seed bytes then become trailing)
  expect_error<RelinearizationKey>(b, context, "must store its seed");
  b = rk;
  put_u64(b, payload + 46, std::uint64_t{1} << 56);
  expect_error<RelinearizationKey>(b, context, "base stream");
  b = rk;
  put_u32(b, b.size() - 4, 0xffffffffu);
  expect_error<RelinearizationKey>(b, context, "not below its prime");

  const Bytes gk = io::to_bytes(o.world.keygen.galois_keys({1, 2}));
  b = gk;
  put_u32(b, payload, 0xffffffffu);
  expect_error<GaloisKeys>(b, context, "4294967295 keys");
  b = gk;
  put_u32(b, payload + 4, 4);
  expect_error<GaloisKeys>(b, context, "must be odd");
  b = gk;
  put_u32(b, payload + 4, 4097);
  expect_error<GaloisKeys>(b, context, "must be odd and below 2N");
  b = gk;
  put_u32(b, payload + 8, 5);  // the first key's digit count
  expect_error<GaloisKeys>(b, context, "digit count is 5");
  b = gk;
  put_u32(b, b.size() - 4, 0xffffffffu);
  expect_error<GaloisKeys>(b, context, "not below its prime");
  // Elements must increase: the second key's element set to the first's.
  b = gk;
  const std::size_t key_size = (gk.size() - payload - 4) / 2 - 4;
  std::memcpy(b.data() + payload + 4 + 4 + key_size, b.data() + payload + 4, 4);
  expect_error<GaloisKeys>(b, context, "not above the previous one");
}

TEST_CASE("parameters are re-derived and compared", "[io]") {
  const Bytes good = io::to_bytes(Parameters(toy(0)));
  Bytes b = good;
  put_u32(b, payload + 44, 97);  // the first Q prime
  expect_error<Parameters>(b, nullptr, "Q primes 0: stored 97");
  b = good;
  put_u32(b, payload + 40, 0xffffffffu);  // the Q prime count
  expect_error<Parameters>(b, nullptr, "4294967295 primes");
  b = good;
  put_u32(b, payload + 4, 0x7fffffff);  // levels
  expect_error<Parameters>(b, nullptr, "levels = 2147483647");
  b = good;
  put_u32(b, payload + 24, 9);  // dnum above the number of primes: Parameters rejects it
  expect_error<Parameters>(b, nullptr, "invalid");
  b = good;
  b[payload + 39] = 0;  // insecure_opt_out off: N = 2^10 with these primes fails the security check
  expect_error<Parameters>(b, nullptr, "invalid");
}
