// Every layer against its plaintext reference: the slot-linear maps on doubles (graph::PlainOps) equal the nested
// loops exactly (to rounding), and traced, planned and run on ciphertexts (N = 2^12) they decrypt to the
// reference within the stated bound; ReLU polynomials against max(x, 0) within their approximation error, and the
// minimax ReLU encrypted (leveled, and bootstrapped inside where its depth exceeds the levels left) against its twin.

#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/eager.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/nn/layers.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;
namespace nn = cerium::nn;

namespace {

nn::Tensor random_tensor(nn::Shape shape, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  nn::Tensor t(shape);
  for (auto& v : t.values) v = d(rng);
  return t;
}

std::vector<double> normal(std::size_t n, std::mt19937_64& rng, double sd) {
  std::normal_distribution<double> d(0, sd);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

graph::PlainOps::Value slots_of(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// The layer on doubles through its slot map: the output tensor unpacked, after checking that every copy of the
// output packing holds it (the next layer reads across copies).
template <class Layer>
nn::Tensor on_slots(const Layer& layer, const nn::Tensor& x) {
  graph::PlainOps ops;
  const auto y = layer.forward(ops, slots_of(layer.layer().input_packing().pack(x)));
  std::vector<double> real(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) real[i] = y[i].real();
  const auto& out = layer.layer().output_packing();
  const std::vector<double> repacked = out.pack(out.unpack(real));
  for (std::size_t i = 0; i < real.size(); ++i) REQUIRE(std::abs(real[i] - repacked[i]) < 1e-12);
  return out.unpack(real);
}

double max_error(const nn::Tensor& a, const nn::Tensor& b) {
  REQUIRE(a.shape == b.shape);
  double e = 0;
  for (std::size_t i = 0; i < a.values.size(); ++i) e = std::max(e, std::abs(a.values[i] - b.values[i]));
  return e;
}

// A program `forward` traced from packing `in`, planned and run on an encryption of x: the decrypted output
// tensor in packing `out`, and the level it came out at.
template <class Forward>
std::pair<nn::Tensor, int> encrypted(Fixture& f, const nn::Packing& in, const nn::Packing& out, Forward forward,
                                     const nn::Tensor& x) {
  graph::Tracer t(f.context);
  t.output(forward(t, t.input("x", in.slots())), "y");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
  std::vector<Ciphertext> inputs;
  inputs.push_back(f.encryptor.encrypt(f.encoder.encode(in.pack(x), plan.input_encoding(0))));
  const auto result = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(std::move(inputs));
  const Values decoded = f.decrypt(result.at(0));
  std::vector<double> real(decoded.size());
  for (std::size_t i = 0; i < decoded.size(); ++i) real[i] = decoded[i].real();
  return {out.unpack(real), result.at(0).level()};
}

// One layer the same way.
template <class Layer>
nn::Tensor encrypted(Fixture& f, const Layer& layer, const nn::Tensor& x) {
  return encrypted(f, layer.layer().input_packing(), layer.layer().output_packing(),
                   [&](graph::Tracer& t, const graph::Value& v) { return layer.forward(t, v); }, x)
      .first;
}

}  // namespace

TEST_CASE("convolutions as slot maps equal the nested loops; encrypted within 2^-14", "[nn][conv]") {
  auto rng = cerium_test::make_rng(301);
  INFO("test seed " << cerium_test::test_seed());
  Fixture f(toy(12, 4, 2, 3), {.relinearization = true});
  const nn::Packing in(nn::Shape{2, 6, 6}, 128);
  struct Case {
    nn::Conv2dSpec spec;
    bool batch_norm;
  };
  const std::vector<Case> cases = {
      {{.in_channels = 2, .out_channels = 3}, false},                                     // 3x3, stride 1, pad 1
      {{.in_channels = 2, .out_channels = 3, .stride = 2}, true},                         // stride 2
      {{.in_channels = 2, .out_channels = 4, .kernel = 1, .stride = 2, .padding = 0}, true},  // 1x1 downsample
      {{.in_channels = 2, .out_channels = 2, .kernel = 3, .stride = 1, .padding = 0}, false},  // valid
  };
  for (const auto& c : cases) {
    INFO("kernel " << c.spec.kernel << ", stride " << c.spec.stride << ", padding " << c.spec.padding);
    const nn::BatchNorm bn{.gamma = normal(c.spec.out_channels, rng, 1), .beta = normal(c.spec.out_channels, rng, 0.1),
                           .mean = normal(c.spec.out_channels, rng, 0.1), .var = std::vector<double>(c.spec.out_channels, 1.5)};
    const nn::Conv2d conv(c.spec, normal(c.spec.out_channels * c.spec.in_channels * c.spec.kernel * c.spec.kernel, rng, 0.4),
                          normal(c.spec.out_channels, rng, 0.1), in, c.batch_norm ? &bn : nullptr);
    const nn::Tensor x = random_tensor(in.shape(), rng);
    const nn::Tensor want = conv.reference(x);
    CHECK(max_error(on_slots(conv, x), want) < 1e-12);
    // Shift-invariant maps (multiplexed gaps): diagonals by kernel tap and channel pair, not by pixel (with
    // power-of-two planes the cyclic copies bring it down to C_in k^2 s^2, as in ResNet-20).
    const std::size_t taps = c.spec.kernel * c.spec.kernel * c.spec.stride * c.spec.stride;
    CHECK(conv.layer().map().diagonals() <= (c.spec.in_channels + c.spec.out_channels - 1) * taps);
    CHECK(max_error(encrypted(f, conv, x), want) < std::exp2(-14));
  }
  // Batch norm folded: the same as the convolution then the normalization.
  const nn::BatchNorm bn{.gamma = {1.5, 0.5}, .beta = {0.25, -0.25}, .mean = {0.1, -0.2}, .var = {2.0, 0.5}};
  const std::vector<double> w = normal(2 * 2 * 9, rng, 0.3), b = {0.05, -0.05};
  const nn::Conv2d plain({.in_channels = 2, .out_channels = 2}, w, b, in);
  const nn::Conv2d folded({.in_channels = 2, .out_channels = 2}, w, b, in, &bn);
  const nn::Tensor x = random_tensor(in.shape(), rng);
  nn::Tensor want = plain.reference(x);
  for (std::size_t c = 0; c < 2; ++c) {
    for (std::size_t i = 0; i < 36; ++i) {
      double& v = want.values[c * 36 + i];
      v = bn.gamma[c] * (v - bn.mean[c]) / std::sqrt(bn.var[c] + bn.eps) + bn.beta[c];
    }
  }
  CHECK(max_error(folded.reference(x), want) < 1e-12);
  CHECK_THROWS_AS(nn::Conv2d({.in_channels = 3, .out_channels = 2}, w, b, in), InvalidArgument);  // 2 channels in

  // Diagonals made on demand from the map's entries give the words of the materialized matrix.
  graph::Eager<backend::CpuBackend> eager(f.evaluator);
  const circuits::DiagonalMatrix matrix = plain.layer().map().matrix();
  f.evaluator.set_galois_keys(
      std::make_shared<const GaloisKeys>(f.keygen.galois_keys(circuits::plan_bsgs(matrix).rotation_steps())));
  const Ciphertext ct = eager.input(f.encryptor.encrypt(f.encoder.encode(in.pack(x), eager.encoding(3, in.slots()))));
  const auto on_demand = graph::multiply(eager, ct, std::make_shared<const nn::SlotMap>(plain.layer().map()));
  const auto materialized = graph::multiply(eager, ct, matrix);
  CHECK(same_words(on_demand, materialized));
}

TEST_CASE("pooling and dense layers as slot maps; encrypted within 2^-14", "[nn][dense]") {
  auto rng = cerium_test::make_rng(302);
  Fixture f(toy(12, 4, 2, 3), {.relinearization = true});
  const nn::Packing in(nn::Shape{4, 4, 4}, 64);
  const nn::GlobalAveragePool pool(in);
  const nn::Tensor x = random_tensor(in.shape(), rng);
  CHECK(max_error(on_slots(pool, x), pool.reference(x)) < 1e-12);
  CHECK(max_error(encrypted(f, pool, x), pool.reference(x)) < std::exp2(-14));

  const nn::Dense dense(3, normal(3 * 4, rng, 0.5), normal(3, rng, 0.1), pool.layer().output_packing());
  const nn::Tensor p = pool.reference(x);
  CHECK(max_error(on_slots(dense, p), dense.reference(p)) < 1e-12);
  CHECK(max_error(encrypted(f, dense, p), dense.reference(p)) < std::exp2(-14));
}

TEST_CASE("ReLU polynomials approximate max(x, 0) on their range and say when an input leaves it", "[nn][relu]") {
  const double bound = 4;
  const auto check = [&](const nn::Relu& relu, double tolerance, double away_from_zero) {
    graph::PlainOps ops;
    graph::PlainOps::Value x;
    for (double v = -bound; v <= bound; v += 0.01) x.push_back(v);
    const auto y = relu.forward(ops, x);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double v = x[i].real();
      if (std::abs(v) < away_from_zero) continue;
      CHECK(std::abs(y[i].real() - std::max(v, 0.0)) < tolerance);
    }
  };
  // f composed 4 times moves |t| >= 0.1 to within 2^-10 of sign(t), 5 times to within 2^-31 (computed in the
  // test's comment: relu error = |x| (1 - f^s(|x| / bound)) / 2).
  check(nn::Relu::composite(bound, 4), 1e-3, 0.1 * bound);
  check(nn::Relu::composite(bound, 5), 1e-8, 0.1 * bound);
  check(nn::Relu::interpolated(bound, 31), 0.1, 0.0);
  const nn::Relu relu = nn::Relu::composite(bound, 2);
  nn::Tensor t(nn::Shape{1, 1, 2}, {1.0, -5.0});
  CHECK_THROWS_AS(relu.reference(t, "ReLU 3"), InvalidArgument);
}

TEST_CASE("the minimax ReLU is within error |x| / 2 of max(x, 0) away from 0 and within |x| / 2 near it",
          "[nn][relu][minimax]") {
  auto rng = cerium_test::make_rng(304);
  INFO("test seed " << cerium_test::test_seed());
  const double bound = 4;
  const nn::Relu relu = nn::Relu::minimax(bound);  // degrees {15, 15, 27}, eps 2^-9
  REQUIRE(relu.sign_design().has_value());
  const circuits::CompositeSign& design = *relu.sign_design();
  CHECK(design.eps == std::exp2(-9));
  CHECK(design.error < std::exp2(-13));  // 9.94e-5 = 2^-13.3
  CHECK_FALSE(nn::Relu::composite(bound, 3).sign_design().has_value());

  std::uniform_real_distribution<double> d(-bound, bound), near(-design.eps * bound, design.eps * bound);
  graph::PlainOps ops;
  graph::PlainOps::Value x;
  for (int i = 0; i < 20000; ++i) x.push_back(i % 4 == 0 ? near(rng) : d(rng));
  const auto y = relu.forward(ops, x);
  double worst_away = 0, worst_near = 0;  // error / |x|
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i].real(), relative = std::abs(y[i].real() - std::max(v, 0.0)) / std::abs(v);
    double& worst = std::abs(v) >= design.eps * bound ? worst_away : worst_near;
    worst = std::max(worst, relative);
  }
  INFO("error / |x|: " << worst_away << " away from 0, " << worst_near << " near 0");
  CHECK(worst_away <= design.error / 2 * (1 + 1e-6));
  CHECK(worst_near <= 0.5);

  CHECK_THROWS_AS(nn::Relu::minimax(0, {15, 15, 27}), InvalidArgument);
  CHECK_THROWS_AS(nn::Relu::minimax(bound, {15, 14}), InvalidArgument);
  CHECK_THROWS_AS(nn::Relu::minimax(bound, {15, 15, 27}, 1.5), InvalidArgument);
}

