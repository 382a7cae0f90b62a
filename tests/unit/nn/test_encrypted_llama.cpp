// An encrypted Llama decoder on token-major rows over one or more ciphertexts: RoPE on rows against the reference
// rotation, the layer's data movement (RoPE, grouped-query heads, the causal mask, FFN blocks) against the exact
// reference with exact non-linear functions on doubles, the polynomial twin against the reference, and a tiny
// Llama layer (hidden 32, 4 query and 2 key-value heads, FFN 64, 16 tokens in two ciphertexts) traced, planned
// with bootstraps and run on ciphertexts at N = 2^12.

#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/nn/encrypted_llama.hpp"
#include "cerium/nn/row_blocks.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "unit/nn/exact_functions.hpp"
#include "unit/nn/tiny_llama_support.hpp"
#include "unit/nn/transformer_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;
using namespace transformer_test;
namespace nn = cerium::nn;

namespace {

const nn::LlamaConfig kTiny{.layers = 2, .hidden = 32, .heads = 4, .kv_heads = 2, .ffn = 64,
                            .rms_norm_eps = 1e-5, .rope_theta = 10000};

nn::LlamaWeights tiny_weights(std::uint64_t seed) {
  nn::LlamaWeights w = nn::LlamaWeights::seeded(kTiny, seed);
  for (nn::LlamaLayerWeights& l : w.layers) {
    spread_like_trained({&l.query, &l.key, &l.value, &l.output, &l.gate, &l.up, &l.down});
  }
  return w;
}

std::vector<graph::PlainOps::Value> as_values(const std::vector<std::vector<double>>& blocks) {
  std::vector<graph::PlainOps::Value> out;
  for (const auto& b : blocks) out.emplace_back(b.begin(), b.end());
  return out;
}

template <class Model>
nn::Matrix on_doubles(const Model& model, const nn::RowLayout& layout, std::size_t blocks, const nn::Matrix& x) {
  graph::PlainOps ops;
  return nn::unpack_row_blocks(layout,
                               model.template forward<graph::PlainOps>(ops, as_values(nn::pack_row_blocks(layout, blocks, x))));
}

}  // namespace

TEST_CASE("RoPE on rows turns each head's pairs by the rows' positions", "[nn][llama][rope]") {
  auto rng = cerium_test::make_rng(701);
  INFO("test seed " << cerium_test::test_seed());
  const nn::RowLayout layout{.rows = 4, .features = 24, .stride = 32};
  for (const std::size_t first : {0u, 9u}) {
    const nn::RotaryEmbedding rope(layout, {.heads = 3, .theta = 10000, .blocks = 3, .first_position = first});
    const nn::Matrix x = random_rows(12, 24, rng);
    const auto blocks = as_values(nn::pack_row_blocks(layout, 3, x));
    graph::PlainOps ops;
    std::vector<graph::PlainOps::Value> out;
    for (std::size_t b = 0; b < 3; ++b) out.push_back(rope.forward(ops, blocks[b], b));
    CHECK(max_difference(nn::unpack_row_blocks(layout, out), nn::llama_ops::rope(x, 3, 10000, first)) < 1e-12);
    for (const auto& block : out) {  // the padding stays 0
      for (std::size_t r = 0; r < 4; ++r) {
        for (std::size_t f = 24; f < 32; ++f) CHECK(std::abs(block[layout.slot(r, f)]) < 1e-15);
      }
    }
    // With a feature mask folded in (attention's query parts): the same slots times the mask.
    std::vector<double> mask(24);
    for (auto& m : mask) m = static_cast<double>(rng() % 3) - 1;
    for (std::size_t b = 0; b < 3; ++b) {
      const auto masked = rope.forward(ops, blocks[b], b, mask);
      for (std::size_t i = 0; i < masked.size(); ++i) {
        const std::size_t f = i % layout.stride;
        CHECK(std::abs(masked[i] - out[b][i] * (f < 24 ? mask[f] : 0.0)) < 1e-12);
      }
    }
  }
  graph::PlainOps ops;
  const nn::RotaryEmbedding rope(layout, {.heads = 3});
  CHECK_THROWS_AS(rope.forward(ops, graph::PlainOps::Value(layout.slots()), 0, std::vector<double>(23, 1.0)),
                  InvalidArgument);  // a mask of 23 values for 24 features
  CHECK_THROWS_AS(nn::RotaryEmbedding(layout, {.heads = 8}), InvalidArgument);  // a head width of 3
  CHECK_THROWS_AS(nn::RotaryEmbedding(layout, {.heads = 3, .blocks = 0}), InvalidArgument);
}

