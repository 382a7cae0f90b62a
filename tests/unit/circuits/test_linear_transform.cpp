// LinearTransform on encrypted slots against the plaintext matrix-vector product on random inputs, for every way
// of giving the diagonals (values, compressed values, a function, plaintexts by offset, plaintexts in BSGS form),
// with single hoisting word for word against the eager evaluator sequence it stands for, with double hoisting
// (the default for values) within the noise of it over several BSGS shapes, and its errors.

#include <cstdint>
#include <exception>
#include <string>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "cerium/circuits/linear_transform.hpp"
#include "support/catch.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;
namespace circuits = cerium::circuits;
using circuits::Hoisting;

namespace {

constexpr std::size_t kSlots = 64;
constexpr double kMinBits = 30;  // 2^56 scale at N = 2^12: about 40 bits; 64 products summed

std::vector<std::int64_t> all_steps() {
  std::vector<std::int64_t> steps;
  for (std::int64_t s = 1; s < static_cast<std::int64_t>(kSlots); ++s) steps.push_back(s);
  return steps;
}

Fixture& fixture() {
  static Fixture f(toy(12, 4, 2, 2), {.relinearization = true, .rotations = all_steps()});
  return f;
}

circuits::DiagonalMatrix random_matrix(std::mt19937_64& rng) {
  std::vector<std::vector<Complex>> rows(kSlots);
  for (auto& row : rows) row = random_complex(rng, kSlots);
  return circuits::DiagonalMatrix::from_dense(rows);
}

double transform_bits(const circuits::DiagonalMatrix& m, const Values& x, const Ciphertext& got) {
  const Values want = circuits::apply(m, x);
  const Values out = fixture().decrypt(got);
  return precision_bits(Values(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(kSlots)), want);
}

// The eager sequence LinearTransform stands for: babies hoisted, per giant the plaintext products summed in
// offset order, the giant's rotation, the giants summed in increasing order, one rescale.
Ciphertext eager(const Evaluator& ev, const circuits::LinearTransform<>& lt, const Ciphertext& input) {
  const Fixture& f = fixture();
  const Ciphertext ct = ev.level_down(input, lt.level());
  const auto& plan = lt.plan();
  const auto rotated = ev.rotate_hoisted(ct, plan.babies);
  Ciphertext sum;
  for (const auto& [giant, babies] : plan.giants) {
    Ciphertext inner;
    for (const auto baby : babies) {
      const auto pos = std::find(plan.babies.begin(), plan.babies.end(), baby) - plan.babies.begin();
      const auto values = circuits::bsgs_diagonal(*lt.matrix(), giant, baby);
      const Plaintext pt = f.encoder.encode(std::span<const Complex>(values),
                                            {.level = lt.level(), .scale = lt.config().plaintext_scale, .slots = kSlots});
      Ciphertext term = ev.multiply(rotated[static_cast<std::size_t>(pos)], pt);
      if (inner.empty()) inner = std::move(term); else ev.add_inplace(inner, term);
    }
    if (giant != 0) inner = ev.rotate(inner, giant);
    if (sum.empty()) sum = std::move(inner); else ev.add_inplace(sum, inner);
  }
  ev.rescale_inplace(sum);
  return sum;
}

}  // namespace

TEST_CASE("a linear transform of values matches the plaintext product and the eager words", "[circuits][lt]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(911);
  const auto m = random_matrix(rng);
  const Values x = random_complex(rng, kSlots);
  const Ciphertext ct = f.encrypt(x, -1, kSlots);
  for (const bool cache : {true, false}) {
    const circuits::LinearTransform<> lt(f.evaluator, m,
                                         {.level = 3, .cache_plaintexts = cache, .hoisting = Hoisting::single});
    CHECK(lt.hoisting() == Hoisting::single);
    CHECK(lt.rotation_steps().size() == lt.plan().rotations());
    CHECK(lt.plan().rotations() <= 16);  // about 2 sqrt(64), against 63 for one rotation per diagonal
    CHECK((lt.plaintext_bytes() > 0) == cache);
    const Ciphertext got = lt.apply(f.evaluator, ct);
    CHECK(got.level() == 2);
    CHECK(got.scale() == ct.scale());
    const double bits = transform_bits(m, x, got);
    INFO("cache " << cache << ": " << bits << " bits");
    CHECK(bits >= kMinBits);
    CHECK(same_words(got, eager(f.evaluator, lt, ct)));

    // Double hoisting, the default for values: the same steps, the same values within the noise.
    const circuits::LinearTransform<> doubled(f.evaluator, m, {.level = 3, .cache_plaintexts = cache});
    CHECK(doubled.hoisting() == Hoisting::doubled);
    CHECK(doubled.rotation_steps() == lt.rotation_steps());
    const Ciphertext got_doubled = doubled.apply(f.evaluator, ct);
    CHECK(got_doubled.level() == 2);
    CHECK(got_doubled.scale() == ct.scale());
    const double doubled_bits = transform_bits(m, x, got_doubled);
    const double apart_bits = precision_bits(f.decrypt(got_doubled), f.decrypt(got));
    INFO("doubled: " << doubled_bits << " bits; single and doubled agree to " << apart_bits << " bits");
    CHECK(doubled_bits >= bits - 0.5);
    CHECK(apart_bits >= kMinBits);
  }
}

