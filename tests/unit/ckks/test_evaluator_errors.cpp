// Every evaluator error: its type, and a message that names the values involved and what to do.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>

#include "cerium/core/error.hpp"
#include "cerium/io/bytes.hpp"
#include "evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

namespace {

// Runs f, requires that it throws E, and returns the message.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("threw another error type: " << e.what());
  }
  FAIL("did not throw");
  return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("operands from different contexts are refused", "[ckks][evaluator][errors]") {
  Fixture f(toy(10, 2, 2, 1), {.relinearization = false});
  Fixture g(toy(11, 2, 2, 1), {.relinearization = false});
  const Values x(4, Complex(0.5, 0));
  const Ciphertext a = f.encrypt(x), b = g.encrypt(x);
  std::string message = message_of<MismatchError>([&] { (void)f.evaluator.add(a, b); });
  INFO(message);
  CHECK(contains(message, "different CKKS contexts"));
  CHECK(contains(message, "N = 2^10"));
  CHECK(contains(message, "N = 2^11"));
  message = message_of<MismatchError>([&] { (void)f.evaluator.rescale(b); });  // another context's ciphertext
  CHECK(contains(message, "rescale"));
  (void)message_of<MismatchError>([&] { (void)f.evaluator.multiply(a, g.encoder.encode(x)); });
  (void)message_of<MismatchError>([&] {
    f.evaluator.set_relinearization_key(std::make_shared<const RelinearizationKey>(g.keygen.relinearization_key()));
  });
}

TEST_CASE("missing keys are named", "[ckks][evaluator][errors]") {
  Fixture f(toy(10, 2, 2, 1), {.relinearization = false});
  const Values x(4, Complex(0.5, 0));
  const Ciphertext a = f.encrypt(x);
  std::string message = message_of<MissingKeyError>([&] { (void)f.evaluator.multiply(a, a); });
  INFO(message);
  CHECK(contains(message, "relinearization key"));
  CHECK(contains(message, "set_relinearization_key"));
  message = message_of<MissingKeyError>([&] { (void)f.evaluator.relinearize(f.evaluator.multiply_no_relin(a, a)); });
  CHECK(contains(message, "relinearization key"));
  message = message_of<MissingKeyError>([&] { (void)f.evaluator.multiply_rescale(a, a); });
  CHECK(contains(message, "multiply_rescale: no relinearization key"));
  message =
      message_of<MissingKeyError>([&] { (void)f.evaluator.relinearize_rescale(f.evaluator.multiply_no_relin(a, a)); });
  CHECK(contains(message, "relinearize_rescale: no relinearization key"));
  message = message_of<MissingKeyError>([&] { (void)f.evaluator.rotate(a, 7); });
  CHECK(contains(message, "rotate by 7 steps"));
  f.attach({.relinearization = false, .rotations = {1, 2}});
  message = message_of<MissingKeyError>([&] { (void)f.evaluator.rotate(a, -3); });
  CHECK(contains(message, "rotate by -3 steps"));
  CHECK(contains(message, "galois_keys({-3})"));
  message = message_of<MissingKeyError>([&] { (void)f.evaluator.rotate_hoisted(a, std::vector<std::int64_t>{1, 5}); });
  CHECK(contains(message, "rotate by 5 steps"));
  message = message_of<MissingKeyError>([&] { (void)f.evaluator.conjugate(a); });
  CHECK(contains(message, "conjugation"));
}

TEST_CASE("multiply and rescale with no level left", "[ckks][evaluator][errors]") {
  Fixture f(toy(10, 1, 2, 1));
  const Values x(4, Complex(0.5, 0));
  const Ciphertext a = f.encrypt(x, 0);
  for (const auto& message : {message_of<LevelError>([&] { (void)f.evaluator.multiply(a, a); }),
                              message_of<LevelError>([&] { (void)f.evaluator.rescale(a); }),
                              message_of<LevelError>([&] { (void)f.evaluator.multiply_rescale(a, a); }),
                              message_of<LevelError>([&] { (void)f.evaluator.multiply(a, 0.5); }),
                              message_of<LevelError>([&] { (void)f.evaluator.adjust_scale(a, a.scale() / 2); })}) {
    INFO(message);
    CHECK(contains(message, "no level left"));
    CHECK(contains(message, "bootstrap or use more levels"));
  }
  // A level above the ciphertext's is no level_down.
  const std::string message = message_of<LevelError>([&] { (void)f.evaluator.level_down(a, 1); });
  INFO(message);
  CHECK(contains(message, "from level 0 to level 1"));
}

