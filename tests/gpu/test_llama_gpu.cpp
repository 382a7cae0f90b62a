// A tiny Llama layer (hidden 32, 4 query and 2 key-value heads, FFN 64, 16 tokens in two ciphertexts of rows),
// planned with bootstraps, run on the GPU as the examples run a block (seeded keys expanded on the device, the
// weights' diagonals kept unscaled there and shared by both ciphertexts of rows, sparse ones encoded in one launch)
// and on the CPU as the executor runs by default: the same words.

#include <random>
#include <vector>

#include "cerium/backend/cuda_backend.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/graph/executor.hpp"
#include "gpu_test_support.hpp"
#include "planned_twins.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "unit/nn/tiny_llama_support.hpp"

using namespace evaluator_test;
using namespace transformer_test;
namespace nn = cerium::nn;

TEST_CASE("A tiny Llama layer run as the examples run it on the GPU gives the CPU's words", "[gpu][nn][llama]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto rng = cerium_test::make_rng(704);
  const nn::LlamaConfig config{.layers = 1, .hidden = 32, .heads = 4, .kv_heads = 2, .ffn = 64,
                               .rms_norm_eps = 1e-5, .rope_theta = 10000};
  nn::LlamaWeights weights = nn::LlamaWeights::seeded(config, 38);
  for (nn::LlamaLayerWeights& l : weights.layers) {
    spread_like_trained({&l.query, &l.key, &l.value, &l.output, &l.gate, &l.up, &l.down});
  }
  // Wide levels, and with narrow ones (one ~2^30 prime each: the bootstrapper lands on their scale, the
  // plaintexts are encoded at each level's own default scale).
  const int narrow = GENERATE(0, 14);
  INFO("narrow levels " << narrow);
  CkksConfig params = presets::bootstrappable_toy(12, 30);
  params.narrow_levels = narrow;
  Fixture f(params, {.relinearization = true});
  const TinyLlama tiny = plan_tiny_llama(f.context, std::move(weights), 2, rng);
  const graph::Plan& plan = tiny.plan;
  const std::size_t slots = tiny.model.layout().slots();
  REQUIRE(plan.bootstraps() > 0);

  // One set of keys for both backends (seeded, as the examples make them: the GPU expands them).
  gpu_test::PlannedTwins twins(f.context, f.keygen, plan, slots);
  Evaluator& cpu = twins.cpu;
  CudaEvaluator& gpu = twins.gpu;

  std::vector<Ciphertext> encrypted;
  const auto packed = tiny.model.pack_blocks(tiny.calibration[0]);
  for (std::size_t b = 0; b < 2; ++b) {
    encrypted.push_back(f.encryptor.encrypt(f.encoder.encode(packed[b], plan.input_encoding(b))));
  }
  const auto clones = [](const std::vector<Ciphertext>& values) {
    std::vector<Ciphertext> out;
    for (const auto& c : values) out.push_back(c.clone());
    return out;
  };
  const auto want = graph::Executor<backend::CpuBackend>(plan, cpu, &twins.cpu_bootstrapper).run(clones(encrypted));
  const graph::Executor<backend::CudaBackend> executor(
      plan, gpu, &twins.gpu_bootstrapper,
      {.cache_plaintexts = true,
       .plaintext_cache_bytes = 1,
       .unscaled_period_limit = backend::CudaBackend::sparse_encoding_period(f.context->ring_degree())});
  const std::size_t prepared = executor.encode_plaintexts();  // before asking how many stayed unscaled
  CHECK(prepared == executor.unscaled_plaintexts());
  const auto got = executor.run(clones(encrypted));
  REQUIRE(got.size() == 2);
  for (std::size_t b = 0; b < 2; ++b) {
    INFO("ciphertext of rows " << b);
    CHECK(same_words(gpu.download(got[b]), want[b]));
  }
}