TEST_CASE("double hoisting over BSGS shapes: random matrices, one giant, giants only, no giant 0",
          "[circuits][lt]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(915);
  struct Shape {
    const char* name;
    std::size_t slots;
    std::vector<std::int64_t> offsets;  // empty: a dense random matrix
    std::int64_t stride;                // 0: searched
  };
  std::vector<std::int64_t> some;
  for (std::int64_t d = -9; d <= 21; d += 3) some.push_back(d);
  const std::vector<Shape> shapes{
      {"dense, searched stride", kSlots, {}, 0},
      {"dense, stride 4", kSlots, {}, 4},
      {"dense, 16 slots", 16, {}, 0},
      {"one giant: every offset a hoisted baby", kSlots, {}, static_cast<std::int64_t>(kSlots)},
      {"giants only: baby 0 alone", kSlots, some, 1},
      {"one nonzero giant and no giant 0", kSlots, {16, 17, 18, 19}, 16},
      {"the diagonal alone: no rotation at all", kSlots, {0}, 0},
  };
  for (const Shape& shape : shapes) {
    INFO(shape.name);
    circuits::DiagonalMatrix m{shape.slots, {}};
    if (shape.offsets.empty()) {
      for (std::size_t d = 0; d < shape.slots; ++d) m.add_diagonal(static_cast<std::int64_t>(d),
                                                                   random_complex(rng, shape.slots));
    } else {
      for (const auto d : shape.offsets) m.add_diagonal(d, random_complex(rng, shape.slots));
    }
    const Values x = random_complex(rng, shape.slots);
    const Ciphertext ct = f.encrypt(x, -1, shape.slots);
    const circuits::LinearTransformConfig config{.level = 2, .bsgs = {.stride = shape.stride}};
    auto single_config = config;
    single_config.hoisting = Hoisting::single;
    const circuits::LinearTransform<> doubled(f.evaluator, m, config);
    const circuits::LinearTransform<> single(f.evaluator, m, single_config);
    const Ciphertext a = doubled.apply(f.evaluator, ct), b = single.apply(f.evaluator, ct);
    const Values want = circuits::apply(m, x);
    const double doubled_bits = precision_bits(f.decrypt(a), want);
    const double single_bits = precision_bits(f.decrypt(b), want);
    INFO("plan: " << doubled.plan().giants.size() << " giants, " << doubled.plan().babies.size() << " babies; bits "
                  << doubled_bits << " doubled, " << single_bits << " single");
    CHECK(doubled_bits >= kMinBits);
    CHECK(doubled_bits >= single_bits - 0.5);
    CHECK(precision_bits(f.decrypt(a), f.decrypt(b)) >= kMinBits);
    if (shape.offsets == std::vector<std::int64_t>{0}) CHECK(same_words(a, b));  // nothing to round differently
  }
}

