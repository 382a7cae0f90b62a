// No standard-library exception escapes the bootstrapper (issue 26): random BootstrapConfigs (zero, negative and
// absurd degrees, level budgets, k_range, ratios, message bounds, Hamming weights, output scales and slot counts)
// must construct or throw a ParameterError; the bootstrap and its stages, given inputs at every level, of other
// slot counts, scales and part counts, empty, moved-from or of another context, before and after set_keys, must
// succeed or throw a cerium::Error whose message names the call. One keyed bootstrapper at the smallest toy size
// the bootstrap tests use (N = 2^10, 8 slots, one-level DFTs, no encapsulation) keeps the file to seconds.

#include <cmath>
#include <complex>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "support/api_arguments.hpp"
#include "support/catch.hpp"
#include "support/misuse.hpp"
#include "support/random.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;
using namespace cerium::boot;
using cerium_test::pick;

using namespace cerium_test;

namespace {

CkksConfig parameters() {
  CkksConfig params = presets::bootstrappable_toy(10, 14);
  params.secret = SecretDistribution::hamming_weight;
  params.hamming_weight = 32;
  return params;
}

BootstrapConfig small_config() {
  return {.slots = 8, .coeff_to_slot_levels = 1, .slot_to_coeff_levels = 1, .sparse_encapsulation = false};
}

// The context, the user's keys, a bootstrapper without keys and one with them, and another context's fixture.
struct Setup {
  Fixture f{parameters(), {.relinearization = true}};
  Bootstrapper keyless{f.context, small_config()};
  Bootstrapper keyed{f.context, small_config()};
  Fixture other{toy(11, 2, 1, 1), {.relinearization = false}};
  Setup() { keyed.set_keys(std::make_shared<const BootstrapKeys>(keyed.generate_keys(f.keygen))); }
};

Setup& setup() {
  static Setup s;
  return s;
}

// Inputs of every kind: each level, other slot counts, scales and part counts, empty, moved-from, foreign.
struct Inputs {
  std::vector<Ciphertext> cts;
  std::vector<std::string> names;
  void add(std::string name, Ciphertext ct) {
    names.push_back(std::move(name));
    cts.push_back(std::move(ct));
  }
};

Inputs make_inputs(std::mt19937_64& rng) {
  Setup& s = setup();
  const Fixture& f = s.f;
  const std::size_t slots = s.keyed.slots();
  Inputs in;
  const Values x = random_real(rng, slots);
  for (int level = 0; level <= f.context->max_level(); ++level)
    in.add("level " + std::to_string(level), f.encrypt(x, level, slots));
  in.add("16 slots", f.encrypt(x, -1, 16));
  in.add("N/2 slots", f.encrypt(x, 1));
  in.add("1 slot", f.encrypt(Values{x[0]}, 1, 1));
  in.add("3 parts", f.evaluator.multiply_no_relin(f.encrypt(x, 2, slots), f.encrypt(x, 2, slots)));
  in.add("a product's scale", f.evaluator.multiply(f.encrypt(x, 2, slots), f.encrypt(x, 2, slots)));
  in.add("scale 2^20", f.encrypt(x, 1, slots, 0x1p20));
  in.add("values up to 4", f.encrypt(map(x, [](Complex v) { return v * 4.0; }), 1, slots));
  in.add("empty", Ciphertext{});
  {
    Ciphertext source = f.encrypt(x, 1, slots);
    Ciphertext taken = std::move(source);
    in.add("moved-from", std::move(source));
  }
  in.add("another context's", s.other.encrypt(x, 1, slots));
  {
    Ciphertext one_part = f.encrypt(x, 1, slots);
    one_part.parts().pop_back();
    in.add("one part", std::move(one_part));
  }
  return in;
}

}  // namespace

