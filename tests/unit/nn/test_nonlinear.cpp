// The non-linear layers against their exact functions: approximate() within max_error() and the stated target
// on fresh random points; forward on doubles (graph::PlainOps) is approximate(); traced, planned (bootstraps where
// the depth needs them) and run on ciphertexts at N = 2^12, they decrypt to the exact function within the
// approximation error plus a CKKS noise allowance; bad ranges are InvalidArgument naming the values.

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/eager.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/nn/nonlinear.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;
namespace nn = cerium::nn;

namespace {

// n points uniform over [lower, upper], and as many log-uniform ones on a positive range (where relative errors
// peak near the lower end).
std::vector<double> random_points(std::mt19937_64& rng, double lower, double upper, std::size_t n) {
  std::uniform_real_distribution<double> uniform(lower, upper);
  std::vector<double> points(n);
  for (double& x : points) x = uniform(rng);
  if (lower > 0) {
    std::uniform_real_distribution<double> exponent(std::log(lower), std::log(upper));
    for (std::size_t i = 0; i < n; ++i) points.push_back(std::exp(exponent(rng)));
  }
  return points;
}

// The largest error of approximate() against exact() over the points: absolute, or relative to exact().
template <class Layer>
double worst_error(const Layer& layer, const std::vector<double>& points, bool relative) {
  double worst = 0;
  for (const double x : points) {
    const double error = layer.approximate(x) - layer.exact(x);
    worst = std::max(worst, std::abs(relative ? error / layer.exact(x) : error));
  }
  return worst;
}

// forward on a slot vector of doubles is approximate() in every slot.
template <class Layer>
void check_forward_is_approximate(const Layer& layer, const std::vector<double>& points) {
  graph::PlainOps ops;
  const graph::PlainOps::Value y = layer.forward(ops, graph::PlainOps::Value(points.begin(), points.end()));
  REQUIRE(y.size() == points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double want = layer.approximate(points[i]);
    CHECK(std::abs(y[i].real() - want) <= 1e-12 * std::max(1.0, std::abs(want)));
  }
}

// A slot vector of whole rows: valid slots uniform over [lower, upper], padding 0.
std::vector<double> random_rows(std::mt19937_64& rng, const nn::RowLayout& layout, double lower, double upper) {
  std::uniform_real_distribution<double> uniform(lower, upper);
  std::vector<double> slots(layout.slots(), 0.0);
  for (std::size_t r = 0; r < layout.rows; ++r) {
    for (std::size_t f = 0; f < layout.features; ++f) slots[layout.slot(r, f)] = uniform(rng);
  }
  return slots;
}

// Rows of normal values with each row's (population) variance drawn log-uniformly from [lower, upper] and a mean
// within [-1, 1] (LayerNorm inputs over its variance range), or 0 (RmsNorm's: the mean square is the variance).
std::vector<double> rows_with_variances(std::mt19937_64& rng, const nn::RowLayout& layout, double lower, double upper,
                                        bool offset_mean = true) {
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> exponent(std::log(lower), std::log(upper)), offset(-1, 1);
  std::vector<double> slots(layout.slots(), 0.0);
  const auto n = static_cast<double>(layout.features);
  for (std::size_t r = 0; r < layout.rows; ++r) {
    std::vector<double> row(layout.features);
    double sum = 0, squares = 0;
    for (double& v : row) sum += (v = normal(rng));
    for (double& v : row) squares += (v - sum / n) * (v - sum / n);
    const double factor = std::sqrt(std::exp(exponent(rng)) / (squares / n));
    const double mean = offset_mean ? offset(rng) : 0.0;
    for (std::size_t f = 0; f < layout.features; ++f) slots[layout.slot(r, f)] = mean + (row[f] - sum / n) * factor;
  }
  return slots;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

constexpr std::size_t slots = 128;  // 8 rows of stride 16

// One key set-up for every encrypted test case: bootstrappable toy parameters at N = 2^12, 128 slots.
struct Encrypted {
  Fixture f;
  boot::Bootstrapper bootstrapper;
  Encrypted()
      : f(presets::bootstrappable_toy(12, 24), {.relinearization = true}),
        bootstrapper(f.context, boot::BootstrapConfig{.slots = slots}) {
    bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  }
};

Encrypted& encrypted_setup() {
  static Encrypted setup;
  return setup;
}

struct EncryptedRun {
  std::vector<double> values = {};  // decrypted real parts
  int bootstraps = 0;
  int levels_used = 0;  // input level minus output level (without bootstraps: the depth)
};

// `forward` traced from an input at `input_level` (-1: the top; a bootstrap's output level: as after the
// previous layer's refresh), planned with bootstraps where levels run out, run on an encryption of `input`.
template <class Forward>
EncryptedRun run_encrypted(Forward forward, const std::vector<double>& input, int input_level = -1) {
  Encrypted& e = encrypted_setup();
  graph::Tracer t(e.f.context);
  t.output(forward(t, t.input("x", slots, input_level)), "y");
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(e.bootstrapper);
  const graph::Plan plan = graph::plan(std::move(t).finish(), options);
  e.f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(e.f.keygen.galois_keys(plan.keys.steps)));
  std::vector<Ciphertext> inputs;
  const ckks::EncodeOptions encoding = plan.input_encoding(0);
  inputs.push_back(e.f.encryptor.encrypt(e.f.encoder.encode(Values(input.begin(), input.end()), encoding)));
  const auto out = graph::Executor<backend::CpuBackend>(plan, e.f.evaluator, &e.bootstrapper).run(std::move(inputs));
  const Values decoded = e.f.decrypt(out.at(0));
  EncryptedRun run{.bootstraps = plan.bootstraps(), .levels_used = encoding.level - out.at(0).level()};
  for (const auto& v : decoded) run.values.push_back(v.real());
  return run;
}

// -log2 of the largest absolute error.
double bits(double error) { return error == 0 ? 100.0 : -std::log2(error); }

}  // namespace

