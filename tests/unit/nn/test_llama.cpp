// The plaintext Llama reference (nn/llama.hpp): each piece against an independent formulation (RoPE as complex
// rotations and its relative-position property, grouped-query attention as multi-head attention over repeated
// key-value heads, RMSNorm and SiLU from their formulas), causality, a tiny layer against a loop-by-loop second
// implementation written here, seeded weights, and typed errors.

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/nn/llama.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;
namespace nn = cerium::nn;
namespace ops = cerium::nn::llama_ops;

namespace {

const nn::LlamaConfig kTiny{.layers = 2, .hidden = 32, .heads = 4, .kv_heads = 2, .ffn = 48};

using Rows = std::vector<std::vector<double>>;

Rows rows_of(const nn::Matrix& m) {
  Rows r(m.rows, std::vector<double>(m.cols));
  for (std::size_t i = 0; i < m.rows; ++i) {
    for (std::size_t j = 0; j < m.cols; ++j) r[i][j] = m.values[i * m.cols + j];
  }
  return r;
}

nn::Matrix random_matrix(std::mt19937_64& rng, std::size_t rows, std::size_t cols, double sd = 1) {
  std::normal_distribution<double> d(0, sd);
  nn::Matrix m = nn::Matrix::zeros(rows, cols);
  for (double& v : m.values) v = d(rng);
  return m;
}

double max_difference(std::span<const double> a, std::span<const double> b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// The message of the cerium::Error that f throws ("" when none).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// theta^(-2i/d), written as exp and log rather than pow.
double frequency(double theta, std::size_t i, std::size_t d) {
  return std::exp(-2.0 * static_cast<double>(i) / static_cast<double>(d) * std::log(theta));
}

// RoPE as complex numbers: the pair (x_i, x_{i+d/2}) is x_i + i x_{i+d/2}, turned by e^{i p theta_i}.
Rows rope_complex(const Rows& x, std::size_t heads, double theta, std::size_t first_position) {
  Rows y = x;
  const std::size_t d = x[0].size() / heads;
  for (std::size_t t = 0; t < x.size(); ++t) {
    const double p = static_cast<double>(first_position + t);
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t i = 0; i < d / 2; ++i) {
        const std::size_t lo = h * d + i, hi = lo + d / 2;
        const std::complex<double> z =
            std::complex<double>(x[t][lo], x[t][hi]) * std::polar(1.0, p * frequency(theta, i, d));
        y[t][lo] = z.real();
        y[t][hi] = z.imag();
      }
    }
  }
  return y;
}

Rows naive_linear(const Rows& x, const nn::LinearWeights& l) {
  const Rows w = rows_of(l.weight);
  Rows y(x.size(), std::vector<double>(w.size(), 0.0));
  for (std::size_t t = 0; t < x.size(); ++t) {
    for (std::size_t o = 0; o < w.size(); ++o) {
      for (std::size_t i = 0; i < x[t].size(); ++i) y[t][o] += x[t][i] * w[o][i];
    }
  }
  return y;
}

Rows naive_rms_norm(const Rows& x, const std::vector<double>& gamma, double eps) {
  Rows y = x;
  for (auto& row : y) {
    long double squares = 0;
    for (const double v : row) squares += static_cast<long double>(v) * v;
    const long double rms = std::sqrt(squares / row.size() + eps);
    for (std::size_t c = 0; c < row.size(); ++c) row[c] = static_cast<double>(gamma[c] * (row[c] / rms));
  }
  return y;
}

// Causal attention from the formulas: query head h reads key-value head h * kv_heads / heads; softmax without the
// max shift.
Rows naive_attention(const Rows& q, const Rows& k, const Rows& v, std::size_t heads, std::size_t kv_heads) {
  const std::size_t d = q[0].size() / heads;
  Rows context(q.size(), std::vector<double>(q[0].size(), 0.0));
  for (std::size_t h = 0; h < heads; ++h) {
    const std::size_t g = h * kv_heads / heads;
    for (std::size_t t = 0; t < q.size(); ++t) {
      std::vector<double> e(t + 1);
      double total = 0;
      for (std::size_t s = 0; s <= t; ++s) {
        double dot = 0;
        for (std::size_t j = 0; j < d; ++j) dot += q[t][h * d + j] * k[s][g * d + j];
        total += e[s] = std::exp(dot / std::sqrt(static_cast<double>(d)));
      }
      for (std::size_t s = 0; s <= t; ++s) {
        for (std::size_t j = 0; j < d; ++j) context[t][h * d + j] += e[s] / total * v[s][g * d + j];
      }
    }
  }
  return context;
}