TEST_CASE("bootstrapper construction with random out-of-range configs throws ParameterErrors only",
          "[boot][api_arguments]") {
  auto rng = cerium_test::make_rng(2621);
  INFO("seed " << cerium_test::test_seed());
  const Fixture& f = setup().f;
  const std::size_t max_slots = f.max_slots();
  Tally tally;
  for (int draw = 0; draw < 300; ++draw) {
    // Each field odd about one time in four; the rest the small config's, so that some configs construct. (Full
    // slots, 0 or N/2, are valid and plan a dense transform, 0.4 s each: left to the bootstrap tests.)
    BootstrapConfig config = small_config();
    const auto odd = [&] { return rng() % 4 == 0; };
    if (odd())
      config.slots = pick<std::size_t>(rng, {1, 2, 3, 6, 24, 64, max_slots - 1, max_slots + 1, 2 * max_slots,
                                             std::size_t{1} << 40, std::numeric_limits<std::size_t>::max()});
    if (odd()) config.coeff_to_slot_levels = pick<int>(rng, {int_min, -1, 0, 2, 3, 4, 10, int_max});
    if (odd()) config.slot_to_coeff_levels = pick<int>(rng, {int_min, -1, 0, 2, 3, 4, 10, int_max});
    if (odd()) config.eval_mod_degree = pick<int>(rng, {int_min, -7, 0, 1, 2, 3, 7, 1023, 1024, int_max});
    if (odd()) config.double_angle_steps = pick<int>(rng, {int_min, -1, 0, 1, 10, 11, int_max});
    if (odd()) config.k_range = pick<int>(rng, {int_min, -1, 0, 1, 1000, 1 << 20, int_max});
    if (odd()) config.message_ratio_bits = pick<int>(rng, {int_min, -1, 1, 4, 5, 40, 41, 62, int_max});
    if (odd()) {
      config.message_bound = pick<double>(
          rng, {0.0, -1.0, std::nan(""), INFINITY, 0.5, 1e6, 1e7, std::numeric_limits<double>::denorm_min(), 1e300});
    }
    if (odd()) config.ephemeral_hamming_weight = pick<int>(rng, {int_min, -1, 0, 1, 1024, 1025, int_max});
    if (odd()) config.sparse_encapsulation = true;
    if (odd()) {
      config.output_scale = pick<double>(rng, {-1.0, std::nan(""), INFINITY, 0.5, 1.0, 2.0, 0x1p100, 1e300,
                                               std::numeric_limits<double>::denorm_min()});
    }
    const std::string call =
        "Bootstrapper(slots " + std::to_string(config.slots) + ", levels " +
        std::to_string(config.coeff_to_slot_levels) + "/" + std::to_string(config.slot_to_coeff_levels) + ", degree " +
        std::to_string(config.eval_mod_degree) + ", double angles " + std::to_string(config.double_angle_steps) +
        ", k_range " + std::to_string(config.k_range) + ", ratio " + std::to_string(config.message_ratio_bits) +
        ", bound " + show(config.message_bound) + ", weight " + std::to_string(config.ephemeral_hamming_weight) +
        ", encapsulation " + (config.sparse_encapsulation ? "on" : "off") + ", output scale " +
        show(config.output_scale) + ")";
    attempt<ParameterError>(tally, call, "bootstrapping", [&] { (void)Bootstrapper(f.context, config); });
  }
  // Contexts that cannot bootstrap, and none.
  const Fixture& other = setup().other;
  attempt<ParameterError>(tally, "Bootstrapper(a 2-level context)", "bootstrapping",
                          [&] { (void)Bootstrapper(other.context, {}); });
  attempt(tally, "Bootstrapper(nullptr)", "context", [&] { (void)Bootstrapper(nullptr, {}); });
  INFO(tally.succeeded << " constructions succeeded, " << tally.typed << " threw cerium::Errors");
  CHECK(tally.succeeded > 5);
  CHECK(tally.typed > 100);
}