TEST_CASE("a product's scale must fit the modulus of its level", "[ckks][evaluator][errors]") {
  Fixture f(toy(10, 2, 2, 1));
  const Values x(4, Complex(0.5, 0));
  const Ciphertext a = f.encrypt(x, 1);  // Q_1 is about 2^118: s^2 = 2^112 fits, s^3 does not
  const Ciphertext square = f.evaluator.multiply(a, a);
  const std::string message = message_of<LevelError>([&] { (void)f.evaluator.multiply(square, a); });
  INFO(message);
  CHECK(contains(message, "2^168"));  // the product's scale
  CHECK(contains(message, "level 1"));
  CHECK(contains(message, "rescale the operands first"));
  // Plaintexts at a large scale, and constants, are checked the same way.
  const Plaintext big = f.encoder.encode(x, {.level = 1, .scale = std::ldexp(1.0, 80)});
  (void)message_of<LevelError>([&] { (void)f.evaluator.multiply(a, big); });
  (void)message_of<LevelError>([&] { (void)f.evaluator.multiply(square, 2.0); });
}

TEST_CASE("operands must agree in slots, parts and scales", "[ckks][evaluator][errors]") {
  Fixture f(toy(10, 3, 2, 1), {.rotations = {1}});
  const Values x(4, Complex(0.5, 0));
  const Ciphertext full = f.encrypt(x), sparse = f.encrypt(x, -1, 8);
  // Slot counts that differ are a mismatch of operands, like their levels or contexts.
  std::string message = message_of<MismatchError>([&] { (void)f.evaluator.add(full, sparse); });
  INFO(message);
  CHECK(contains(message, "512 and 8 slots"));
  (void)message_of<MismatchError>([&] { (void)f.evaluator.multiply(full, f.encoder.encode(x, {.slots = 8})); });

  // 3-part ciphertexts where 2 are needed.
  const Ciphertext three = f.evaluator.multiply_no_relin(full, full);
  for (const auto& text : {message_of<InvalidArgument>([&] { (void)f.evaluator.multiply(three, full); }),
                           message_of<InvalidArgument>([&] { (void)f.evaluator.rotate(three, 1); }),
                           message_of<InvalidArgument>([&] { (void)f.evaluator.conjugate(three); })}) {
    INFO(text);
    CHECK(contains(text, "3 parts"));
    CHECK(contains(text, "relinearize"));
  }

  // Same level, different scales: no free alignment.
  const Ciphertext other_scale = f.encrypt(x, -1, 0, std::ldexp(1.0, 50));
  message = message_of<LevelError>([&] { (void)f.evaluator.add(full, other_scale); });
  INFO(message);
  CHECK(contains(message, "2^56.000"));
  CHECK(contains(message, "2^50.000"));
  CHECK(contains(message, "adjust_scale"));
  // A plaintext added at another scale.
  message =
      message_of<LevelError>([&] { (void)f.evaluator.add(full, f.encoder.encode(x, {.scale = std::ldexp(1.0, 40)})); });
  CHECK(contains(message, "encode the plaintext"));
  // A target that no integer factor reaches (k = round(target P / scale) would be 0).
  message = message_of<LevelError>([&] { (void)f.evaluator.adjust_scale(full, 0.001); });
  CHECK(contains(message, "cannot be brought onto"));
}

TEST_CASE("scales are validated where they enter: constructors, loading, rescaling", "[ckks][evaluator][errors]") {
  Fixture f(toy(10, 3, 2, 1), {});
  const Values x(4, Complex(0.5, 0));
  const Ciphertext ct = f.encrypt(x);
  const double q_bits = f.context->q_basis(ct.level())->log2_product();
  for (const double bad : {1e300, std::exp2(q_bits + 10), 4.9e-324, 0.5, std::exp2(q_bits), std::nan("")}) {
    INFO("scale " << bad);
    std::vector<ring::RnsPoly> parts;
    for (const auto& p : ct.parts()) parts.push_back(p.clone());
    CHECK_THROWS_AS(Ciphertext(f.context, std::move(parts), ct.level(), bad, ct.slots()), LevelError);
    CHECK_THROWS_AS(Plaintext(f.context, ct.part(0).clone(), ct.level(), bad, ct.slots()), LevelError);
    // The same scale in a serialized ciphertext: its 8 bytes patched in place of the real scale's.
    auto bytes = io::to_bytes(ct);
    const double real = ct.scale();
    const auto* from = reinterpret_cast<const unsigned char*>(&real);
    const auto* to = reinterpret_cast<const unsigned char*>(&bad);
    const auto at = std::search(bytes.begin(), bytes.end(), from, from + 8);
    REQUIRE(at != bytes.end());
    std::copy(to, to + 8, at);
    CHECK_THROWS_AS(io::from_bytes<Ciphertext>(bytes, f.context), SerializationError);
  }
  // A rescale that would take the scale below 1 (no product before it) is refused before any work.
  const Ciphertext small = f.encryptor.encrypt(f.encoder.encode(x, {.level = 2, .scale = std::ldexp(1.0, 20)}));
  Ciphertext copy = small.clone();
  const std::string message = message_of<LevelError>([&] { f.evaluator.rescale_inplace(copy); });
  CHECK(contains(message, "below 1"));
  CHECK(same_words(copy, small));  // untouched
}