// The layer from the formulas, loop by loop.
Rows naive_layer(const nn::LlamaLayerWeights& w, const nn::LlamaConfig& c, const Rows& x, std::size_t first) {
  const Rows n = naive_rms_norm(x, w.input_norm, c.rms_norm_eps);
  const Rows q = rope_complex(naive_linear(n, w.query), c.heads, c.rope_theta, first);
  const Rows k = rope_complex(naive_linear(n, w.key), c.kv_heads, c.rope_theta, first);
  Rows h = naive_linear(naive_attention(q, k, naive_linear(n, w.value), c.heads, c.kv_heads), w.output);
  for (std::size_t t = 0; t < x.size(); ++t) {
    for (std::size_t j = 0; j < c.hidden; ++j) h[t][j] += x[t][j];
  }
  const Rows m = naive_rms_norm(h, w.post_attention_norm, c.rms_norm_eps);
  Rows gate = naive_linear(m, w.gate);
  const Rows up = naive_linear(m, w.up);
  for (std::size_t t = 0; t < x.size(); ++t) {
    for (std::size_t f = 0; f < c.ffn; ++f) gate[t][f] = gate[t][f] / (1 + std::exp(-gate[t][f])) * up[t][f];
  }
  Rows y = naive_linear(gate, w.down);
  for (std::size_t t = 0; t < x.size(); ++t) {
    for (std::size_t j = 0; j < c.hidden; ++j) y[t][j] += h[t][j];
  }
  return y;
}

// Seeded weights have the initializer's small spread: attention nearly uniform, SiLU nearly linear. Sharpen them so
// that the checks see the softmax and the SiLU at work.
nn::LlamaWeights sharp_tiny(std::uint64_t seed, const nn::LlamaConfig& config = kTiny) {
  nn::LlamaWeights w = nn::LlamaWeights::seeded(config, seed);
  for (auto& layer : w.layers) {
    for (auto* l : {&layer.query, &layer.key, &layer.gate, &layer.value, &layer.output, &layer.down}) {
      for (double& v : l->weight.values) v *= 15;
    }
  }
  return w;
}

}  // namespace

TEST_CASE("RoPE equals complex rotations and its scores depend only on the positions' difference", "[nn][llama]") {
  auto rng = cerium_test::make_rng(601);
  INFO("test seed " << cerium_test::test_seed());
  for (const double theta : {10000.0, 500000.0}) {
    for (const std::size_t first : {std::size_t{0}, std::size_t{1}, std::size_t{4093}}) {
      INFO("theta " << theta << ", first position " << first);
      const nn::Matrix x = random_matrix(rng, 7, 3 * 16);
      const nn::Matrix y = ops::rope(x, 3, theta, first);
      const Rows want = rope_complex(rows_of(x), 3, theta, first);
      double worst = 0;
      for (std::size_t t = 0; t < 7; ++t) worst = std::max(worst, max_difference(y.row(t), want[t]));
      CHECK(worst < 1e-12);
      // Row t of a block starting at `first` is the row at position first + t, whatever block it came in.
      nn::Matrix last = nn::Matrix::zeros(1, x.cols);
      std::copy(x.row(6).begin(), x.row(6).end(), last.values.begin());
      CHECK(ops::rope(last, 3, theta, first + 6).values == std::vector<double>(y.row(6).begin(), y.row(6).end()));
    }
  }

  // <rope(q, m), rope(k, n)> is a function of m - n: shifting both positions keeps it.
  const auto at = [](const nn::Matrix& v, std::size_t position) { return ops::rope(v, 2, 500000, position); };
  const auto dot = [](const nn::Matrix& a, const nn::Matrix& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.values.size(); ++i) s += a.values[i] * b.values[i];
    return s;
  };
  std::uniform_int_distribution<std::size_t> position(0, 5000);
  for (int trial = 0; trial < 20; ++trial) {
    const nn::Matrix q = random_matrix(rng, 1, 2 * 64), k = random_matrix(rng, 1, 2 * 64);
    const std::size_t m = position(rng), n = position(rng), shift = position(rng);
    INFO("m " << m << ", n " << n << ", shift " << shift);
    const double score = dot(at(q, m), at(k, n));
    CHECK(std::abs(dot(at(q, m + shift), at(k, n + shift)) - score) < 1e-10);
    if (m >= n) CHECK(std::abs(dot(at(q, m - n), at(k, 0)) - score) < 1e-10);
    // ... and it does depend on the difference (the rotation is not the identity).
    CHECK(std::abs(dot(at(q, m + 1), at(k, n)) - score) > 1e-6);
  }
}

