// The plaintext BERT reference (nn/bert.hpp): one layer of a tiny seeded BERT against a naive computation written
// here from the formulas, the attention mask and permutation invariants, weights through an f32 weight file, and
// typed errors; then, when the real all-MiniLM-L6-v2 weights are at hand (CERIUM_MINILM_DIR, written by
// scripts/fetch-minilm.sh), the reference reproduces the model's sentence embeddings of data/minilm_sentences.crwt
// (computed by scripts/export_minilm.py with PyTorch and cross-checked against sentence-transformers).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/io/weights.hpp"
#include "cerium/nn/bert.hpp"
#include "cerium/nn/bert_embeddings.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;
namespace nn = cerium::nn;

namespace {

const nn::BertConfig kTiny{.layers = 2, .hidden = 32, .heads = 2, .ffn = 64};

using Rows = std::vector<std::vector<double>>;

Rows rows_of(const nn::Matrix& m) {
  Rows r(m.rows, std::vector<double>(m.cols));
  for (std::size_t i = 0; i < m.rows; ++i) {
    for (std::size_t j = 0; j < m.cols; ++j) r[i][j] = m.values[i * m.cols + j];
  }
  return r;
}

// x W^T + b, W given out x in.
Rows naive_linear(const Rows& x, const nn::LinearWeights& l) {
  const Rows w = rows_of(l.weight);
  Rows y(x.size(), std::vector<double>(w.size()));
  for (std::size_t t = 0; t < x.size(); ++t) {
    for (std::size_t o = 0; o < w.size(); ++o) {
      y[t][o] = l.bias[o];
      for (std::size_t i = 0; i < x[t].size(); ++i) y[t][o] += x[t][i] * w[o][i];
    }
  }
  return y;
}

Rows naive_norm(const Rows& x, const nn::NormWeights& n, double eps) {
  Rows y = x;
  for (auto& row : y) {
    const double d = static_cast<double>(row.size());
    double s = 0, s2 = 0;
    for (const double v : row) s += v;
    for (const double v : row) s2 += (v - s / d) * (v - s / d);
    for (std::size_t c = 0; c < row.size(); ++c) {
      row[c] = n.gamma[c] * (row[c] - s / d) / std::sqrt(s2 / d + eps) + n.beta[c];
    }
  }
  return y;
}

// The layer from the formulas: heads one after the other, softmax without the max shift, GELU as x Phi(x) with
// Phi from erfc; `keys` rows are attended.
Rows naive_layer(const nn::BertLayerWeights& w, const nn::BertConfig& c, const Rows& x, std::size_t keys) {
  const Rows q = naive_linear(x, w.query), k = naive_linear(x, w.key), v = naive_linear(x, w.value);
  const std::size_t d = c.hidden / c.heads;
  Rows context(x.size(), std::vector<double>(c.hidden, 0.0));
  for (std::size_t h = 0; h < c.heads; ++h) {
    for (std::size_t t = 0; t < x.size(); ++t) {
      std::vector<double> e(keys);
      double total = 0;
      for (std::size_t s = 0; s < keys; ++s) {
        double dot = 0;
        for (std::size_t j = 0; j < d; ++j) dot += q[t][h * d + j] * k[s][h * d + j];
        e[s] = std::exp(dot / std::sqrt(static_cast<double>(d)));
        total += e[s];
      }
      for (std::size_t s = 0; s < keys; ++s) {
        for (std::size_t j = 0; j < d; ++j) context[t][h * d + j] += e[s] / total * v[s][h * d + j];
      }
    }
  }
  Rows a = naive_linear(context, w.attention_output);
  for (std::size_t t = 0; t < x.size(); ++t) {
    for (std::size_t j = 0; j < c.hidden; ++j) a[t][j] += x[t][j];
  }
  a = naive_norm(a, w.attention_norm, c.layer_norm_eps);
  Rows f = naive_linear(a, w.intermediate);
  for (auto& row : f) {
    for (double& u : row) u = u * 0.5 * std::erfc(-u / std::sqrt(2.0));
  }
  Rows y = naive_linear(f, w.output);
  for (std::size_t t = 0; t < x.size(); ++t) {
    for (std::size_t j = 0; j < c.hidden; ++j) y[t][j] += a[t][j];
  }
  return naive_norm(y, w.output_norm, c.layer_norm_eps);
}

double max_difference(std::span<const double> a, std::span<const double> b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

nn::Matrix random_matrix(std::mt19937_64& rng, std::size_t rows, std::size_t cols) {
  std::normal_distribution<double> d(0, 1);
  nn::Matrix m = nn::Matrix::zeros(rows, cols);
  for (double& v : m.values) v = d(rng);
  return m;
}

// Seeded weights have BERT's small spread, which makes attention nearly uniform; sharpen it so that the test
// sees the softmax at work (scores of a few units).
nn::BertWeights sharp_tiny(std::uint64_t seed) {
  nn::BertWeights w = nn::BertWeights::seeded(kTiny, seed);
  for (auto& layer : w.layers) {
    for (double& v : layer.query.weight.values) v *= 15;
    for (double& v : layer.key.weight.values) v *= 15;
  }
  return w;
}

}  // namespace

TEST_CASE("a BERT layer's reference equals a naive computation from the formulas", "[nn][bert]") {
  auto rng = cerium_test::make_rng(501);
  INFO("test seed " << cerium_test::test_seed());
  const nn::BertWeights w = sharp_tiny(5);
  const nn::Matrix x = random_matrix(rng, 8, kTiny.hidden);
  for (const std::size_t valid : {std::size_t{0}, std::size_t{5}, std::size_t{1}}) {
    INFO("valid tokens " << valid);
    const nn::Matrix y = nn::bert_layer_reference(w.layers[0], kTiny, x, valid);
    const Rows want = naive_layer(w.layers[0], kTiny, rows_of(x), valid == 0 ? 8 : valid);
    REQUIRE(y.rows == 8);
    REQUIRE(y.cols == kTiny.hidden);
    double worst = 0;
    for (std::size_t t = 0; t < 8; ++t) worst = std::max(worst, max_difference(y.row(t), want[t]));
    CHECK(worst < 1e-12);
  }
  // The attention is not uniform (else the check above would not see the softmax): rows differ in what they take.
  const Rows q = naive_linear(rows_of(x), w.layers[0].query), k = naive_linear(rows_of(x), w.layers[0].key);
  double spread = 0;
  for (std::size_t s = 0; s < 8; ++s) {
    double dot = 0;
    for (std::size_t j = 0; j < 16; ++j) dot += q[0][j] * k[s][j];
    spread = std::max(spread, std::abs(dot / 4));
  }
  CHECK(spread > 1);

  // Two layers: the layers one after the other.
  const nn::Matrix two = nn::bert_reference(w, x);
  const Rows once = naive_layer(w.layers[0], kTiny, rows_of(x), 8);
  const Rows twice = naive_layer(w.layers[1], kTiny, once, 8);
  for (std::size_t t = 0; t < 8; ++t) CHECK(max_difference(two.row(t), twice[t]) < 1e-12);
}

TEST_CASE("BERT reference invariants: the mask hides the padding, one token attends to itself, rows permute",
          "[nn][bert]") {
  auto rng = cerium_test::make_rng(502);
  INFO("test seed " << cerium_test::test_seed());
  const nn::BertWeights w = sharp_tiny(6);
  const nn::Matrix x = random_matrix(rng, 8, kTiny.hidden);

  // The first 5 rows do not see rows 5..7: other padding, the same outputs, bit for bit; and the same as 5 rows alone.
  nn::Matrix other = x;
  for (std::size_t i = 5 * kTiny.hidden; i < other.values.size(); ++i) other.values[i] = 3 * other.values[i] + 1;
  nn::Matrix first5 = x;
  first5.rows = 5;
  first5.values.resize(5 * kTiny.hidden);
  const nn::Matrix masked = nn::bert_reference(w, x, 5);
  const nn::Matrix padded = nn::bert_reference(w, other, 5);
  const nn::Matrix alone = nn::bert_reference(w, first5);
  for (std::size_t t = 0; t < 5; ++t) {
    CHECK(max_difference(masked.row(t), padded.row(t)) == 0);
    CHECK(max_difference(masked.row(t), alone.row(t)) == 0);
  }
  CHECK(nn::mean_pool(masked, 5) == nn::mean_pool(alone));

  // One token: softmax over one key is 1, so the attention is that token's value.
  nn::Matrix one = x;
  one.rows = 1;
  one.values.resize(kTiny.hidden);
  nn::BertLayerWeights no_query = w.layers[0];
  for (double& v : no_query.query.weight.values) v = 0;
  CHECK(max_difference(nn::bert_layer_reference(w.layers[0], kTiny, one).values,
                       nn::bert_layer_reference(no_query, kTiny, one).values) < 1e-13);

  // No positions inside the encoder: permuting the tokens permutes the outputs.
  std::vector<std::size_t> order{3, 0, 7, 1, 6, 2, 5, 4};
  nn::Matrix permuted = nn::Matrix::zeros(8, kTiny.hidden);
  for (std::size_t t = 0; t < 8; ++t) {
    for (std::size_t c = 0; c < kTiny.hidden; ++c) permuted.at(t, c) = x.at(order[t], c);
  }
  const nn::Matrix y = nn::bert_reference(w, x);
  const nn::Matrix yp = nn::bert_reference(w, permuted);
  for (std::size_t t = 0; t < 8; ++t) CHECK(max_difference(yp.row(t), y.row(order[t])) < 1e-12);

  // mean_pool and cosine_similarity on the result.
  for (const double v : y.values) CHECK(std::isfinite(v));
  const std::vector<double> pooled = nn::mean_pool(y);
  CHECK(nn::cosine_similarity(pooled, pooled) == Catch::Approx(1.0).epsilon(1e-15));
  std::vector<double> negated = pooled;
  for (double& v : negated) v = -v;
  CHECK(nn::cosine_similarity(pooled, negated) == Catch::Approx(-1.0).epsilon(1e-15));
}

TEST_CASE("BERT weights through an f32 weight file; absent or misshapen tensors and bad sizes are typed errors",
          "[nn][bert]") {
  auto rng = cerium_test::make_rng(503);
  const nn::BertWeights w = nn::BertWeights::seeded(kTiny, 9);
  const io::WeightFile file = w.to_weights();  // f32 storage
  const nn::BertWeights back =
      nn::BertWeights::from_weights(io::WeightFile::from_bytes(file.to_bytes()), kTiny);
  REQUIRE(back.layers.size() == 2);
  const auto same_rounded = [](const std::vector<double>& original, const std::vector<double>& loaded) {
    REQUIRE(original.size() == loaded.size());
    for (std::size_t i = 0; i < original.size(); ++i) {
      if (loaded[i] != static_cast<double>(static_cast<float>(original[i]))) return false;
    }
    return true;
  };
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(same_rounded(w.layers[i].query.weight.values, back.layers[i].query.weight.values));
    CHECK(same_rounded(w.layers[i].intermediate.weight.values, back.layers[i].intermediate.weight.values));
    CHECK(back.layers[i].intermediate.weight.rows == 64);
    CHECK(back.layers[i].output.weight.cols == 64);
    CHECK(same_rounded(w.layers[i].output.bias, back.layers[i].output.bias));
    CHECK(same_rounded(w.layers[i].output_norm.gamma, back.layers[i].output_norm.gamma));
    CHECK(same_rounded(w.layers[i].attention_norm.beta, back.layers[i].attention_norm.beta));
  }
  const nn::Matrix x = random_matrix(rng, 8, kTiny.hidden);
  CHECK(max_difference(nn::bert_reference(w, x).values, nn::bert_reference(back, x).values) < 1e-5);
  // f64 storage: the same weights exactly.
  const nn::BertWeights exact = nn::BertWeights::from_weights(w.to_weights(io::Precision::f64), kTiny);
  CHECK(nn::bert_reference(exact, x).values == nn::bert_reference(w, x).values);
  CHECK(file.contains("layers.1.attention.query.weight"));
  CHECK(file.contains("layers.0.output.norm.gamma"));
  CHECK(file.tensors().size() == 2 * 16);