TEST_CASE("elementwise approximations meet their stated error; forward on doubles is approximate()",
          "[nn][nonlinear]") {
  auto rng = cerium_test::make_rng(501);
  INFO("test seed " << cerium_test::test_seed());
  const auto check = [&](const auto& layer, double lower, double upper, bool relative, double target) {
    const std::vector<double> points = random_points(rng, lower, upper, 2000);
    // The grid of max_error() is fine (8193 points, and as many geometric ones on a positive range): a random point
    // may find a peak a hair above it.
    CHECK(worst_error(layer, points, relative) <= layer.max_error() * 1.01 + 1e-15);
    CHECK(layer.max_error() <= target);
    check_forward_is_approximate(layer, std::vector<double>(points.begin(), points.begin() + slots));
  };

  SECTION("exp: least depth within the tolerance; squarings when asked for a low degree") {
    const nn::Exp exp;  // [-16, 0]
    CHECK(exp.depth() == 6);
    check(exp, -16, 0, false, 1e-6);
    const nn::Exp squared({.lower = -16, .upper = 0, .degree = 7});
    CHECK(squared.squarings() == 3);
    CHECK(squared.depth() == 5 + 3);
    check(squared, -16, 0, false, 1e-6);
    const nn::Exp scaled({.lower = -4, .upper = 0, .tolerance = 1e-6, .scale = 1.0 / 16});
    check(scaled, -4, 0, false, 1e-6 / 16);
  }
  SECTION("reciprocal: Newton in Goldschmidt's form from the best relative guess") {
    const nn::Reciprocal reciprocal;  // [1, 64]
    CHECK(reciprocal.depth() <= 9);
    check(reciprocal, 1, 64, true, 1e-6);
    const nn::Reciprocal linear({.lower = 1, .upper = 64, .tolerance = 1e-6, .guess_degree = 1});
    CHECK(linear.depth() == 2 + linear.iterations());  // guess 1 level, e = 1 - x y 1, one a step
    check(linear, 1, 64, true, 1e-6);
  }
  SECTION("inverse square root: a wide range and a narrow one") {
    const nn::InverseSqrt wide;  // [0.01, 100]
    CHECK(wide.depth() <= 15);
    check(wide, 0.01, 100, true, 1e-4);
    // The fitted steps: 1e-3 from a linear guess in 6 steps (Newton's 3/2 and 1/2 take 12).
    CHECK(nn::InverseSqrt({.tolerance = 1e-3, .guess_degree = 1}).iterations() <= 6);
    const nn::InverseSqrt narrow({.lower = 0.5, .upper = 2});
    CHECK(narrow.depth() <= 6);
    check(narrow, 0.5, 2, true, 1e-4);
  }
  SECTION("GELU, SiLU and tanh on [-8, 8]; 0 stays 0") {
    const nn::Gelu gelu;
    const nn::Silu silu;
    const nn::Tanh tanh;
    check(gelu, -8, 8, false, 1e-3);
    check(silu, -8, 8, false, 1e-4);
    check(tanh, -8, 8, false, 1e-4);
    CHECK(gelu.depth() <= 6);
    CHECK(silu.depth() <= 6);
    CHECK(tanh.depth() <= 7);
    for (const nn::PolynomialActivation* f : {static_cast<const nn::PolynomialActivation*>(&gelu),
                                               static_cast<const nn::PolynomialActivation*>(&silu),
                                               static_cast<const nn::PolynomialActivation*>(&tanh)}) {
      CHECK(std::abs(f->approximate(0.0)) < 1e-15);
    }
  }
}

