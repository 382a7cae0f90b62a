#pragma once
// A model too large for one program graph, planned one stage at a time: BERT-Base's 12 layers over 4 ciphertexts
// of rows, or Llama's 32 blocks, would be millions of nodes and hundreds of GiB of diagonals in one graph. Each
// stage (a layer, a block) is its own program instead:
//   - traced with its inputs at the levels the previous stage's outputs hold (the chain's scales there, so the
//     ciphertexts pass from one executor to the next as they are);
//   - planned with calibration samples that the previous stages' simulation produced (graph/simulate.hpp), so
//     its bootstraps are placed on small values as in one big plan;
//   - its outputs kept at the bootstrapper's input level at least, so the next stage may refresh them first;
//   - run by its own executor, so its plaintexts (the stage's weights) are encoded, used and freed with it, and a
//     stage's weights can be built, or read from disk, just before it is planned.
//
//   graph::StagedPlanner planner(context, options, {slots}, {{sample}});
//   for (std::size_t l = 0; l < layers; ++l) {
//     const graph::Plan plan = planner.next([&](graph::Tracer& t, std::span<const graph::Value> x) {
//       return model.layer(l).forward(t, x);
//     });
//     outputs = graph::Executor<B>(plan, evaluator, &bootstrapper).run(std::move(outputs));
//   }
//
// The stages' rotations are only known stage by stage: generate the keys for the first stage's steps and pass
// them as PlanOptions::available_rotations, so that a later stage that needs another is a trace-time error
// (stages of one shape need the same steps), or plan every stage first and generate their union.

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/core/check.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/program.hpp"
#include "cerium/graph/tracer.hpp"

namespace cerium::graph {

// One input of a stage: its slots and the level it arrives at.
struct StageInput {
  std::size_t slots = 0;  // 0: N/2
  int level = -1;         // -1: the top level
};

// Plans a model one stage at a time (see the file comment).
class StagedPlanner {
 public:
  // options: for every stage (its calibration is replaced by the stage's own samples); inputs: the first stage's;
  // samples: calibration inputs of the first stage (one slot vector per input each), or none.
  StagedPlanner(ckks::ContextPtr context, PlanOptions options, std::vector<StageInput> inputs,
                std::vector<std::vector<SlotValues>> samples = {});

  // Traces the next stage, trace(tracer, inputs) -> its outputs (the next stage's inputs), and plans it.
  // InvalidArgument when the stage returns no outputs.
  template <class Trace>
  Plan next(Trace&& trace) {
    Tracer tracer(context_);
    std::vector<Value> inputs;
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      inputs.push_back(tracer.input(stage_name("input", i), inputs_[i].slots, inputs_[i].level));
    }
    const std::vector<Value> outputs = trace(tracer, std::span<const Value>(inputs));
    require(!outputs.empty(), "staged planner: stage {} has no outputs", stages_);
    for (std::size_t i = 0; i < outputs.size(); ++i) tracer.output(outputs[i], stage_name("output", i));
    return finish(std::move(tracer).finish());
  }

  std::size_t stages() const { return stages_; }  // planned so far
  // The next stage's inputs and calibration samples (the last stage's outputs).
  const std::vector<StageInput>& inputs() const { return inputs_; }
  const std::vector<std::vector<SlotValues>>& samples() const { return samples_; }

 private:
  std::string stage_name(const char* what, std::size_t i) const;
  Plan finish(Program program);

  ckks::ContextPtr context_;
  PlanOptions options_;
  std::vector<StageInput> inputs_;
  std::vector<std::vector<SlotValues>> samples_;
  std::size_t stages_ = 0;
};

}  // namespace cerium::graph