  io::WeightFile missing;
  for (const auto& [name, t] : file.tensors()) {
    if (name != "layers.1.attention.value.bias") missing.add(name, t.dims, t.values, t.precision);
  }
  try {
    nn::BertWeights::from_weights(missing, kTiny);
    FAIL("a weight file without layers.1.attention.value.bias was accepted");
  } catch (const MismatchError& e) {
    CHECK(std::string(e.what()).find("layers.1.attention.value.bias") != std::string::npos);
  }
  nn::BertConfig wider = kTiny;
  wider.ffn = 128;  // the file's FFN is 64 wide
  CHECK_THROWS_AS(nn::BertWeights::from_weights(file, wider), MismatchError);
  nn::BertConfig deeper = kTiny;
  deeper.layers = 3;
  CHECK_THROWS_AS(nn::BertWeights::from_weights(file, deeper), MismatchError);

  nn::BertConfig odd = kTiny;
  odd.heads = 3;  // 32 is not divisible by 3
  CHECK_THROWS_AS(nn::BertWeights::seeded(odd, 1), InvalidArgument);
  CHECK_THROWS_AS(nn::bert_layer_reference(w.layers[0], odd, x), InvalidArgument);
  nn::BertConfig no_eps = kTiny;
  no_eps.layer_norm_eps = 0;
  CHECK_THROWS_AS(nn::validate(no_eps), InvalidArgument);
  CHECK_THROWS_AS(nn::bert_layer_reference(w.layers[0], kTiny, random_matrix(rng, 8, 31)), MismatchError);
  CHECK_THROWS_AS(nn::bert_layer_reference(w.layers[0], kTiny, x, 9), InvalidArgument);
  nn::BertLayerWeights broken = w.layers[0];
  broken.key.bias.pop_back();
  CHECK_THROWS_AS(nn::bert_layer_reference(broken, kTiny, x), MismatchError);
  CHECK_THROWS_AS(nn::cosine_similarity(std::vector<double>{1, 2}, std::vector<double>{1}), MismatchError);
  CHECK_THROWS_AS(nn::cosine_similarity(std::vector<double>{0, 0}, std::vector<double>{1, 1}), InvalidArgument);
}