TEST_CASE("row sums and means on a row layout; padding stays 0", "[nn][nonlinear]") {
  auto rng = cerium_test::make_rng(502);
  INFO("test seed " << cerium_test::test_seed());
  // Features at most half the stride (one window), more (select and copy), all of it, and a stride of 1.
  for (const nn::RowLayout layout : {nn::RowLayout{8, 5, 16}, nn::RowLayout{8, 8, 16}, nn::RowLayout{8, 12, 16},
                                     nn::RowLayout{8, 16, 16}, nn::RowLayout{16, 3, 8}, nn::RowLayout{4, 1, 2},
                                     nn::RowLayout{32, 1, 1}}) {
    INFO(layout.rows << " rows, " << layout.features << " features, stride " << layout.stride);
    const graph::PlainVector::Values mask = layout.mask().expanded(layout.slots());
    for (std::size_t r = 0; r < layout.rows; ++r) {
      for (std::size_t f = 0; f < layout.stride; ++f) CHECK(mask[layout.slot(r, f)] == (f < layout.features ? 1.0 : 0.0));
    }
    const std::vector<double> x = random_rows(rng, layout, -1, 1);
    std::vector<double> sums(x.size(), 0.0), means(x.size(), 0.0);
    for (std::size_t r = 0; r < layout.rows; ++r) {
      double total = 0;
      for (std::size_t f = 0; f < layout.features; ++f) total += x[layout.slot(r, f)];
      for (std::size_t f = 0; f < layout.features; ++f) {
        sums[layout.slot(r, f)] = total;
        means[layout.slot(r, f)] = total / static_cast<double>(layout.features);
      }
    }
    graph::PlainOps ops;
    const graph::PlainOps::Value input(x.begin(), x.end());
    const auto sum = nn::row_sum(ops, input, layout), mean = nn::row_mean(ops, input, layout);
    for (std::size_t i = 0; i < x.size(); ++i) {
      CHECK(std::abs(sum[i].real() - sums[i]) < 1e-12);
      CHECK(std::abs(mean[i].real() - means[i]) < 1e-12);
    }
    nn::nonlinear_detail::DepthOps depth;
    CHECK(nn::row_sum(depth, nn::nonlinear_detail::Level{}, layout).depth == (layout.stride == 1 ? 0 : 1));
  }
}

