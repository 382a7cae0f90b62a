// Reciprocal::multiply_inverse: targets times scale / x with the iterations run on the targets. On doubles it
// meets the reciprocal's tolerance; planned with bootstraps inside the guess and simulated with noise on every
// bootstrapped value, it removes that noise where forward-then-multiply keeps it (x spanning 2^11, as a softmax's
// totals do).

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <span>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/nn/nonlinear.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;

namespace {

constexpr std::size_t kSlots = 64;
constexpr double kLower = 0.05, kUpper = 128;

// x spread log-uniformly over [kLower, kUpper] (every scale present), targets in [0, 1].
using Inputs = std::vector<graph::SlotValues>;  // x, then the targets

Inputs draw(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> log_x(std::log(kLower), std::log(kUpper)), unit(0, 1);
  Inputs in(2, graph::SlotValues(kSlots));
  for (std::size_t i = 0; i < kSlots; ++i) {
    in[0][i] = std::exp(log_x(rng));
    in[1][i] = unit(rng);
  }
  return in;
}

// The worst relative error of out against t scale / x.
double worst_relative(const graph::SlotValues& out, const Inputs& in, double scale) {
  double worst = 0;
  for (std::size_t i = 0; i < kSlots; ++i) {
    const double want = in[1][i].real() * scale / in[0][i].real();
    if (want > 1e-3) worst = std::max(worst, std::abs(out[i].real() / want - 1));
  }
  return worst;
}

}  // namespace

TEST_CASE("multiply_inverse meets the reciprocal's tolerance on doubles", "[nn][nonlinear]") {
  auto rng = cerium_test::make_rng(811);
  INFO("test seed " << cerium_test::test_seed());
  const nn::Reciprocal reciprocal({.lower = kLower, .upper = kUpper, .tolerance = 1e-5, .scale = 0.125});
  const Inputs in = draw(rng);
  graph::PlainOps ops;
  std::vector<graph::SlotValues> targets{in[1], in[1]};
  reciprocal.multiply_inverse(ops, in[0], targets);
  for (const auto& t : targets) CHECK(worst_relative(t, in, 0.125) <= 1.5e-5);
}

TEST_CASE("multiply_inverse takes out the noise of bootstraps inside the guess", "[nn][nonlinear]") {
  auto rng = cerium_test::make_rng(812);
  INFO("test seed " << cerium_test::test_seed());
  const auto context = ckks::Context::create(
      {.log_n = 11, .levels = 8, .level_width = 2, .level_prime_bits = 28, .dnum = 2, .insecure_opt_out = true});
  const nn::Reciprocal reciprocal({.lower = kLower, .upper = kUpper, .tolerance = 1e-5, .scale = 0.125});
  REQUIRE(reciprocal.depth() > 5);  // deeper than a refresh leaves: bootstraps fall inside the guess

  // Both ways on the same inputs, x kept exact (never bootstrapped) in both.
  const auto trace = [&](bool on_targets) {
    graph::Tracer t(context);
    const graph::Value x = t.input("x", kSlots), target = t.input("t", kSlots);
    graph::keep_exact(t, x, std::span<const graph::Value>());
    std::vector<graph::Value> targets{target};
    if (on_targets) {
      reciprocal.multiply_inverse(t, x, targets);
    } else {
      targets[0] = t.multiply(target, reciprocal.forward(t, x));
    }
    t.output(targets[0], "y");
    return std::move(t).finish();
  };
  graph::PlanOptions options;
  options.bootstrap = graph::BootstrapSpec{.output_level = 5, .output_scale = context->parameters().default_scale(),
                                           .min_input_level = 1, .slots = kSlots};
  const Inputs in = draw(rng);
  const graph::BootstrapNoise noise{.absolute = std::exp2(-17)};
  double error[2] = {0, 0};
  for (const bool on_targets : {false, true}) {
    const graph::Plan plan = graph::plan(trace(on_targets), options);
    REQUIRE(plan.bootstraps() >= 1);
    CHECK_FALSE(plan.nodes[0].bootstrap);
    error[on_targets] = worst_relative(graph::simulate_outputs_noisy(plan, in, noise)[0], in, 0.125);
  }
  INFO("forward then multiply: " << error[0] << ", multiply_inverse: " << error[1]);
  CHECK(error[0] > 1e-3);  // 2^-17 on the mapped input is up to 2^-6 relative on the smallest x
  CHECK(error[1] < 1e-4);
}
