#include "cerium/graph/staged_planner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cerium/graph/simulate.hpp"

namespace cerium::graph {

StagedPlanner::StagedPlanner(ckks::ContextPtr context, PlanOptions options, std::vector<StageInput> inputs,
                             std::vector<std::vector<SlotValues>> samples)
    : context_(std::move(context)), options_(std::move(options)), inputs_(std::move(inputs)),
      samples_(std::move(samples)) {
  require(context_ != nullptr && !inputs_.empty(), "staged planner: needs a context and at least one input");
  // Outputs the next stage can still bootstrap (a value below the bootstrapper's input level could not be).
  if (options_.bootstrap) options_.output_level = std::max(options_.output_level, options_.bootstrap->min_input_level);
  for (const auto& sample : samples_) {
    require<MismatchError>(sample.size() == inputs_.size(), "staged planner: a sample of {} inputs for {}",
                           sample.size(), inputs_.size());
  }
}

std::string StagedPlanner::stage_name(const char* what, std::size_t i) const {
  return fmt::format("stage {} {} {}", stages_, what, i);
}

Plan StagedPlanner::finish(Program program) {
  options_.calibration = samples_;
  Plan plan = graph::plan(std::move(program), options_);
  // The next stage's inputs: where and how large this stage's outputs are.
  inputs_.clear();
  for (const NodeId id : plan.program.outputs()) {
    const NodeId value = plan.program.node(id).inputs.at(0);
    inputs_.push_back({.slots = plan.program.node(id).slots, .level = plan.nodes[value].held_level});
  }
  if (!samples_.empty() && plan.calibration_outputs.size() == samples_.size()) {
    samples_ = plan.calibration_outputs;  // simulated while placing the bootstraps
  } else {
    for (auto& sample : samples_) sample = simulate_outputs(plan.program, sample);
  }
  options_.calibration.clear();
  ++stages_;
  return plan;
}

}  // namespace cerium::graph