TEST_CASE("softmax, layer norm and RMS norm on doubles against the exact functions", "[nn][nonlinear]") {
  auto rng = cerium_test::make_rng(503);
  INFO("test seed " << cerium_test::test_seed());
  for (const nn::RowLayout layout : {nn::RowLayout{8, 12, 16}, nn::RowLayout{8, 5, 16}, nn::RowLayout{8, 16, 16}}) {
    INFO(layout.features << " features, stride " << layout.stride);
    const nn::Softmax softmax(layout, {.lower = -2, .upper = 2});
    CHECK(softmax.max_error() <= 1e-4);
    CHECK(softmax.depth() == softmax.exp().depth() + softmax.reciprocal().depth() + 1 +
                                 (2 * layout.features > layout.stride ? 1 : 0));
    double worst = 0;
    for (int i = 0; i < 4; ++i) {
      const std::vector<double> x = random_rows(rng, layout, -2, 2);
      const std::vector<double> got = softmax.approximate(x), want = softmax.exact(x);
      worst = std::max(worst, max_difference(got, want));
      for (std::size_t r = 0; r < layout.rows; ++r) {
        for (std::size_t f = layout.features; f < layout.stride; ++f) CHECK(std::abs(got[layout.slot(r, f)]) < 1e-12);
      }
    }
    CHECK(worst <= 2 * softmax.max_error());
    CHECK(worst <= 1e-4);

    std::vector<double> gamma(layout.features), beta(layout.features);
    for (std::size_t f = 0; f < layout.features; ++f) {
      gamma[f] = 0.5 + 0.1 * static_cast<double>(f % 7);
      beta[f] = -0.2 + 0.05 * static_cast<double>(f % 5);
    }
    const nn::LayerNorm norm(layout, {.gamma = gamma, .beta = beta, .variance_lower = 0.01, .variance_upper = 100});
    CHECK(norm.depth() == 4 + norm.inverse_sqrt().depth());
    const nn::RmsNorm rms(layout, {.gamma = gamma, .mean_square_lower = 0.01, .mean_square_upper = 100});
    CHECK(rms.depth() == 3 + rms.inverse_sqrt().depth());
    double worst_norm = 0, worst_rms = 0;
    for (int i = 0; i < 4; ++i) {
      const std::vector<double> x = rows_with_variances(rng, layout, 0.01, 100);
      const std::vector<double> got = norm.approximate(x);
      worst_norm = std::max(worst_norm, max_difference(got, norm.exact(x)));
      const std::vector<double> centered = rows_with_variances(rng, layout, 0.01, 100, false);
      worst_rms = std::max(worst_rms, max_difference(rms.approximate(centered), rms.exact(centered)));
      for (std::size_t r = 0; r < layout.rows; ++r) {
        for (std::size_t f = layout.features; f < layout.stride; ++f) CHECK(got[layout.slot(r, f)] == 0);
      }
    }
    // The inverse square root's relative error 1e-4 times |gamma (x - mean)| / sigma <= 1.1 sqrt(features).
    const double bound = 1e-4 * 1.1 * std::sqrt(static_cast<double>(layout.features));
    CHECK(norm.max_error() <= bound);
    CHECK(worst_norm <= std::max(2 * norm.max_error(), 1e-12));
    CHECK(worst_norm <= bound);
    CHECK(worst_rms <= bound);
  }
}