TEST_CASE("the minimax ReLU traced, planned and run encrypted decrypts to its plaintext twin", "[nn][relu][minimax]") {
  auto rng = cerium_test::make_rng(305);
  INFO("test seed " << cerium_test::test_seed());
  const double bound = 4;
  const nn::Relu relu = nn::Relu::minimax(bound);
  // 17 levels: x / bound, 5 per stage (graph::evaluate at degrees 15, 15, 27), the product with x.
  constexpr int depth = 17;
  Fixture f(toy(12, depth + 1, 2, 3), {.relinearization = true});
  const nn::Packing in(nn::Shape{1, 16, 16}, 256);
  nn::Tensor x = random_tensor(in.shape(), rng);
  for (auto& v : x.values) v *= bound;
  x.values[0] = 0;  // at, near and across the transition
  x.values[1] = 1e-4;
  x.values[2] = -relu.sign_design()->eps * bound;
  const auto [got, level] = encrypted(
      f, in, in, [&](graph::Tracer& t, const graph::Value& v) { return relu.forward(t, v); }, x);
  graph::PlainOps plain;
  const auto packed = in.pack(x);
  const auto twin = relu.forward(plain, graph::PlainOps::Value(packed.begin(), packed.end()));
  const circuits::CompositeSign& design = *relu.sign_design();
  double to_twin = 0, over_stated = 0;  // the latter: beyond the stated ReLU error
  for (std::size_t i = 0; i < x.values.size(); ++i) {
    const double v = x.values[i];
    to_twin = std::max(to_twin, std::abs(got.values[i] - twin[i].real()));
    const double stated = std::abs(v) * (std::abs(v) >= design.eps * bound ? design.error : 1) / 2;
    over_stated = std::max(over_stated, std::abs(got.values[i] - std::max(v, 0.0)) - stated);
  }
  INFO("max error to the twin " << to_twin << " = 2^" << std::log2(to_twin) << "; beyond the stated ReLU error "
                                << over_stated);
  CHECK(level == f.context->max_level() - depth);
  CHECK(to_twin < std::exp2(-30));  // measured 2^-42
  CHECK(over_stated < std::exp2(-30));
}