TEST_CASE("bootstrap and its stages on odd inputs, before and after set_keys, throw cerium::Errors only",
          "[boot][api_arguments]") {
  auto rng = cerium_test::make_rng(2622);
  INFO("seed " << cerium_test::test_seed());
  Setup& s = setup();
  const Inputs in = make_inputs(rng);
  Tally tally;
  for (const bool with_keys : {false, true}) {
    const Bootstrapper& boot = with_keys ? s.keyed : s.keyless;
    const std::string which = with_keys ? "" : " before set_keys";
    for (std::size_t i = 0; i < in.cts.size(); ++i) {
      const Ciphertext& ct = in.cts[i];
      const std::string what = "a ciphertext (" + in.names[i] + ")" + which;
      // Every stage on every input: the stages are cheap where they refuse, and at level 0 ModRaise is the
      // stage's proper input.
      attempt(tally, "scale_down(" + what + ")", "bootstrap|part", [&] { (void)boot.scale_down(ct); });
      attempt(tally, "mod_raise(" + what + ")", "mod_raise|part", [&] { (void)boot.mod_raise(ct); });
      attempt(tally, "sub_sum(" + what + ")", "rotate|sub_sum|part|add", [&] { (void)boot.sub_sum(ct); });
      attempt(tally, "eval_mod(" + what + ")", "eval_mod", [&] { (void)boot.eval_mod(ct); });
      // CoeffToSlot and SlotToCoeff at a level they were not planned for (the top is CoeffToSlot's own).
      if (ct.level() != boot.levels().top || ct.slots() != boot.slots() || ct.size() != 2) {
        attempt(tally, "coeff_to_slot(" + what + ")", "", [&] { (void)boot.coeff_to_slot(ct); });
      }
      if (ct.level() != boot.levels().after_eval_mod || ct.slots() != boot.slots() || ct.size() != 2) {
        attempt(tally, "slot_to_coeff(" + what + ", itself)", "", [&] { (void)boot.slot_to_coeff(ct, ct); });
      }
    }
    // bootstrap itself: without keys every input is refused; with keys, a handful of full bootstraps (the ones
    // that pass the checks) at odd levels and scales.
    // With keys, the inputs that pass the checks bootstrap at level 1, at the top, at one level between (drawn) and
    // with odd scales and values; the other levels are left out to keep the file fast.
    const int middle = 2 + static_cast<int>(rng() % static_cast<std::uint64_t>(s.f.context->max_level() - 2));
    int bootstrapped = 0;
    for (std::size_t i = 0; i < in.cts.size(); ++i) {
      const Ciphertext& ct = in.cts[i];
      const bool runs = ct.context() == s.f.context && ct.level() >= 1 && ct.slots() == boot.slots() && ct.size() == 2;
      const bool plain_level = in.names[i].rfind("level ", 0) == 0;
      if (with_keys && runs && plain_level && ct.level() != 1 && ct.level() != s.f.context->max_level() &&
          ct.level() != middle)
        continue;
      const std::string call = "bootstrap(a ciphertext (" + in.names[i] + ")" + which + ")";
      Ciphertext out;
      const bool ok = attempt(tally, call, "bootstrap|part", [&] { out = boot.bootstrap(ct); });
      if (!with_keys) CHECK_FALSE(ok);
      if (ok) {
        ++bootstrapped;
        INFO(call);
        CHECK(out.level() == boot.levels().output);
        for (const Complex& z : s.f.decrypt(out)) CHECK(std::isfinite(z.real()));
      }
    }
    if (with_keys) CHECK(bootstrapped >= 3);
  }
  attempt<MissingKeyError>(tally, "set_keys(nullptr)", "set_keys", [&] { s.keyless.set_keys(nullptr); });
  attempt<MissingKeyError>(tally, "set_keys(BootstrapKeys{})", "set_keys",
                           [&] { s.keyless.set_keys(std::make_shared<const BootstrapKeys>()); });
  attempt<MismatchError>(tally, "generate_keys(another context's key generator)", "bootstrapping key generation",
                         [&] { (void)s.keyless.generate_keys(s.other.keygen); });
  // Keys from a request of odd Hamming weights are refused before any key is made.
  for (const int weight : {int_min, -1, 0, 1025, int_max}) {
    const BootstrapKeyRequest request{
        .rotation_steps = {}, .sparse_encapsulation = true, .ephemeral_hamming_weight = weight, .seed = std::nullopt};
    attempt<ParameterError>(tally, "generate_bootstrap_keys(ephemeral_hamming_weight " + std::to_string(weight) + ")",
                            "ephemeral_hamming_weight", [&] { (void)generate_bootstrap_keys(s.f.keygen, request); });
  }
  INFO(tally.succeeded << " calls succeeded, " << tally.typed << " threw cerium::Errors");
  CHECK(tally.succeeded > 3);
  CHECK(tally.typed > 30);
}
