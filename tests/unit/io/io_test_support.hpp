#pragma once
// Shared set-up of the serialization tests: toy contexts with fresh keys and objects, byte patching, and a check
// that a load fails with a SerializationError.

#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/io/bytes.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

namespace io_test {

using namespace cerium;
using namespace cerium::ckks;
using Bytes = std::vector<std::uint8_t>;

// The two toy parameter sets of the tests (insecure by explicit opt-out).
inline CkksConfig toy(int index) {
  return index == 0 ? CkksConfig{.log_n = 10, .levels = 2, .level_width = 1, .dnum = 1, .insecure_opt_out = true}
                     : CkksConfig{.log_n = 11, .levels = 3, .level_width = 2, .dnum = 2, .insecure_opt_out = true};
}

struct World {
  ContextPtr context;
  KeyGenerator keygen;
  Encoder encoder;
  Encryptor public_encryptor;
  Encryptor secret_encryptor;
  Decryptor decryptor;

  explicit World(const CkksConfig& config)
      : context(Context::create(config)),
        keygen(context),
        encoder(context),
        public_encryptor(keygen.public_key()),
        secret_encryptor(keygen.secret_key()),
        decryptor(keygen.secret_key()) {}

  std::vector<std::complex<double>> values(std::mt19937_64& rng, std::size_t slots) const {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<std::complex<double>> v(slots);
    for (auto& x : v) x = {dist(rng), dist(rng)};
    return v;
  }
  Plaintext plaintext(std::mt19937_64& rng, int level, std::size_t slots) const {
    return encoder.encode(values(rng, slots), EncodeOptions{.level = level, .slots = slots});
  }
};

inline void put_u32(Bytes& bytes, std::size_t offset, std::uint32_t v) { std::memcpy(bytes.data() + offset, &v, 4); }
inline void put_u64(Bytes& bytes, std::size_t offset, std::uint64_t v) { std::memcpy(bytes.data() + offset, &v, 8); }
inline void put_f64(Bytes& bytes, std::size_t offset, double v) { std::memcpy(bytes.data() + offset, &v, 8); }

// The message of the SerializationError that loading `bytes` as T throws; fails the test for no error or another
// exception type.
template <class T>
std::string load_error(const Bytes& bytes, const ContextPtr& context) {
  try {
    (void)io::from_bytes<T>(bytes, context);
  } catch (const SerializationError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("expected a SerializationError, got: " << e.what());
  }
  FAIL("expected a SerializationError, the load succeeded (" << bytes.size() << " bytes)");
  return {};
}

// load_error, and the message must mention `needle`.
template <class T>
void expect_error(const Bytes& bytes, const ContextPtr& context, const std::string& needle) {
  const std::string message = load_error<T>(bytes, context);
  INFO("message: " << message);
  CHECK(message.find(needle) != std::string::npos);
}

// The header and truncation checks every load path must pass: corrupted magic, version, type, fingerprint;
// every prefix (or, for large objects, a spread of prefixes) truncated; trailing bytes after the object and
// inside the payload; a payload length of 2^60.
template <class T>
void check_framing(const Bytes& good, const ContextPtr& context) {
  Bytes b = good;
  b[1] ^= 0x5a;
  expect_error<T>(b, context, "magic");
  b = good;
  b[4] = 2;
  expect_error<T>(b, context, "version 2");
  b = good;
  b[6] = static_cast<std::uint8_t>(b[6] == 3 ? 4 : 3);
  expect_error<T>(b, context, "expected a");
  b = good;
  b[8] ^= 1;
  expect_error<T>(b, context, "fingerprint");
  b = good;
  b.push_back(0);
  expect_error<T>(b, context, "trailing");
  b = good;
  b.push_back(0);
  put_u64(b, 16, good.size() - io::header_size + 1);
  expect_error<T>(b, context, "trailing");
  b = good;
  put_u64(b, 16, std::uint64_t{1} << 60);
  expect_error<T>(b, context, "payload length");
  b = good;
  put_u64(b, 16, good.size() - io::header_size - 1);
  (void)load_error<T>(b, context);
  // Truncation: every prefix of a small object; header prefixes and ~300 spread prefixes of a large one.
  const std::size_t step = good.size() <= 20000 ? 1 : good.size() / 300;
  for (std::size_t length = 0; length < good.size(); length += (length < 64 ? 1 : step)) {
    const Bytes prefix(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(length));
    (void)load_error<T>(prefix, context);
  }
  (void)load_error<T>(Bytes(good.begin(), good.end() - 1), context);
}

}  // namespace io_test
