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

constexpr int kSteps = 9;  // products, each with a rotation after it

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

Measured chain_error(int narrow_levels, bool rotations) {
  // 12 levels: the top 2 wide (fresh encryption noise at 2^56 does not count), the others narrow or wide.
  const CkksConfig config{.log_n = 12, .levels = kSteps + 2, .level_width = 2, .level_prime_bits = 28, .dnum = 2,
                          .insecure_opt_out = true, .narrow_levels = narrow_levels};
  Fixture f(config, {.relinearization = false, .rotations = {1}});
  graph::Tracer t(f.context);
  auto x = t.input("x");
  // From the top wide level, the first product lands on the highest narrow level: every later one is narrow.
  for (int i = 0; i < kSteps; ++i) {
    x = t.multiply(x, 0.97);
    if (rotations) x = t.rotate(x, 1);
  }
  t.output(x, "y");
  const graph::Plan plan = graph::plan(std::move(t).finish(), graph::PlanOptions{});

  auto rng = cerium_test::make_rng(95);
  const Values input = random_complex(rng, f.max_slots());
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
  const double overflow = (alpha - 1) * (alpha - 1) / 4 + alpha / 12;
  CHECK(dense.key_switch == Catch::Approx(std::sqrt(4096.0 * ((1 + h) / 12 + h * overflow) / 2)));
  CHECK(dense.key_switch > dense.rescale);
  const auto sparse = Context::create({.log_n = 12, .levels = 3, .secret = SecretDistribution::hamming_weight,
                                       .hamming_weight = 64, .insecure_opt_out = true});
  CHECK(graph::rounding_noise(sparse->parameters()).rescale == Catch::Approx(std::sqrt(4096.0 * 65 / 24)));
}

TEST_CASE("rounding noise: the simulator predicts an encrypted chain's error on narrow and wide levels",
          "[graph][simulate][noise]") {
  INFO("test seed " << cerium_test::test_seed());
  const bool rotations = GENERATE(false, true);
  INFO("rotations " << rotations);
  const Measured narrow = chain_error(kSteps, rotations);
  const Measured wide = chain_error(0, rotations);
  WARN("9 products" << (rotations ? " and rotations" : "") << ", error (rms): narrow levels encrypted "
       << narrow.encrypted << ", simulated " << narrow.simulated << "; wide encrypted " << wide.encrypted
       << ", simulated " << wide.simulated);
  // Narrow: about 2^-20 a rescale at 2^30 and N = 2^12, ten times that a key switch; the model within a factor
  // of 2 of the run.
  CHECK(narrow.encrypted > 1e-7);
  CHECK(narrow.simulated > narrow.encrypted / 2);
  CHECK(narrow.simulated < narrow.encrypted * 2);
  // Wide: the same rounding divided by 2^56 instead of 2^30 (and the fresh encryption's noise at 2^56), far below
  // anything a model notices.
  CHECK(wide.encrypted < narrow.encrypted * 1e-4);
  CHECK(wide.simulated < narrow.simulated * 1e-4);
}