TEST_CASE("compressed diagonals and diagonals from a function", "[circuits][lt]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(912);
  circuits::DiagonalMatrix m{kSlots, {}};  // a 3-tap filter whose weights repeat every 8 slots, and a full one
  m.add_diagonal(-1, random_complex(rng, 8));
  m.add_diagonal(0, random_complex(rng, 8));
  m.add_diagonal(1, random_complex(rng, 8));
  m.add_diagonal(17, random_complex(rng, kSlots));
  CHECK(m.stored_values() == 3 * 8 + kSlots);
  const Values x = random_complex(rng, kSlots);
  const Ciphertext ct = f.encrypt(x, 2, kSlots);

  const circuits::LinearTransform<> from_values(f.evaluator, m, {.level = 2, .cache_plaintexts = false});
  const Ciphertext a = from_values.apply(f.evaluator, ct);
  CHECK(transform_bits(m, x, a) >= kMinBits);

  int calls = 0;
  const auto offsets = m.offsets();
  const circuits::LinearTransform<> from_function(
      f.evaluator, offsets,
      [&](std::int64_t giant, std::int64_t baby, const EncodeOptions& options) {
        ++calls;
        const auto full = circuits::tile(circuits::bsgs_diagonal(m, giant, baby), options.slots);
        return f.encoder.encode(std::span<const Complex>(full), options);
      },
      {.level = 2, .slots = kSlots});
  CHECK(calls == static_cast<int>(offsets.size()));  // cached: encoded once each
  const Ciphertext b = from_function.apply(f.evaluator, ct);
  CHECK(calls == static_cast<int>(offsets.size()));
  CHECK(same_words(a, b));
}

TEST_CASE("diagonals given as plaintexts", "[circuits][lt]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(913);
  const auto m = random_matrix(rng);
  const Values x = random_complex(rng, kSlots);
  const Ciphertext ct = f.encrypt(x, -1, kSlots);
  const EncodeOptions options{.level = 3, .scale = f.evaluator.level_prime_product(3), .slots = kSlots};

  SECTION("by offset: every diagonal a hoisted baby step") {
    std::map<std::int64_t, Plaintext> diagonals;
    for (const auto d : m.offsets()) {
      const auto values = m.expanded(d);
      diagonals.emplace(d, f.encoder.encode(std::span<const Complex>(values), options));
    }
    const circuits::LinearTransform<> lt(f.evaluator, std::move(diagonals));
    CHECK(lt.hoisting() == Hoisting::single);  // the user's plaintexts are over Q_l only
    CHECK(lt.plan().giants.size() == 1);
    CHECK(lt.plan().rotations() == kSlots - 1);
    CHECK(transform_bits(m, x, lt.apply(f.evaluator, ct)) >= kMinBits);
  }
  SECTION("in BSGS form for a plan") {
    const auto plan = circuits::plan_bsgs(m);
    std::map<std::pair<std::int64_t, std::int64_t>, Plaintext> diagonals;
    for (const auto& [giant, babies] : plan.giants) {
      for (const auto baby : babies) {
        const auto values = circuits::bsgs_diagonal(m, giant, baby);
        diagonals.emplace(std::pair{giant, baby}, f.encoder.encode(std::span<const Complex>(values), options));
      }
    }
    std::map<std::pair<std::int64_t, std::int64_t>, Plaintext> copies;
    for (const auto& [key, pt] : diagonals) copies.emplace(key, pt.clone());
    const circuits::LinearTransform<> lt(f.evaluator, plan, std::move(diagonals));
    const circuits::LinearTransform<> reference(f.evaluator, m, {.level = 3, .hoisting = Hoisting::single});
    CHECK(same_words(lt.apply(f.evaluator, ct), reference.apply(f.evaluator, ct)));
    // Asked for double hoisting, the plaintexts are lifted to Q_l u P exactly: the values' words.
    const circuits::LinearTransform<> lifted(f.evaluator, plan, std::move(copies), {.hoisting = Hoisting::doubled});
    const circuits::LinearTransform<> doubled_reference(f.evaluator, m, {.level = 3});
    CHECK(lifted.hoisting() == Hoisting::doubled);
    CHECK(lifted.plaintext_bytes() == doubled_reference.plaintext_bytes());
    CHECK(same_words(lifted.apply(f.evaluator, ct), doubled_reference.apply(f.evaluator, ct)));
  }
  SECTION("a plaintext of another shape is refused") {
    std::map<std::int64_t, Plaintext> diagonals;
    const auto values = m.expanded(0);
    diagonals.emplace(0, f.encoder.encode(std::span<const Complex>(values), options));
    diagonals.emplace(1, f.encoder.encode(std::span<const Complex>(values), EncodeOptions{.level = 2, .slots = kSlots}));
    CHECK_THROWS_AS(circuits::LinearTransform<>(f.evaluator, std::move(diagonals)), InvalidArgument);
  }
}