TEST_CASE("empty or non-positive ranges are InvalidArgument naming the values", "[nn][nonlinear]") {
  const auto throws_naming = [](auto make, const std::string& text) {
    try {
      make();
      FAIL("accepted: " << text);
    } catch (const InvalidArgument& e) {
      INFO(e.what());
      CHECK(message_contains(e, text));
    }
  };
  throws_naming([] { return nn::Exp({.lower = 0, .upper = 0}); }, "[0, 0]");
  throws_naming([] { return nn::Exp({.lower = 1, .upper = -1}); }, "[1, -1]");
  throws_naming([] { return nn::Reciprocal({.lower = 0, .upper = 4}); }, "[0, 4]");
  throws_naming([] { return nn::Reciprocal({.lower = 8, .upper = 2}); }, "[8, 2]");
  throws_naming([] { return nn::InverseSqrt({.lower = -1, .upper = 1}); }, "[-1, 1]");
  throws_naming([] { return nn::InverseSqrt({.lower = 2, .upper = 2}); }, "[2, 2]");
  throws_naming([] { return nn::Gelu({.bound = 0, .degree = 8}); }, "bound 0");
  throws_naming([] { return nn::Tanh({.bound = 4, .degree = 1}); }, "degree 1");
  const nn::RowLayout layout{8, 12, 16};
  throws_naming([&] { return nn::Softmax(layout, {.lower = 3, .upper = 3}); }, "[3, 3]");
  throws_naming([&] { return nn::LayerNorm(layout, {.variance_lower = 5, .variance_upper = 1}); }, "[5, 1]");
  throws_naming([&] { return nn::RmsNorm(layout, {.eps = 0, .mean_square_lower = 0, .mean_square_upper = 1}); },
                "[0, 1]");
  throws_naming([&] { return nn::LayerNorm(layout, {.gamma = {1.0, 2.0}}); }, "2 gamma values for 12 features");
  throws_naming([] { return nn::Softmax(nn::RowLayout{8, 12, 12}); }, "stride of 12");
  throws_naming([] { return nn::RowLayout{8, 20, 16}.validate(); }, "20 features in a stride of 16");
  throws_naming([] { return nn::RowLayout{6, 4, 16}.validate(); }, "6 rows");
}

