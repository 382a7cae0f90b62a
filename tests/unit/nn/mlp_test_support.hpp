#pragma once
// The perceptron training tests' common parts (tests/unit/nn/test_mlp_training.cpp, tests/gpu/test_mlp_gpu.cpp): a
// small shape, random batches, the twin's step on doubles, the batch and the weights encrypted as a planned step's
// inputs, and the step traced with its weights at a given level.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/nn/mlp_training.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "unit/nn/transformer_test_support.hpp"

namespace mlp_test {

using namespace evaluator_test;
using transformer_test::max_difference;
namespace nn = cerium::nn;

inline const nn::MlpShape kShape{.inputs = 12, .hidden = 6, .outputs = 3, .batch = 8, .learning_rate = 0.5};

struct Batch {
  nn::Matrix x;
  std::vector<std::uint8_t> labels;
};

inline Batch random_batch(const nn::MlpShape& s, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> pixel(0, 1);
  Batch b{nn::Matrix::zeros(s.batch, s.inputs), std::vector<std::uint8_t>(s.batch)};
  for (double& v : b.x.values) v = pixel(rng);
  for (auto& l : b.labels) l = static_cast<std::uint8_t>(rng() % s.outputs);
  return b;
}

inline double weight_difference(const nn::MlpWeights& a, const nn::MlpWeights& b) {
  return std::max(max_difference(a.w1, b.w1), max_difference(a.w2, b.w2));
}

// The step on doubles (graph::PlainOps): the twin.
inline nn::MlpWeights twin_step(const nn::MlpTrainer& trainer, const nn::MlpWeights& w, const Batch& batch) {
  graph::PlainOps ops;
  const auto as_value = [](const std::vector<double>& v) { return graph::PlainOps::Value(v.begin(), v.end()); };
  std::vector<graph::PlainOps::Value> rows;
  for (const auto& r : trainer.pack_weights(w)) rows.push_back(as_value(r));
  const auto out = trainer.step<graph::PlainOps>(ops, as_value(trainer.pack_inputs(batch.x)),
                                                  as_value(trainer.pack_targets(batch.labels)), rows);
  return trainer.unpack_weights({out.begin(), out.end()});
}

// The batch's inputs and targets, encrypted as the plan's inputs 0 and 1.
inline std::vector<Ciphertext> encrypt_batch(Fixture& f, const nn::MlpTrainer& trainer, const Batch& batch,
                                      const graph::Plan& plan) {
  std::vector<Ciphertext> out;
  out.push_back(f.encryptor.encrypt(f.encoder.encode(trainer.pack_inputs(batch.x), plan.input_encoding(0))));
  out.push_back(f.encryptor.encrypt(f.encoder.encode(trainer.pack_targets(batch.labels), plan.input_encoding(1))));
  return out;
}

inline std::vector<Ciphertext> encrypt_weights(Fixture& f, const nn::MlpTrainer& trainer, const nn::MlpWeights& w,
                                        const graph::Plan& plan) {
  std::vector<Ciphertext> out;
  const auto rows = trainer.pack_weights(w);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out.push_back(f.encryptor.encrypt(f.encoder.encode(rows[r], plan.input_encoding(2 + r))));
  }
  return out;
}

inline graph::Program trace_step(const std::shared_ptr<const Context>& context, const nn::MlpTrainer& trainer, int weight_level) {
  graph::Tracer t(context);
  const std::size_t slots = trainer.shape().slots();
  const graph::Value x = t.input("x", slots), target = t.input("t", slots);
  std::vector<graph::Value> w;
  for (std::size_t r = 0; r < trainer.weight_count(); ++r) {
    w.push_back(t.input(fmt::format("w{}", r), slots, weight_level));
  }
  const auto out = trainer.step<graph::Tracer>(t, x, target, w);
  for (std::size_t r = 0; r < out.size(); ++r) t.output(out[r], fmt::format("w{}", r));
  return std::move(t).finish();
}

// A refreshed step (MlpShape::refresh_weights) planned with bootstraps, calibrated on one batch and its weights: the
// weights leave every step bootstrapped and enter the next at the bootstrapper's output level, so one plan serves
// every step.
inline graph::Plan plan_refreshed_step(const Fixture& f, const nn::MlpTrainer& trainer, const Batch& batch,
                                       const nn::MlpWeights& weights) {
  const boot::BootstrapConfig config{.slots = trainer.shape().slots()};
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(boot::Bootstrapper(f.context, config));
  options.output_level = boot::bootstrap_levels(f.context->parameters(), config).output;
  std::vector<graph::SlotValues> sample;
  const auto add = [&](const std::vector<double>& v) { sample.emplace_back(v.begin(), v.end()); };
  add(trainer.pack_inputs(batch.x));
  add(trainer.pack_targets(batch.labels));
  for (const auto& r : trainer.pack_weights(weights)) add(r);
  options.calibration = {sample};
  return graph::plan(trace_step(f.context, trainer, options.output_level), options);
}

}  // namespace mlp_test
