// Token-wise linear layers and multi-head self-attention on row-packed slots against direct matrix arithmetic:
// on doubles (graph::PlainOps) to rounding, and the linear layer on ciphertexts (N = 2^12) within 2^-14.

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "cerium/graph/executor.hpp"
#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/nn/attention.hpp"
#include "cerium/nn/nonlinear.hpp"
#include "cerium/nn/row_linear.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "unit/nn/exact_functions.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;
namespace nn = cerium::nn;

namespace {

std::vector<double> normal(std::size_t n, std::mt19937_64& rng, double sd) {
  std::normal_distribution<double> d(0, sd);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// rows x features (row-major) into the layout's slots, padding 0; and back.
graph::PlainOps::Value pack(const nn::RowLayout& l, const std::vector<double>& m) {
  graph::PlainOps::Value slots(l.slots(), 0.0);
  for (std::size_t r = 0; r < l.rows; ++r) {
    for (std::size_t f = 0; f < l.features; ++f) slots[l.slot(r, f)] = m[r * l.features + f];
  }
  return slots;
}

// The values, after checking that the padding slots hold (nearly) 0.
std::vector<double> unpack(const nn::RowLayout& l, const std::vector<std::complex<double>>& slots, double tolerance) {
  std::vector<double> m(l.rows * l.features);
  for (std::size_t r = 0; r < l.rows; ++r) {
    for (std::size_t f = 0; f < l.stride; ++f) {
      if (f < l.features) {
        m[r * l.features + f] = slots[l.slot(r, f)].real();
      } else {
        REQUIRE(std::abs(slots[l.slot(r, f)]) <= tolerance);
      }
    }
  }
  return m;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

}  // namespace

TEST_CASE("a token-wise linear layer is a periodic slot map: exact on doubles, encrypted within 2^-14",
          "[nn][attention][row_linear]") {
  auto rng = cerium_test::make_rng(501);
  INFO("test seed " << cerium_test::test_seed());
  const nn::RowLayout in{.rows = 8, .features = 12, .stride = 16};
  for (const std::size_t outputs : {5u, 12u, 16u}) {
    INFO(outputs << " outputs");
    const nn::RowLayout out{.rows = 8, .features = outputs, .stride = 16};
    const nn::RowLinear layer(in, out, normal(outputs * 12, rng, 0.3), normal(outputs, rng, 0.1));
    CHECK(layer.map().offsets().size() == 12 + outputs - 1);
    CHECK(layer.map().period() == 16);
    const std::vector<double> x = normal(8 * 12, rng, 1);
    graph::PlainOps ops;
    const std::vector<double> got = unpack(out, layer.forward(ops, pack(in, x)), 1e-12);
    CHECK(max_difference(got, layer.reference(x)) < 1e-12);
  }
  CHECK_THROWS_AS(nn::RowLinear(in, {.rows = 8, .features = 12, .stride = 16}, std::vector<double>(100), {}),
                  InvalidArgument);
  CHECK_THROWS_AS(nn::RowLinear(in, {.rows = 4, .features = 12, .stride = 32}, std::vector<double>(144), {}),
                  InvalidArgument);
  CHECK_THROWS_AS(nn::RowLayout({.rows = 8, .features = 20, .stride = 16}).validate(), InvalidArgument);

  // Encrypted: traced, planned and run; the compressed diagonals encode to the same product.
  Fixture f(toy(12, 3, 2, 3), {.relinearization = true});
  const nn::RowLayout wide{.rows = 64, .features = 12, .stride = 16};  // 1024 slots
  const nn::RowLinear layer(wide, wide, normal(144, rng, 0.3), normal(12, rng, 0.1));
  const std::vector<double> x = normal(64 * 12, rng, 0.5);
  graph::Tracer t(f.context);
  t.output(layer.forward(t, t.input("x", wide.slots())), "y");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  for (const graph::Node& node : plan.program.nodes()) {  // every diagonal travels as its 16-value period
    if (node.op == graph::Op::multiply_plain) CHECK(node.plain.period() == 16);
  }
  f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
  std::vector<Ciphertext> inputs;
  inputs.push_back(f.encryptor.encrypt(f.encoder.encode(pack(wide, x), plan.input_encoding(0))));
  const auto result = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(std::move(inputs));
  const std::vector<double> got = unpack(wide, f.decrypt(result.at(0)), std::exp2(-14));
  CHECK(max_difference(got, layer.reference(x)) < std::exp2(-14));
}

TEST_CASE("a token-wise linear layer masked at its outputs, and several summed with shared giant steps",
          "[nn][attention]") {
  auto rng = cerium_test::make_rng(503);
  const nn::RowLayout in{.rows = 4, .features = 12, .stride = 16}, out{.rows = 4, .features = 10, .stride = 16};
  const std::vector<double> x = normal(4 * 12, rng, 1), x2 = normal(4 * 12, rng, 1);
  const nn::RowLinear layer(in, out, normal(10 * 12, rng, 0.3), normal(10, rng, 0.1));
  const nn::RowLinear other(in, out, normal(10 * 12, rng, 0.3), {});
  std::vector<double> mask(10);
  for (auto& m : mask) m = static_cast<double>(rng() % 2);
  const nn::RowLinear masked = layer.masked_outputs(mask);
  std::vector<double> want = layer.reference(x);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] *= mask[i % 10];
  CHECK(max_difference(masked.reference(x), want) < 1e-12);
  graph::PlainOps ops;
  CHECK(max_difference(unpack(out, masked.forward(ops, pack(in, x)), 1e-12), want) < 1e-12);
  CHECK_THROWS_AS(layer.masked_outputs(std::vector<double>(9, 1.0)), InvalidArgument);
  // layer x + other x2 by forward_sum: the two references added.
  const std::vector<graph::PlainOps::Value> xs{pack(in, x), pack(in, x2)};
  const std::vector<const nn::RowLinear*> layers{&layer, &other};
  std::vector<double> sum = layer.reference(x);
  const std::vector<double> second = other.reference(x2);
  for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += second[i];
  CHECK(max_difference(unpack(out, nn::RowLinear::forward_sum(ops, std::span<const nn::RowLinear* const>(layers),
                                                              std::span<const graph::PlainOps::Value>(xs)),
                              1e-12),
                       sum) < 1e-12);
  CHECK_THROWS_AS(nn::RowLinear::forward_sum(ops, std::span<const nn::RowLinear* const>(layers).first(1),
                                             std::span<const graph::PlainOps::Value>(xs)),
                  InvalidArgument);
}

TEST_CASE("self-attention over row shifts equals masked softmax attention per head", "[nn][attention]") {
  auto rng = cerium_test::make_rng(502);
  INFO("test seed " << cerium_test::test_seed());
  struct Case {
    std::size_t rows, heads, valid, blocks = 1;
    bool causal = false;
    std::size_t turn_split = 0;
  };
  // One score ciphertext (8 shifts in heads of 8), and four (16 shifts in heads of 4); with padding rows; rows
  // over several ciphertexts (score groups spanning blocks, and blocks of padding only); causal masks; turns
  // within the heads split in two.
  for (const Case c : {Case{8, 2, 8}, Case{8, 2, 6}, Case{16, 4, 13}, Case{8, 2, 20, 3}, Case{4, 4, 7, 4},
                       Case{8, 2, 8, 1, true}, Case{8, 2, 24, 3, true}, Case{4, 2, 11, 4, true},
                       Case{16, 2, 13, 1, false, 2}, Case{8, 2, 24, 3, true, 4}, Case{8, 2, 8, 1, false, 1}}) {
    INFO(c.blocks << " blocks of " << c.rows << " rows, " << c.heads << " heads, " << c.valid << " valid"
                  << (c.causal ? ", causal" : "") << ", turn split " << c.turn_split);
    const nn::AttentionShape shape{.layout = {.rows = c.rows, .features = 16, .stride = 32}, .heads = c.heads,
                                   .valid_rows = c.valid, .causal = c.causal, .blocks = c.blocks,
                                   .turn_split = c.turn_split};
    const std::size_t T = c.rows * c.blocks, d = 16, w = 16 / c.heads, valid = c.valid;
    const std::vector<double> q = normal(T * d, rng, 0.7), k = normal(T * d, rng, 0.7), v = normal(T * d, rng, 1);
    // Reference: per head, softmax over the keys each row may see of q . k, then the weighted values.
    std::vector<double> want(T * d, 0.0);
    double upper = 0;
    for (std::size_t h = 0; h < c.heads; ++h) {
      for (std::size_t r = 0; r < T; ++r) {
        const std::size_t seen = c.causal ? std::min(valid, r + 1) : valid;
        std::vector<double> score(seen);
        for (std::size_t u = 0; u < seen; ++u) {
          for (std::size_t f = 0; f < w; ++f) score[u] += q[r * d + h * w + f] * k[u * d + h * w + f];
          upper = std::max(upper, score[u]);
        }
        const double top = *std::max_element(score.begin(), score.end());
        double sum = 0;
        for (auto& s : score) sum += (s = std::exp(s - top));
        for (std::size_t u = 0; u < seen; ++u) {
          for (std::size_t f = 0; f < w; ++f) want[r * d + h * w + f] += score[u] / sum * v[u * d + h * w + f];
        }
      }
    }
    const auto blocks = [&](const std::vector<double>& m) {
      std::vector<graph::PlainOps::Value> out;
      const std::size_t per = c.rows * d;
      for (std::size_t b = 0; b < c.blocks; ++b) {
        out.push_back(pack(shape.layout, std::vector<double>(m.begin() + b * per, m.begin() + (b + 1) * per)));
      }
      return out;
    };
    // Directly, and as the softmax of score / 4 squared back twice; shifts folded 1, 4 (or w) and w at a time.
    for (const int squarings : {0, 2}) for (const std::size_t fold : {std::size_t{1}, std::size_t{0}, w}) {
      INFO("squarings " << squarings << ", fold " << fold);
      nn::AttentionShape folded = shape;
      folded.fold = fold;
      graph::PlainOps ops;
      const nn::AttentionSoftmax<exact_functions::Exp, exact_functions::Reciprocal> softmax{
          .upper = (upper + 1) * std::exp2(-squarings), .exp = {}, .reciprocal = {},
          .score_scale = std::exp2(-squarings), .squarings = squarings};
      const auto out = nn::self_attention<graph::PlainOps>(ops, blocks(q), blocks(k), blocks(v), folded, softmax);
      REQUIRE(out.size() == c.blocks);
      std::vector<double> got;
      for (const auto& o : out) {
        const std::vector<double> part = unpack(shape.layout, o, 1e-12);
        got.insert(got.end(), part.begin(), part.end());
      }
      CHECK(max_difference(got, want) < 1e-12);
    }
  }
  CHECK_THROWS_AS((nn::AttentionShape{.layout = {.rows = 8, .features = 12, .stride = 16}, .heads = 2}.validate()),
                  InvalidArgument);  // a head width of 6
  CHECK_THROWS_AS((nn::AttentionShape{.layout = {.rows = 8, .features = 16, .stride = 16}, .heads = 2,
                                      .valid_rows = 17, .blocks = 2}.validate()),
                  InvalidArgument);  // 17 valid of 16
  CHECK_THROWS_AS((nn::AttentionShape{.layout = {.rows = 8, .features = 16, .stride = 16}, .heads = 2,
                                      .turn_split = 3}.validate()),
                  InvalidArgument);  // a turn split of 3
  CHECK_THROWS_AS((nn::AttentionShape{.layout = {.rows = 8, .features = 16, .stride = 16}, .heads = 2, .fold = 3}
                       .validate()),
                  InvalidArgument);  // a fold of 3
  CHECK_THROWS_AS((nn::AttentionShape{.layout = {.rows = 8, .features = 16, .stride = 16}, .heads = 2, .fold = 16}
                       .validate()),
                  InvalidArgument);  // a fold of 16 in heads of 8
}

TEST_CASE("attention with polynomial exp and reciprocal runs leveled on ciphertexts within 2^-12 of its twin",
          "[nn][attention]") {
  auto rng = cerium_test::make_rng(503);
  INFO("test seed " << cerium_test::test_seed());
  Fixture f(toy(12, 26, 2, 3), {.relinearization = true});
  const nn::AttentionShape shape{.layout = {.rows = 8, .features = 16, .stride = 32}, .heads = 2, .valid_rows = 7};
  const nn::RowLinear q(shape.layout, shape.layout, normal(256, rng, 0.05), normal(16, rng, 0.1)),
      k(shape.layout, shape.layout, normal(256, rng, 0.05), {}),
      v(shape.layout, shape.layout, normal(256, rng, 0.3), normal(16, rng, 0.3));
  // Scores well within [-2, 2] for these weights (each a sum of 8 products of about 0.2 by 0.2): exp on [-4, 0]
  // over 7 keys; denominators in [e^-4 / 7, 1].
  const nn::AttentionSoftmax<nn::Exp, nn::Reciprocal> softmax{
      .upper = 2, .exp = nn::Exp({.lower = -4, .upper = 0, .tolerance = 1e-4, .scale = 1.0 / 7}),
      .reciprocal = nn::Reciprocal({.lower = 0.002, .upper = 1, .tolerance = 1e-3, .scale = 0.002}),
      .first_scale = 500};
  const auto model = [&](auto& ops, const auto& x) {
    return nn::self_attention(ops, q.forward(ops, x), k.forward(ops, x), v.forward(ops, x), shape, softmax);
  };
  graph::Tracer t(f.context);
  t.output(model(t, t.input("x", shape.layout.slots())), "y");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
  const std::vector<double> x = normal(8 * 16, rng, 1);
  std::vector<Ciphertext> inputs;
  inputs.push_back(f.encryptor.encrypt(f.encoder.encode(pack(shape.layout, x), plan.input_encoding(0))));
  const auto result = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(std::move(inputs));
  graph::PlainOps ops;
  const std::vector<double> twin = unpack(shape.layout, model(ops, pack(shape.layout, x)), 1e-9);
  const std::vector<double> got = unpack(shape.layout, f.decrypt(result.at(0)), std::exp2(-12));
  CHECK(max_difference(got, twin) < std::exp2(-12));
}