TEST_CASE("grouped-query attention is multi-head attention over repeated key-value heads", "[nn][llama]") {
  auto rng = cerium_test::make_rng(602);
  INFO("test seed " << cerium_test::test_seed());
  const std::size_t rows = 6, d = 8;
  const nn::Matrix q = random_matrix(rng, rows, 4 * d, 2), k = random_matrix(rng, rows, 2 * d, 2),
                   v = random_matrix(rng, rows, 2 * d);
  // K and V with head g copied into query heads 2g and 2g + 1, built directly.
  nn::Matrix k4 = nn::Matrix::zeros(rows, 4 * d), v4 = nn::Matrix::zeros(rows, 4 * d);
  for (std::size_t t = 0; t < rows; ++t) {
    for (std::size_t h = 0; h < 4; ++h) {
      for (std::size_t j = 0; j < d; ++j) {
        k4.at(t, h * d + j) = k.at(t, (h / 2) * d + j);
        v4.at(t, h * d + j) = v.at(t, (h / 2) * d + j);
      }
    }
  }
  const nn::Matrix grouped = ops::causal_attention(q, k, v, 4, 2);
  CHECK(ops::causal_attention(q, k4, v4, 4, 4).values == grouped.values);
  const Rows want = naive_attention(rows_of(q), rows_of(k4), rows_of(v4), 4, 4);
  double worst = 0;
  for (std::size_t t = 0; t < rows; ++t) worst = std::max(worst, max_difference(grouped.row(t), want[t]));
  CHECK(worst < 1e-13);
  // Row 0 sees only key 0: its context is value 0, per head.
  for (std::size_t c = 0; c < 4 * d; ++c) CHECK(grouped.at(0, c) == Catch::Approx(v4.at(0, c)).margin(1e-15));

  // repeat_kv_heads on the projections: the same repeated columns, and the same layer with kv_heads = heads.
  const nn::LlamaWeights w = sharp_tiny(11);
  const nn::Matrix x = random_matrix(rng, rows, kTiny.hidden);
  const nn::LinearWeights key4 = nn::repeat_kv_heads(w.layers[0].key, kTiny);
  REQUIRE(key4.weight.rows == kTiny.hidden);
  CHECK(key4.bias.empty());
  const nn::Matrix projected = ops::linear(w.layers[0].key, x), repeated = ops::linear(key4, x);
  for (std::size_t t = 0; t < rows; ++t) {
    for (std::size_t h = 0; h < 4; ++h) {
      for (std::size_t j = 0; j < d; ++j) CHECK(repeated.at(t, h * d + j) == projected.at(t, (h / 2) * d + j));
    }
  }
  nn::LlamaLayerWeights multi_head = w.layers[0];
  multi_head.key = key4;
  multi_head.value = nn::repeat_kv_heads(w.layers[0].value, kTiny);
  nn::LlamaConfig mha = kTiny;
  mha.kv_heads = mha.heads;
  CHECK(max_difference(nn::llama_layer_reference(multi_head, mha, x).values,
                       nn::llama_layer_reference(w.layers[0], kTiny, x).values) < 1e-14);
  // Already one key-value head per query head: nothing to repeat. A bias is repeated with its rows.
  CHECK(nn::repeat_kv_heads(key4, mha).weight.values == key4.weight.values);
  nn::LinearWeights biased = w.layers[0].value;
  for (std::size_t o = 0; o < biased.weight.rows; ++o) biased.bias.push_back(static_cast<double>(o));
  const nn::LinearWeights biased4 = nn::repeat_kv_heads(biased, kTiny);
  REQUIRE(biased4.bias.size() == kTiny.hidden);
  for (std::size_t r = 0; r < kTiny.hidden; ++r) CHECK(biased4.bias[r] == static_cast<double>((r / d / 2) * d + r % d));
}