TEST_CASE("a decoder layer on rows moves the data as Llama does (exact functions) and its twin stays near",
          "[nn][llama][encrypted_llama]") {
  auto rng = cerium_test::make_rng(702);
  INFO("test seed " << cerium_test::test_seed());
  const nn::LlamaWeights weights = tiny_weights(31);
  struct Case {
    std::size_t rows, blocks, ffn_blocks, first_position;
  };
  // 16 tokens in one, two and four ciphertexts; the FFN whole and in two blocks; positions from 0 and from 5.
  for (const Case c : {Case{16, 1, 1, 0}, Case{8, 2, 1, 0}, Case{4, 4, 2, 5}}) {
    INFO(c.blocks << " blocks of " << c.rows << " rows, FFN in " << c.ffn_blocks << ", first position "
                  << c.first_position);
    const nn::EncryptedLlamaOptions options{.rows = c.rows, .blocks = c.blocks, .ffn_blocks = c.ffn_blocks,
                                            .first_position = c.first_position};
    const std::vector<nn::Matrix> calibration = {random_rows(16, 32, rng), random_rows(16, 32, rng)};
    const nn::EncryptedLlama model(weights, nn::llama_ranges(weights, calibration, c.first_position), options);
    CHECK(model.layout().stride == 64 / c.ffn_blocks);
    // Exact RMSNorm, SiLU, exp and reciprocal in the same layer: the reference to rounding.
    const nn::Matrix& x = calibration[0];
    nn::Matrix y = x;
    for (std::size_t l = 0; l < 2; ++l) {
      using Exact = nn::DecoderLayer<exact_functions::Exp, exact_functions::Reciprocal, exact_functions::RmsNorm,
                                     exact_functions::Silu>;
      const auto& lw = weights.layers[l];
      const auto& layer = model.layers()[l];
      const Exact exact(layer.shape(), layer.rope(), layer.linears(),
                        {.softmax = {.upper = 0, .exp = {}, .reciprocal = {}},
                         .input_norm = {model.layout(), lw.input_norm, kTiny.rms_norm_eps},
                         .post_attention_norm = {model.layout(), lw.post_attention_norm, kTiny.rms_norm_eps},
                         .activation = {}});
      const nn::Matrix want = nn::llama_layer_reference(lw, kTiny, y, c.first_position);
      graph::PlainOps ops;
      const nn::Matrix got = nn::unpack_row_blocks(
          model.layout(),
          exact.forward<graph::PlainOps>(ops, as_values(nn::pack_row_blocks(model.layout(), c.blocks, y))));
      CHECK(max_difference(got, want) < 1e-9);
      y = want;
    }
    const double twin_error = max_difference(on_doubles(model, model.layout(), c.blocks, x),
                                             nn::llama_reference(weights, x, c.first_position));
    INFO("twin against the exact reference: " << twin_error);
    CHECK(twin_error < 0.02);
  }
  const nn::EncryptedLlamaOptions three_blocks{.ffn_blocks = 3};
  CHECK_THROWS_AS(nn::EncryptedLlama(weights, nn::llama_ranges(weights, {random_rows(8, 32, rng)}), three_blocks),
                  InvalidArgument);  // 64 is not in 3 blocks
  CHECK_THROWS_AS(nn::EncryptedLlama(weights, {}, {}), InvalidArgument);  // no ranges
}

TEST_CASE("a tiny Llama runs encrypted end to end over two ciphertexts of rows with planned bootstraps",
          "[nn][llama][encrypted_llama][slow]") {
  auto rng = cerium_test::make_rng(703);
  INFO("test seed " << cerium_test::test_seed());
  // One layer (two take twice the 3 minutes on one core and add no other data movement).
  Fixture f(presets::bootstrappable_toy(12, 30), {.relinearization = true});
  nn::LlamaWeights weights = tiny_weights(37);
  weights.layers.resize(1);
  weights.config.layers = 1;
  const TinyLlama tiny = plan_tiny_llama(f.context, weights, 3, rng);
  const nn::EncryptedLlama& model = tiny.model;
  const graph::Plan& plan = tiny.plan;
  const std::size_t slots = model.layout().slots();
  WARN(graph::summary(plan) << "largest value bootstrapped: " << plan.bootstrap_magnitude);
  boot::Bootstrapper bootstrapper(f.context, {.slots = slots, .message_bound = graph::required_message_bound(plan)});
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));

  const nn::Matrix& x = tiny.calibration[0];
  std::vector<Ciphertext> encrypted;
  const auto packed = model.pack_blocks(x);
  for (std::size_t b = 0; b < 2; ++b) {
    encrypted.push_back(f.encryptor.encrypt(f.encoder.encode(packed[b], plan.input_encoding(b))));
  }
  // As the examples run it: every plaintext kept unscaled, made ahead, each weight diagonal once for both
  // ciphertexts of rows (nn::RowLinear's shared product).
  const graph::Executor<backend::CpuBackend> executor(plan, f.evaluator, &bootstrapper,
                                                      {.cache_plaintexts = true, .plaintext_cache_bytes = 1});
  const std::size_t made = executor.encode_plaintexts(2);
  CHECK(made == executor.unscaled_plaintexts());
  CHECK(executor.host_encoded_plaintexts() == 0);
  const auto out = executor.run(std::move(encrypted));
  const nn::Matrix decrypted = model.unpack_blocks({f.decrypt(out.at(0)), f.decrypt(out.at(1))});
  const nn::Matrix twin = on_doubles(model, model.layout(), 2, x);
  const nn::Matrix exact = nn::llama_reference(weights, x);
  const double against_twin = max_difference(decrypted, twin), against_exact = max_difference(decrypted, exact);
  WARN("encrypted against the twin: " << against_twin << " (" << -std::log2(against_twin)
                                      << " bits); against the exact reference: " << against_exact);
  CHECK(against_twin < std::exp2(-9));
  CHECK(against_exact < 0.02);
}
