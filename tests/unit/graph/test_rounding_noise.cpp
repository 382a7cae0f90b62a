// The simulator's rounding noise (graph::BootstrapNoise::rounding, graph::rounding_noise) against encrypted runs:
// a chain of rotations and constant products on narrow levels (scale about 2^30) and on wide ones (2^56), its
// error over the slots as the model predicts it. The model is what tells a user, before an encrypted run, that
// a program's polynomials amplify the narrow levels' rounding beyond what its outputs tolerate.

#include <cmath>
#include <complex>
#include <vector>

#include "cerium/graph/executor.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/tracer.hpp"
#include "support/catch.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;

namespace {

constexpr int kSteps = 9;  // products

// Root mean square of a - b over every slot's real and imaginary parts.
double rms_difference(const graph::SlotValues& a, const graph::SlotValues& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += std::norm(a[i] - b[i]);
  return std::sqrt(sum / (2.0 * static_cast<double>(a.size())));
}

struct Measured {
  double encrypted = 0;  // the encrypted run's error, root mean square over the slots
  double simulated = 0;  // the simulator's, with rounding noise
};

enum class Chain { constants, rotations, products };

const char* describe(Chain c) {
  return c == Chain::constants ? "products by 0.97" : c == Chain::rotations ? "products by 0.97 and rotations"
                                                                            : "ciphertext products";
}

Measured chain_error(int narrow_levels, Chain chain) {
  // 11 levels: the top 2 wide (fresh encryption noise at 2^56 does not count), the others narrow or wide.
  const CkksConfig config{.log_n = 12, .levels = kSteps + 2, .level_width = 2, .level_prime_bits = 28, .dnum = 2,
                          .insecure_opt_out = true, .narrow_levels = narrow_levels};
  Fixture f(config, {.relinearization = true, .rotations = {1}});
  graph::Tracer t(f.context);
  const auto u = t.input("u");
  auto x = u;
  // From the top wide level, the first product lands on the highest narrow level: every later one is narrow.
  // The inputs have modulus 1, so every value keeps it: the noise is neither shrunk nor amplified.
  for (int i = 0; i < kSteps; ++i) {
    x = chain == Chain::products ? t.multiply(x, u) : t.multiply(x, 0.97);
    if (chain == Chain::rotations) x = t.rotate(x, 1);
  }
  t.output(x, "y");
  const graph::Plan plan = graph::plan(std::move(t).finish(), graph::PlanOptions{});

  auto rng = cerium_test::make_rng(95);
  Values input = random_complex(rng, f.max_slots());
  for (auto& v : input) v = std::polar(1.0, std::arg(v) + 0.1);
  const graph::SlotValues slots(input.begin(), input.end());
  const graph::SlotValues exact = graph::simulate_outputs(plan.program, {slots}).at(0);
  std::vector<Ciphertext> inputs;
  inputs.push_back(f.encryptor.encrypt(f.encoder.encode(input, plan.input_encoding(0))));
  const auto out = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(std::move(inputs));
  const Values decrypted = f.decrypt(out.at(0));
  const graph::BootstrapNoise noise{.rounding = graph::rounding_noise(f.context->parameters())};
  return {.encrypted = rms_difference(graph::SlotValues(decrypted.begin(), decrypted.end()), exact),
          .simulated = rms_difference(graph::simulate_outputs_noisy(plan, {slots}, noise).at(0), exact)};
}

}  // namespace

TEST_CASE("rounding noise: the formula", "[graph][simulate][noise]") {
  // N = 2^12, uniform ternary secret (2N/3 nonzeros): a rescale's sqrt(4096 (1 + 2730.7) / 24) = 682.6.
  const auto context = Context::create({.log_n = 12, .levels = 3, .insecure_opt_out = true});
  const double h = 8192.0 / 3, alpha = static_cast<double>(context->parameters().alpha());
  const graph::RoundingNoise dense = graph::rounding_noise(context->parameters());
  CHECK(dense.rescale == Catch::Approx(std::sqrt(4096.0 * (1 + h) / 24)));
  const double offset = (alpha - 1) / 2 - std::floor((alpha - 1) / 2);  // the mean of u less the ModDown's k
  const double overflow = offset * offset + alpha / 12;
  CHECK(dense.key_switch == Catch::Approx(std::sqrt(4096.0 * ((1 + h) / 12 + h * overflow) / 2)));
  CHECK(dense.key_switch > dense.rescale);
  const auto sparse = Context::create({.log_n = 12, .levels = 3, .secret = SecretDistribution::hamming_weight,
                                       .hamming_weight = 64, .insecure_opt_out = true});
  CHECK(graph::rounding_noise(sparse->parameters()).rescale == Catch::Approx(std::sqrt(4096.0 * 65 / 24)));
}

TEST_CASE("rounding noise: the simulator predicts an encrypted chain's error on narrow and wide levels",
          "[graph][simulate][noise]") {
  INFO("test seed " << cerium_test::test_seed());
  const Chain chain = GENERATE(Chain::constants, Chain::rotations, Chain::products);
  INFO(describe(chain));
  const Measured narrow = chain_error(kSteps, chain);
  const Measured wide = chain_error(0, chain);
  WARN("9 " << describe(chain) << ", error (rms): narrow levels encrypted "
       << narrow.encrypted << ", simulated " << narrow.simulated << "; wide encrypted " << wide.encrypted
       << ", simulated " << wide.simulated);
  // Narrow: about 2^-20 a rescale at 2^30 and N = 2^12, about 3 times that a key switch (its ModDown centered);
  // the model within a factor of 2 of the run.
  CHECK(narrow.encrypted > 1e-7);
  CHECK(narrow.simulated > narrow.encrypted / 2);
  CHECK(narrow.simulated < narrow.encrypted * 2);
  // Wide: the same rounding divided by 2^56 instead of 2^30 (and the fresh encryption's noise at 2^56), far below
  // anything a model notices.
  CHECK(wide.encrypted < narrow.encrypted * 1e-4);
  CHECK(wide.simulated < narrow.simulated * 1e-4);
}