TEST_CASE("a Llama layer is causal, and a common shift of the positions changes nothing", "[nn][llama]") {
  auto rng = cerium_test::make_rng(603);
  INFO("test seed " << cerium_test::test_seed());
  const nn::LlamaWeights w = sharp_tiny(12);
  const nn::Matrix x = random_matrix(rng, 8, kTiny.hidden);
  nn::Matrix other = x;
  for (std::size_t i = 5 * kTiny.hidden; i < other.values.size(); ++i) other.values[i] = 3 * other.values[i] + 1;
  nn::Matrix first5 = x;
  first5.rows = 5;
  first5.values.resize(5 * kTiny.hidden);
  const nn::Matrix y = nn::llama_reference(w, x), changed = nn::llama_reference(w, other),
                   alone = nn::llama_reference(w, first5);
  for (std::size_t t = 0; t < 5; ++t) {
    CHECK(max_difference(y.row(t), changed.row(t)) == 0);
    CHECK(max_difference(y.row(t), alone.row(t)) == 0);
  }
  CHECK(max_difference(y.row(7), changed.row(7)) > 1e-3);

  // Attention sees only these rows and RoPE's scores depend on differences: the positions' origin drops out,
  // though RoPE itself moves.
  CHECK(max_difference(nn::llama_reference(w, x, 1000).values, y.values) < 1e-12);
  CHECK(max_difference(ops::rope(x, 4, 500000, 1000).values, ops::rope(x, 4, 500000).values) > 0.1);
}

TEST_CASE("RMSNorm and SiLU equal their formulas", "[nn][llama]") {
  auto rng = cerium_test::make_rng(604);
  INFO("test seed " << cerium_test::test_seed());
  for (const double spread : {1e-3, 1.0, 1e3}) {
    const nn::Matrix x = random_matrix(rng, 5, 24, spread);
    const nn::Matrix gamma = random_matrix(rng, 1, 24);
    const nn::Matrix y = ops::rms_norm(x, gamma.values, 1e-5);
    const Rows want = naive_rms_norm(rows_of(x), gamma.values, 1e-5);
    for (std::size_t t = 0; t < 5; ++t) {
      for (std::size_t c = 0; c < 24; ++c) {
        CHECK(y.at(t, c) == Catch::Approx(want[t][c]).epsilon(1e-14).margin(1e-300));
      }
    }
  }
  // A zero row stays zero (epsilon keeps the division finite).
  const nn::Matrix zero = nn::Matrix::zeros(1, 8);
  CHECK(ops::rms_norm(zero, std::vector<double>(8, 1.0), 1e-5).values == zero.values);

  std::uniform_real_distribution<double> value(-40, 40);
  for (int i = 0; i < 1000; ++i) {
    const double u = value(rng);
    INFO("x " << u);
    CHECK(ops::silu(u) == Catch::Approx(u / (1 + std::exp(-u))).epsilon(1e-15).margin(1e-300));
    // sigmoid(x) + sigmoid(-x) = 1: an identity the formula above does not spell.
    CHECK(ops::silu(u) - ops::silu(-u) == Catch::Approx(u).epsilon(1e-14).margin(1e-14));
  }
  CHECK(ops::silu(0) == 0);
  CHECK(ops::silu(1e6) == 1e6);
  CHECK(ops::silu(-1e6) == 0);
  CHECK(ops::silu(-700) < 0);  // exp(700) is finite but exp(-x) of x = -710 is not: no NaN around there
  CHECK(std::isfinite(ops::silu(-710)));
}

