// Randomized misuse of the bootstrapper: inputs at level 0, of other slot counts, of another context, with three
// parts or before the keys; stages given ciphertexts at the wrong level; configurations out of range. Every call
// must throw the cerium::Error subclass of its kind (core/error.hpp), never a standard-library exception.

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "support/catch.hpp"
#include "support/misuse.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;
using namespace cerium::boot;
using cerium_test::pick;
using cerium_test::require_error;

namespace {

// A bootstrapper without keys, and the user's objects of its context (N = 2^10).
struct Setup {
  ContextPtr context = Context::create(presets::bootstrappable_toy(10, 17));
  Fixture f{context, {.relinearization = true}};
  Bootstrapper boot{context, {}};
};

Setup& setup() {
  static Setup s;
  return s;
}

}  // namespace

TEST_CASE("bootstrap misuse throws typed errors", "[boot][misuse]") {
  auto rng = cerium_test::make_rng(9201);
  INFO("seed " << cerium_test::test_seed());
  Setup& s = setup();
  const Bootstrapper& boot = s.boot;
  const Fixture& f = s.f;
  Fixture other(toy(11, 2, 1, 1), {.relinearization = false});
  const std::size_t slots = boot.slots();
  for (int trial = 0; trial < 20; ++trial) {
    const Values x = random_real(rng, 4);
    const int level = 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(s.context->max_level()));
    const Ciphertext good = f.encrypt(x, level, slots);
    require_error<MissingKeyError>("bootstrap(before set_keys)", [&] { (void)boot.bootstrap(good); }, "set_keys");
    require_error<LevelError>("bootstrap(level 0)", [&] { (void)boot.bootstrap(f.encrypt(x, 0, slots)); }, "level 0");
    std::size_t wrong = std::size_t{4} << (rng() % 7);  // room for the 4 values
    if (wrong == slots) wrong /= 2;
    require_error<MismatchError>("bootstrap(" + std::to_string(wrong) + " slots)",
                                 [&] { (void)boot.bootstrap(f.encrypt(x, level, wrong)); }, std::to_string(wrong));
    require_error<InvalidArgument>("bootstrap(3 parts)",
                                   [&] { (void)boot.bootstrap(f.evaluator.multiply_no_relin(good, good)); }, "parts");
    require_error<MismatchError>("bootstrap(another context's ciphertext)",
                                 [&] { (void)boot.bootstrap(other.encrypt(x, 1)); });
    require_error<MismatchError>("bootstrap(an empty ciphertext)", [&] { (void)boot.bootstrap(Ciphertext{}); });
    require_error<LevelError>("mod_raise(level " + std::to_string(level) + ")", [&] { (void)boot.mod_raise(good); },
                              std::to_string(level));
    if (level != boot.levels().after_coeff_to_slot) {
      require_error<LevelError>("eval_mod(level " + std::to_string(level) + ")", [&] { (void)boot.eval_mod(good); },
                                std::to_string(level));
    }
    require_error<MissingKeyError>("set_keys(nullptr)", [&] { s.boot.set_keys(nullptr); });
    require_error<MismatchError>("generate_keys(another context's key generator)",
                                 [&] { (void)boot.generate_keys(other.keygen); });

    // Configurations out of range are ParameterErrors, found before any work.
    BootstrapConfig config;
    switch (trial % 6) {
      case 0: config.slots = pick<std::size_t>(rng, {3, 24, 1000, std::size_t{1} << 40}); break;
      case 1: config.coeff_to_slot_levels = pick<int>(rng, {0, -1, std::numeric_limits<int>::min()}); break;
      case 2: config.eval_mod_degree = pick<int>(rng, {0, -7, 2, 1 << 20}); break;
      case 3: config.k_range = pick<int>(rng, {0, -1}); break;
      case 4: config.output_scale = pick<double>(rng, {std::nan(""), -1.0, 0.5}); break;
      default: config.double_angle_steps = pick<int>(rng, {-1, 11, 1000}); break;
    }
    require_error<ParameterError>("Bootstrapper(config case " + std::to_string(trial % 6) + ")",
                                  [&] { (void)Bootstrapper(s.context, config); });
  }
}