TEST_CASE("the reference reproduces all-MiniLM-L6-v2's sentence embeddings", "[nn][bert][data]") {
  const std::filesystem::path data = std::filesystem::path(CERIUM_DATA_DIR) / "minilm_sentences.crwt";
  const char* env = std::getenv("CERIUM_MINILM_DIR");
  const std::filesystem::path dir = env != nullptr ? env : "";
  if (!std::filesystem::exists(data) || env == nullptr || !std::filesystem::exists(dir / "minilm_encoder.crwt")) {
    WARN("skipped: needs " << data.string() << " and CERIUM_MINILM_DIR naming a directory with minilm_encoder.crwt "
                           "(scripts/fetch-minilm.sh writes it)");
    SUCCEED("nothing to check without the model");
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const nn::BertConfig config;  // MiniLM-L6-H384: the defaults
  const nn::BertWeights weights =
      nn::BertWeights::from_weights(io::WeightFile::load(dir / "minilm_encoder.crwt"), config);
  const io::WeightFile sentences = io::WeightFile::load(data);
  const bool embeddings_at_hand = std::filesystem::exists(dir / "minilm_embeddings.crwt");
  const nn::BertEmbeddingWeights embeddings =
      embeddings_at_hand
          ? nn::BertEmbeddingWeights::from_weights(io::WeightFile::load(dir / "minilm_embeddings.crwt"), config)
          : nn::BertEmbeddingWeights{};

  double worst_embedding = 0, worst_hidden = 0, worst_input = 0, least_cosine = 1, least_library_cosine = 1;
  std::size_t count = 0;
  for (std::size_t k = 0; sentences.contains("sentence." + std::to_string(k) + ".input"); ++k, ++count) {
    const std::string p = "sentence." + std::to_string(k) + ".";
    const std::uint64_t tokens = sentences.tensors().at(p + "input").dims.at(0);
    const nn::Matrix x{tokens, config.hidden, sentences.values(p + "input", {tokens, config.hidden})};
    const nn::Matrix hidden = nn::bert_reference(weights, x);
    const std::vector<double> embedding = nn::mean_pool(hidden);
    const auto& want = sentences.values(p + "embedding", {config.hidden});
    const double cosine = nn::cosine_similarity(embedding, want);
    INFO("sentence " << k << ": " << tokens << " tokens, cosine " << cosine);
    CHECK(cosine >= 0.99999);
    worst_embedding = std::max(worst_embedding, max_difference(embedding, want));
    least_cosine = std::min(least_cosine, cosine);
    // The token-level states: stored as f32, so within float rounding of values of a few units.
    const auto& want_hidden = sentences.values(p + "hidden", {tokens, config.hidden});
    worst_hidden = std::max(worst_hidden, max_difference(hidden.values, want_hidden));
    if (sentences.contains(p + "library")) {
      const auto& library = sentences.values(p + "library", {config.hidden});
      least_library_cosine = std::min(least_library_cosine, nn::cosine_similarity(embedding, library));
    }
    // Padded with three rows of noise and masked: the same sentence embedding, bit for bit.
    nn::Matrix padded = x;
    padded.rows += 3;
    for (std::size_t i = 0; i < 3 * config.hidden; ++i) padded.values.push_back(std::sin(static_cast<double>(i)));
    CHECK(nn::mean_pool(nn::bert_reference(weights, padded, tokens), tokens) == embedding);
    if (embeddings_at_hand) {
      std::vector<std::size_t> ids;
      for (const double id : sentences.values(p + "token_ids", {tokens})) ids.push_back(static_cast<std::size_t>(id));
      worst_input = std::max(worst_input, max_difference(nn::bert_embed(embeddings, config, ids).values, x.values));
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ostringstream report;
  report << std::setprecision(3) << count << " sentences in " << seconds << " s: sentence embedding vs PyTorch "
         << "(float64): max |difference| " << worst_embedding << ", 1 - least cosine " << 1 - least_cosine
         << "; last hidden states vs PyTorch (stored f32): max |difference| " << worst_hidden << "; 1 - least cosine "
         << "with sentence-transformers' own (float32) embedding " << 1 - least_library_cosine;
  if (embeddings_at_hand) report << "; embedded token ids vs the stored input (f32): max |difference| " << worst_input;
  WARN(report.str());
  CHECK(count == 8);
  CHECK(worst_embedding < 1e-9);  // the same input in float64 on both sides: agreement to rounding
  CHECK(worst_hidden < 1e-5);
  CHECK(least_library_cosine >= 0.99999);
  if (embeddings_at_hand) CHECK(worst_input < 1e-5);
}
