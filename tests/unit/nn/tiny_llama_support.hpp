#pragma once
// Shared by the CPU and GPU tiny-Llama tests: a one-layer Llama (hidden 32, 4 query and 2 key-value heads, FFN 64)
// on 16 tokens in two ciphertexts of 8 rows, calibrated on random rows, traced and planned with bootstraps.

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/nn/encrypted_llama.hpp"
#include "unit/nn/transformer_test_support.hpp"

namespace transformer_test {

// The model, its calibration rows and its plan (see the file comment).
struct TinyLlama {
  nn::EncryptedLlama model;
  std::vector<nn::Matrix> calibration;
  cerium::graph::Plan plan;
};

// One layer of `weights` (whose layers are cut to one) over two ciphertexts of 8 rows at `context`, calibrated on
// `samples` random 16 x hidden matrices drawn from rng.
inline TinyLlama plan_tiny_llama(const cerium::ckks::ContextPtr& context, nn::LlamaWeights weights,
                                 std::size_t samples, std::mt19937_64& rng) {
  weights.layers.resize(1);
  weights.config.layers = 1;
  std::vector<nn::Matrix> calibration;
  for (std::size_t s = 0; s < samples; ++s) calibration.push_back(random_rows(16, weights.config.hidden, rng));
  nn::EncryptedLlama model(weights, nn::llama_ranges(weights, calibration), {.rows = 8, .blocks = 2});
  const std::size_t slots = model.layout().slots();
  cerium::graph::Tracer t(context);
  std::vector<cerium::graph::Value> inputs = {t.input("x0", slots), t.input("x1", slots)};
  const auto outputs = model.forward<cerium::graph::Tracer>(t, inputs);
  t.output(outputs[0], "hidden0");
  t.output(outputs[1], "hidden1");
  cerium::graph::PlanOptions options;
  options.bootstrap =
      cerium::graph::bootstrap_spec(cerium::boot::Bootstrapper(context, cerium::boot::BootstrapConfig{.slots = slots}));
  for (const nn::Matrix& c : calibration) {
    std::vector<cerium::graph::SlotValues> sample;
    for (const auto& block : model.pack_blocks(c)) sample.emplace_back(block.begin(), block.end());
    options.calibration.push_back(std::move(sample));
  }
  cerium::graph::Plan plan = cerium::graph::plan(std::move(t).finish(), options);
  return {std::move(model), std::move(calibration), std::move(plan)};
}

}  // namespace transformer_test
