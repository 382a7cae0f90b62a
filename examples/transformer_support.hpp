#pragma once
// What the transformer examples (minilm, bert_base, llama; train_mlp too) share: the planner's bootstrap at N = 2^16
// for a slot count, timing and host memory figures, --explain's file, and the largest difference of two matrices.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/core/check.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/nn/bert.hpp"

// "a,b,c" -> {"a", "b", "c"} (empty items kept out): the examples' list arguments.
inline std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// --explain FILE: a plan's table (graph::explain), after a heading line when one is given; the file is started over
// for the first plan and appended to for the next ones. InvalidArgument when it cannot be written.
inline void write_explain(const std::string& path, const cerium::graph::Plan& plan, const std::string& heading,
                          bool first) {
  std::ofstream file(path, first ? std::ios::trunc : std::ios::app);
  if (!heading.empty()) file << heading << "\n";
  file << cerium::graph::explain(plan);
  cerium::require(static_cast<bool>(file), "--explain: could not write {}", path);
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The process's peak resident memory (Linux), in GiB; 0 where unknown.
inline double peak_host_gib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / (1024.0 * 1024.0);
  }
  return 0;
}

inline double max_difference(const cerium::nn::Matrix& a, const cerium::nn::Matrix& b) {
  double e = 0;
  for (std::size_t i = 0; i < a.values.size() && i < b.values.size(); ++i) {
    e = std::max(e, std::abs(a.values[i] - b.values[i]));
  }
  return e;
}

// Host threads for the planner's calibration simulation (PlanOptions::simulation_threads): CERIUM_PLAN_THREADS
// if set, else half the cores up to 8 on a machine of 8 or more (the GPU machine's 16: a layer planned while the
// one before runs, beside its host thread), else 1 (spinning threads on a small shared machine slow it down).
inline std::size_t plan_threads() {
  if (const char* env = std::getenv("CERIUM_PLAN_THREADS")) return std::max<std::size_t>(1, std::strtoull(env, nullptr, 10));
  const std::size_t cores = std::thread::hardware_concurrency();
  return cores >= 8 ? std::min<std::size_t>(8, cores / 2) : 1;
}

// Plan options with the bootstrapper a BootstrapConfig{.slots = slots} makes on this context, plan_threads() and
// bootstraps in pairs (PlanOptions::pair_bootstraps);
// a positive magnitude_limit replaces PlanOptions::bootstrap_magnitude_limit's default (the examples'
// --magnitude-limit).
inline cerium::graph::PlanOptions bootstrapped_plan_options(const cerium::ckks::ContextPtr& context,
                                                            std::size_t slots, double magnitude_limit = 0) {
  using namespace cerium;
  const auto levels = boot::bootstrap_levels(context->parameters(), boot::BootstrapConfig{.slots = slots});
  graph::PlanOptions options;
  options.bootstrap = graph::BootstrapSpec{.output_level = levels.output,
                                           .output_scale = context->parameters().default_scale_at(levels.output),
                                           .min_input_level = 1,
                                           .slots = slots};
  if (magnitude_limit > 0) options.bootstrap_magnitude_limit = magnitude_limit;
  options.simulation_threads = plan_threads();
  options.pair_bootstraps = true;  // a model's values are real: independent refreshes run two at a time
  return options;
}