TEST_CASE("a minimax ReLU deeper than the levels left: the planner bootstraps inside it", "[nn][relu][minimax]") {
  auto rng = cerium_test::make_rng(306);
  INFO("test seed " << cerium_test::test_seed());
  constexpr std::size_t slots = 256;
  const double bound = 4;
  const nn::Relu relu = nn::Relu::minimax(bound);
  Fixture f(presets::bootstrappable_toy(12, 24), {.relinearization = true});
  boot::Bootstrapper bootstrapper(f.context, boot::BootstrapConfig{.slots = slots});
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  // The input as a bootstrap leaves it (8 levels): the ReLU's 17 need two more bootstraps.
  graph::Tracer t(f.context);
  t.output(relu.forward(t, t.input("x", slots, bootstrapper.levels().output)), "y");
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(bootstrapper);
  const graph::Plan plan = graph::plan(std::move(t).finish(), options);
  CHECK(plan.bootstraps() == 2);
  f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));

  std::uniform_real_distribution<double> d(-bound, bound);
  std::vector<double> x(slots);
  for (auto& v : x) v = d(rng);
  std::vector<Ciphertext> inputs;
  inputs.push_back(f.encryptor.encrypt(f.encoder.encode(x, plan.input_encoding(0))));
  const auto out = graph::Executor<backend::CpuBackend>(plan, f.evaluator, &bootstrapper).run(std::move(inputs));
  const Values decoded = f.decrypt(out.at(0));
  graph::PlainOps plain;
  const auto twin = relu.forward(plain, graph::PlainOps::Value(x.begin(), x.end()));
  double to_twin = 0;
  for (std::size_t i = 0; i < slots; ++i) to_twin = std::max(to_twin, std::abs(decoded[i].real() - twin[i].real()));
  INFO("max error to the twin " << to_twin << " = 2^" << std::log2(to_twin));
  CHECK(to_twin < std::exp2(-16));  // measured 2^-23.6: the bootstraps' precision, amplified near the transition
}

TEST_CASE("a stride-2 convolution, pooling and a dense layer chained in one program", "[nn][chain]") {
  auto rng = cerium_test::make_rng(303);
  Fixture f(toy(12, 6, 2, 3), {.relinearization = true});
  const nn::Packing in(nn::Shape{2, 8, 8}, 256);
  const nn::Conv2d conv({.in_channels = 2, .out_channels = 4, .stride = 2}, normal(4 * 2 * 9, rng, 0.3),
                        normal(4, rng, 0.1), in);
  const nn::GlobalAveragePool pool(conv.layer().output_packing());
  const nn::Dense dense(3, normal(3 * 4, rng, 0.5), normal(3, rng, 0.1), pool.layer().output_packing());
  const nn::Tensor x = random_tensor(in.shape(), rng);
  const auto [got, level] = encrypted(
      f, in, dense.layer().output_packing(),
      [&](graph::Tracer& t, const graph::Value& v) { return dense.forward(t, pool.forward(t, conv.forward(t, v))); },
      x);
  const nn::Tensor want = dense.reference(pool.reference(conv.reference(x)));
  CHECK(max_error(got, want) < std::exp2(-14));
  CHECK(level == f.context->max_level() - 3);
}