TEST_CASE("a tiny Llama layer equals a loop-by-loop computation from the formulas", "[nn][llama]") {
  auto rng = cerium_test::make_rng(605);
  INFO("test seed " << cerium_test::test_seed());
  for (const double theta : {500000.0, 10000.0}) {
    nn::LlamaConfig config = kTiny;
    config.rope_theta = theta;
    const nn::LlamaWeights w = sharp_tiny(13, config);
    const nn::Matrix x = random_matrix(rng, 8, config.hidden);
    for (const std::size_t first : {std::size_t{0}, std::size_t{37}}) {
      INFO("theta " << theta << ", first position " << first);
      const nn::Matrix y = nn::llama_layer_reference(w.layers[0], config, x, first);
      const Rows want = naive_layer(w.layers[0], config, rows_of(x), first);
      REQUIRE(y.rows == 8);
      REQUIRE(y.cols == config.hidden);
      double worst = 0;
      for (std::size_t t = 0; t < 8; ++t) worst = std::max(worst, max_difference(y.row(t), want[t]));
      CHECK(worst < 1e-12);
      // The layer changes its input by more than rounding: the check above is not comparing x with x.
      CHECK(max_difference(y.values, x.values) > 0.1);
    }
    // Two layers: one after the other.
    const nn::Matrix two = nn::llama_reference(w, x);
    const Rows twice = naive_layer(w.layers[1], config, naive_layer(w.layers[0], config, rows_of(x), 0), 0);
    for (std::size_t t = 0; t < 8; ++t) CHECK(max_difference(two.row(t), twice[t]) < 1e-12);
  }
  // The attention is not uniform (else the checks would not see the softmax): scores of a few units.
  const nn::LlamaWeights w = sharp_tiny(13);
  const nn::Matrix n = ops::rms_norm(random_matrix(rng, 8, kTiny.hidden), w.layers[0].input_norm, 1e-5);
  const nn::Matrix q = ops::linear(w.layers[0].query, n), k = ops::linear(w.layers[0].key, n);
  // The largest score over every query and key row: one row's scores alone fall under 1 for some inputs.
  double spread = 0;
  for (std::size_t t = 0; t < 8; ++t) {
    for (std::size_t s = 0; s < 8; ++s) {
      double dot = 0;
      for (std::size_t j = 0; j < 8; ++j) dot += q.at(t, j) * k.at(s, j);
      spread = std::max(spread, std::abs(dot) / std::sqrt(8.0));
    }
  }
  CHECK(spread > 1);
}

TEST_CASE("seeded Llama weights: one layer at a time, shapes and spread", "[nn][llama]") {
  const nn::LlamaWeights w = nn::LlamaWeights::seeded(kTiny, 21);
  REQUIRE(w.layers.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const nn::LlamaLayerWeights one = nn::LlamaWeights::seeded_layer(kTiny, 21, i);
    CHECK(one.query.weight.values == w.layers[i].query.weight.values);
    CHECK(one.down.weight.values == w.layers[i].down.weight.values);
    CHECK(one.post_attention_norm == w.layers[i].post_attention_norm);
    CHECK_NOTHROW(nn::check_shapes(w.layers[i], kTiny));
  }
  const nn::LlamaLayerWeights& l = w.layers[0];
  CHECK(l.key.weight.rows == 16);
  CHECK(l.value.weight.cols == 32);
  CHECK(l.gate.weight.rows == 48);
  CHECK(l.down.weight.cols == 48);
  for (const auto* p : {&l.query, &l.key, &l.value, &l.output, &l.gate, &l.up, &l.down}) CHECK(p->bias.empty());
  CHECK(w.layers[0].up.weight.values != w.layers[1].up.weight.values);
  CHECK(nn::LlamaWeights::seeded(kTiny, 22).layers[0].up.weight.values != l.up.weight.values);
  double sum = 0, squares = 0;
  for (const double v : l.gate.weight.values) {
    sum += v;
    squares += v * v;
  }
  const double count = static_cast<double>(l.gate.weight.values.size());
  CHECK(std::abs(sum / count) < 0.002);
  CHECK(std::sqrt(squares / count) == Catch::Approx(0.02).epsilon(0.1));
  double gamma = 0;
  for (const double v : l.input_norm) gamma += v;
  CHECK(gamma / 32 == Catch::Approx(1.0).epsilon(0.02));
  // Llama-3-8B's defaults: 218M parameters a layer, which is why layers can be drawn one at a time.
  const nn::LlamaConfig full;
  CHECK_NOTHROW(nn::validate(full));
  CHECK(full.head_dim() == 128);
  CHECK(2 * full.hidden * full.hidden + 2 * full.kv_heads * full.head_dim() * full.hidden + 3 * full.ffn * full.hidden +
            2 * full.hidden == 218112000);
}