TEST_CASE("linear transform errors name what is wrong", "[circuits][lt]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(914);
  const auto m = random_matrix(rng);
  const circuits::LinearTransform<> lt(f.evaluator, m, {.level = 3});
  CHECK_THROWS_AS(lt.apply(f.evaluator, f.encrypt(random_complex(rng, kSlots), 2, kSlots)), LevelError);
  CHECK_THROWS_AS(lt.apply(f.evaluator, f.encrypt(random_complex(rng, 32), -1, 32)), InvalidArgument);
  CHECK_THROWS_AS(circuits::LinearTransform<>(f.evaluator, m, {.level = 0}), LevelError);
  CHECK_THROWS_AS(circuits::LinearTransform<>(f.evaluator, m, {.slots = 32}), InvalidArgument);
  // A function that encodes at another scale than the config's: refused, not summed at the wrong scale.
  const auto offsets = m.offsets();
  const auto wrong_scale = [&](std::int64_t giant, std::int64_t baby, const EncodeOptions& options) {
    const auto full = circuits::tile(circuits::bsgs_diagonal(m, giant, baby), options.slots);
    return f.encoder.encode(std::span<const Complex>(full),
                            EncodeOptions{.level = options.level, .scale = options.scale * 2, .slots = options.slots});
  };
  CHECK_THROWS_AS(circuits::LinearTransform<>(f.evaluator, offsets, wrong_scale, {.level = 3, .slots = kSlots}),
                  InvalidArgument);
  const circuits::LinearTransform<> on_demand(f.evaluator, offsets, wrong_scale,
                                              {.level = 3, .slots = kSlots, .cache_plaintexts = false});
  CHECK_THROWS_AS(on_demand.apply(f.evaluator, f.encrypt(random_complex(rng, kSlots), -1, kSlots)), InvalidArgument);
  // Without the Galois keys of its steps: the evaluator's MissingKeyError, naming the step, for both hoistings.
  Evaluator bare(f.context);
  CHECK_THROWS_AS(lt.apply(bare, f.encrypt(random_complex(rng, kSlots), -1, kSlots)), MissingKeyError);
  const circuits::LinearTransform<> single(f.evaluator, m, {.level = 3, .hoisting = Hoisting::single});
  const std::vector<std::int64_t> steps = lt.rotation_steps();
  // A giant other than +-slots/2, whose key the other sign's key would stand in for.
  std::int64_t giant = 0;
  for (const auto& [g, babies] : lt.plan().giants)
    if (g != 0 && 2 * std::abs(g) != static_cast<std::int64_t>(kSlots)) giant = g;
  const std::int64_t baby = lt.plan().babies.back();
  REQUIRE(giant != 0);
  for (const std::int64_t missing : {baby, giant}) {
    std::vector<std::int64_t> present;
    for (const auto s : steps)
      if (s != missing) present.push_back(s);
    Evaluator partial(f.context);
    partial.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(present)));
    for (const auto* transform : {&lt, &single}) {
      INFO("missing step " << missing << ", hoisting " << static_cast<int>(transform->hoisting()));
      std::string message;
      try {
        (void)transform->apply(partial, f.encrypt(random_complex(rng, kSlots), -1, kSlots));
      } catch (const MissingKeyError& e) {
        message = e.what();
      }
      INFO(message);
      CHECK(message.find("rotate by " + std::to_string(missing) + " steps") != std::string::npos);
    }
  }
}

TEST_CASE("double hoisting keeps the diagonals over Q_l u P too and counts them", "[circuits][lt]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(916);
  const auto m = random_matrix(rng);
  const circuits::LinearTransform<> single(f.evaluator, m, {.level = 3, .hoisting = Hoisting::single});
  const circuits::LinearTransform<> doubled(f.evaluator, m, {.level = 3});
  const std::size_t q_limbs = f.context->q_basis(3)->size(), qp_limbs = f.context->qp_basis(3)->size();
  CHECK(doubled.plaintext_bytes() * q_limbs == single.plaintext_bytes() * (q_limbs + qp_limbs));
  CHECK(circuits::LinearTransform<>(f.evaluator, m, {.level = 3, .cache_plaintexts = false}).plaintext_bytes() == 0);
}