TEST_CASE("the layers on ciphertexts (N = 2^12) decrypt to the exact functions", "[nn][nonlinear][encrypted][heavy]") {
  auto rng = cerium_test::make_rng(504);
  INFO("test seed " << cerium_test::test_seed());
  // The CKKS noise allowance on top of the approximation error: fresh encryptions at scale 2^56 keep about 2^-30
  // through these depths (1e-7 leaves room for the outputs' magnitudes); a bootstrap with the toy parameters is
  // good to about 2^-16 of values within [-1, 1], which the layers' last products scale by at most a few.
  const double leveled_noise = 1e-7, bootstrapped_noise = std::exp2(-12);  // not constexpr: clang's exp2 is not
  const auto elementwise = [&](const auto& layer, double lower, double upper, bool relative) {
    std::uniform_real_distribution<double> uniform(lower, upper);
    std::vector<double> x(slots);
    for (double& v : x) v = uniform(rng);
    const EncryptedRun run = run_encrypted([&](graph::Tracer& t, const graph::Value& v) { return layer.forward(t, v); }, x);
    CHECK(run.bootstraps == 0);
    CHECK(run.levels_used == layer.depth());
    double worst = 0, allowance = 0;
    for (std::size_t i = 0; i < slots; ++i) {
      const double want = layer.exact(x[i]);
      worst = std::max(worst, std::abs(run.values[i] - want));
      allowance = std::max(allowance, (relative ? std::abs(want) : 1.0) * layer.max_error() + leveled_noise);
    }
    CHECK(worst <= allowance);
    return bits(worst);
  };
  SECTION("elementwise, within the top levels") {
    CHECK(elementwise(nn::Exp(), -16, 0, false) > 19);
    CHECK(elementwise(nn::Reciprocal(), 1, 64, true) > 19);
    CHECK(elementwise(nn::InverseSqrt(), 0.01, 100, true) > 9);
    CHECK(elementwise(nn::Gelu(), -8, 8, false) > 9);
    CHECK(elementwise(nn::Silu(), -8, 8, false) > 12);
    CHECK(elementwise(nn::Tanh(), -8, 8, false) > 13);
  }
  const nn::RowLayout layout{8, 12, 16};
  SECTION("row reductions") {
    const std::vector<double> x = random_rows(rng, layout, -1, 1);
    graph::PlainOps ops;
    const auto want = nn::row_mean(ops, graph::PlainOps::Value(x.begin(), x.end()), layout);
    const EncryptedRun run =
        run_encrypted([&](graph::Tracer& t, const graph::Value& v) { return nn::row_mean(t, v, layout); }, x);
    CHECK(run.levels_used == 1);
    double worst = 0;
    for (std::size_t i = 0; i < slots; ++i) worst = std::max(worst, std::abs(run.values[i] - want[i].real()));
    CHECK(worst < leveled_noise);
  }
  // From a bootstrap's output level, as after the previous layer: the planner refreshes where levels run out.
  const int refreshed = encrypted_setup().bootstrapper.levels().output;
  const auto row_layer = [&](const auto& layer, const std::vector<double>& x) {
    const EncryptedRun run =
        run_encrypted([&](graph::Tracer& t, const graph::Value& v) { return layer.forward(t, v); }, x, refreshed);
    CHECK(run.bootstraps >= 1);
    const double worst = max_difference(run.values, layer.exact(x));
    CHECK(worst <= layer.max_error() + bootstrapped_noise);
    return std::pair{bits(worst), run.bootstraps};
  };
  SECTION("softmax with bootstraps") {
    const nn::Softmax softmax(layout, {.lower = -2, .upper = 2});
    CHECK(row_layer(softmax, random_rows(rng, layout, -2, 2)).first > 14);
  }
  SECTION("softmax eagerly: from the top level its depth fits without a bootstrap") {
    const nn::Softmax softmax(layout, {.lower = -2, .upper = 2});
    Encrypted& e = encrypted_setup();
    graph::Tracer t(e.f.context);  // traced only for the rotation steps it needs
    t.output(softmax.forward(t, t.input("x", slots)), "y");
    const graph::Plan plan = graph::plan(std::move(t).finish());
    e.f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(e.f.keygen.galois_keys(plan.keys.steps)));
    graph::Eager<backend::CpuBackend> eager(e.f.evaluator, &e.bootstrapper);
    const std::vector<double> x = random_rows(rng, layout, -2, 2);
    const int top = e.f.context->max_level();
    const Ciphertext y = softmax.forward(
        eager, eager.input(e.f.encryptor.encrypt(e.f.encoder.encode(Values(x.begin(), x.end()), eager.encoding(top, slots)))));
    CHECK(y.level() == top - softmax.depth());
    std::vector<double> got;
    for (const auto& v : e.f.decrypt(y)) got.push_back(v.real());
    CHECK(bits(max_difference(got, softmax.exact(x))) > 14);
    CHECK(max_difference(got, softmax.exact(x)) <= softmax.max_error() + leveled_noise);
  }
  SECTION("layer norm and RMS norm with bootstraps") {
    std::vector<double> gamma(layout.features, 1.0), beta(layout.features, 0.0);
    for (std::size_t f = 0; f < layout.features; ++f) {
      gamma[f] = 0.5 + 0.1 * static_cast<double>(f % 7);
      beta[f] = -0.2 + 0.05 * static_cast<double>(f % 5);
    }
    const nn::LayerNorm norm(layout, {.gamma = gamma, .beta = beta, .variance_lower = 0.25, .variance_upper = 4});
    CHECK(row_layer(norm, rows_with_variances(rng, layout, 0.25, 4)).first > 12);
    const nn::RmsNorm rms(layout, {.gamma = gamma, .mean_square_lower = 0.25, .mean_square_upper = 4});
    CHECK(row_layer(rms, rows_with_variances(rng, layout, 0.25, 4, false)).first > 12);
  }
}
