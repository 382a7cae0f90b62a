#pragma once
// A model planned in stages (graph::StagedPlanner) run one stage after another: each stage's executor takes the
// last one's outputs as they are, streams its own plaintexts from host threads (encoded a window ahead, freed
// after use) and is gone before the next starts. Per stage: its seconds; with a `profile` table, every node's
// time into it as well (the device waited for after each node).

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <span>
#include <utility>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/graph/executor.hpp"
#include "layer_profile.hpp"

struct StagedRun {
  std::vector<cerium::ckks::Ciphertext> outputs;
  std::vector<double> stage_seconds;
  double seconds = 0;
};

template <cerium::backend::PolyBackend B>
StagedRun run_stages(std::span<const cerium::graph::Plan> plans, const cerium::ckks::BasicEvaluator<B>& evaluator,
                     const cerium::boot::BasicBootstrapper<B>& bootstrapper,
                     std::vector<cerium::ckks::Ciphertext> inputs, LayerProfile* profile = nullptr) {
  using namespace cerium;
  using clock = std::chrono::steady_clock;
  StagedRun run;
  run.outputs = std::move(inputs);
  const auto start = clock::now();
  for (std::size_t s = 0; s < plans.size(); ++s) {
    const auto stage_start = clock::now();
    const graph::Executor<B> executor(plans[s], evaluator, &bootstrapper, {.cache_plaintexts = false});
    if (profile != nullptr) {
      if (s > 0) profile->next_program(plans[s].program);
      run.outputs = executor.run(std::move(run.outputs), [&](const graph::RunProgress& p) { profile->add(p); },
                                 {.profile = true});
    } else {
      run.outputs = executor.run(std::move(run.outputs));
    }
    run.stage_seconds.push_back(std::chrono::duration<double>(clock::now() - stage_start).count());
    fmt::print("  stage {}/{}: {:.3f} s\n", s + 1, plans.size(), run.stage_seconds.back());
    std::fflush(stdout);
  }
  run.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return run;
}