TEST_CASE("Llama: bad configurations, shapes and arguments are typed errors naming the values", "[nn][llama]") {
  auto rng = cerium_test::make_rng(606);
  const auto with = [](auto change) {
    nn::LlamaConfig c = kTiny;
    change(c);
    return c;
  };
  CHECK_THROWS_AS(nn::validate(with([](auto& c) { c.layers = 0; })), InvalidArgument);
  CHECK_THROWS_AS(nn::validate(with([](auto& c) { c.hidden = 0; })), InvalidArgument);
  CHECK_THROWS_AS(nn::validate(with([](auto& c) { c.heads = 0; })), InvalidArgument);
  CHECK_THROWS_AS(nn::validate(with([](auto& c) { c.kv_heads = 0; })), InvalidArgument);
  CHECK_THROWS_AS(nn::validate(with([](auto& c) { c.ffn = 0; })), InvalidArgument);
  CHECK(error_of([&] { nn::validate(with([](auto& c) { c.hidden = 30; })); }).find("30") != std::string::npos);
  CHECK(error_of([&] { nn::validate(with([](auto& c) { c.kv_heads = 3; })); }).find("3 key-value") !=
        std::string::npos);
  CHECK(error_of([&] { nn::validate(with([](auto& c) { c.hidden = 12; })); }).find("head_dim 3") != std::string::npos);
  CHECK_THROWS_AS(nn::validate(with([](auto& c) { c.rms_norm_eps = 0; })), InvalidArgument);
  CHECK_THROWS_AS(nn::validate(with([](auto& c) { c.rms_norm_eps = std::nan(""); })), InvalidArgument);
  CHECK_THROWS_AS(nn::validate(with([](auto& c) { c.rope_theta = -1; })), InvalidArgument);
  CHECK_THROWS_AS(nn::validate(with([](auto& c) { c.rope_theta = INFINITY; })), InvalidArgument);
  CHECK_THROWS_AS(nn::LlamaWeights::seeded(with([](auto& c) { c.kv_heads = 3; }), 1), InvalidArgument);
  CHECK_THROWS_AS(nn::LlamaWeights::seeded_layer(kTiny, 1, 2), InvalidArgument);

  const nn::LlamaWeights w = nn::LlamaWeights::seeded(kTiny, 31);
  const nn::Matrix x = random_matrix(rng, 8, kTiny.hidden);
  nn::LlamaLayerWeights broken = w.layers[0];
  broken.key = w.layers[0].query;  // hidden outputs where kv_heads x head_dim belong
  CHECK(error_of([&] { nn::check_shapes(broken, kTiny); }).find("k_proj.weight is 32 x 32") != std::string::npos);
  CHECK_THROWS_AS(nn::llama_layer_reference(broken, kTiny, x), MismatchError);
  broken = w.layers[0];
  broken.post_attention_norm.pop_back();
  CHECK_THROWS_AS(nn::check_shapes(broken, kTiny), MismatchError);
  broken = w.layers[0];
  broken.gate.bias.assign(3, 0.0);
  CHECK_THROWS_AS(nn::check_shapes(broken, kTiny), MismatchError);
  CHECK_THROWS_AS(nn::llama_layer_reference(w.layers[0], kTiny, random_matrix(rng, 8, 31)), MismatchError);
  CHECK_THROWS_AS(nn::llama_layer_reference(w.layers[0], kTiny, nn::Matrix::zeros(0, 32)), InvalidArgument);
  CHECK_THROWS_AS(nn::llama_layer_reference(w.layers[0], with([](auto& c) { c.rope_theta = 0; }), x), InvalidArgument);
  nn::LlamaWeights short_of_layers = w;
  short_of_layers.layers.pop_back();
  CHECK_THROWS_AS(nn::llama_reference(short_of_layers, x), MismatchError);

  const nn::Matrix q = random_matrix(rng, 4, 32), k = random_matrix(rng, 4, 16);
  CHECK_THROWS_AS(ops::causal_attention(q, k, random_matrix(rng, 4, 8), 4, 2), MismatchError);
  CHECK_THROWS_AS(ops::causal_attention(q, k, random_matrix(rng, 3, 16), 4, 2), MismatchError);
  CHECK_THROWS_AS(ops::causal_attention(q, k, k, 4, 3), InvalidArgument);
  CHECK_THROWS_AS(ops::causal_attention(q, k, k, 0, 1), InvalidArgument);
  CHECK_THROWS_AS(ops::rope(random_matrix(rng, 2, 12), 4, 10000), InvalidArgument);  // heads of 3
  CHECK_THROWS_AS(ops::rope(q, 4, 0), InvalidArgument);
  CHECK_THROWS_AS(ops::rms_norm(q, std::vector<double>(31, 1.0), 1e-5), MismatchError);
  CHECK_THROWS_AS(ops::rms_norm(q, std::vector<double>(32, 1.0), 0), InvalidArgument);
  CHECK_THROWS_AS(ops::linear(w.layers[0].down, x), MismatchError);  // down takes rows of ffn
  CHECK_THROWS_AS(nn::repeat_kv_heads(w.layers[0].query, kTiny), MismatchError);
}
