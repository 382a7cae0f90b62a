#pragma once
// A model planned in stages (graph::StagedPlanner) run one stage after another, each stage's executor taking the
// last one's outputs as they are. The executors are made once and kept with their plaintexts: on a GPU encoded as
// far as the device has room (plaintext_budget.hpp) and unscaled past it, encoded there at each use; on the CPU
// all unscaled. prepare() readies every plaintext ahead on all host cores, so the runs after it encode nothing on
// the host. On a GPU, capture() records each stage's run as CUDA graphs (graph::CapturedRun), so that the runs
// after it replay them. Per run: each stage's seconds; with a `profile` table, every node's time into it as well
// (the device waited for after each node, issued node by node).

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/graph/captured_run.hpp"
#include "cerium/graph/executor.hpp"
#include "layer_profile.hpp"
#include "plaintext_budget.hpp"

struct StagedRun {
  std::vector<cerium::ckks::Ciphertext> outputs;
  std::vector<double> stage_seconds;
  double seconds = 0;
};

template <cerium::backend::PolyBackend B>
class StagedExecutors {
 public:
  // The plans, evaluator and bootstrapper must outlive this object. The plaintext budget covers every stage.
  // run_options: every run's and capture's (profile is set by run() itself).
  StagedExecutors(std::span<const cerium::graph::Plan> plans, const cerium::ckks::BasicEvaluator<B>& evaluator,
                  const cerium::boot::BasicBootstrapper<B>& bootstrapper, cerium::graph::RunOptions run_options = {})
      : plans_(plans), evaluator_(&evaluator), run_options_(run_options) {
    // 0 (everything fits) stays unbounded; a bound is shared out evenly, at least a byte (none encoded) each.
    const std::size_t budget = plaintext_cache_bytes<B>(plans);
    const std::size_t cache_bytes = budget == 0 ? 0 : std::max<std::size_t>(1, budget / plans.size());
    for (const cerium::graph::Plan& plan : plans) {
      executors_.push_back(std::make_unique<cerium::graph::Executor<B>>(
          plan, evaluator, &bootstrapper,
          cerium::graph::ExecutorOptions{
              .cache_plaintexts = true,
              .plaintext_cache_bytes = cache_bytes,
              .unscaled_period_limit = unscaled_period_limit<B>(plan.program.context()->ring_degree())}));
    }
  }

  // Every stage's plaintexts encoded or made unscaled, and placed; returns the seconds it took.
  double prepare() const {
    const auto start = std::chrono::steady_clock::now();
    std::size_t count = 0, unscaled = 0, unscaled_bytes = 0, encoded_bytes = 0;
    for (const auto& executor : executors_) {
      count += executor->encode_plaintexts();
      unscaled += executor->unscaled_plaintexts();
      unscaled_bytes += executor->unscaled_plaintext_bytes();
      encoded_bytes += executor->plaintext_cache_bytes();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{} plaintexts prepared in {:.1f} s: {} kept unscaled ({:.2f} GiB), {} encoded ({:.2f} GiB)\n", count,
               seconds, unscaled, unscaled_bytes / 1073741824.0, count - unscaled, encoded_bytes / 1073741824.0);
    std::fflush(stdout);
    return seconds;
  }

  // On a backend that records device work: each stage run once node by node on `inputs` (the stages in turn, each
  // on the last one's outputs), then recorded, `segment_nodes` nodes to a graph (0: one a stage); later runs
  // without a profile replay them. Returns the seconds it took; elsewhere it does nothing and returns 0.
  double capture(const std::vector<cerium::ckks::Ciphertext>& inputs, std::size_t segment_nodes = 0) {
    const auto start = std::chrono::steady_clock::now();
    if constexpr (cerium::backend::WorkCapture<B>) {
      replays_.clear();
      std::vector<cerium::ckks::Ciphertext> values;
      for (const auto& c : inputs) values.push_back(c.clone());
      for (std::size_t s = 0; s < executors_.size(); ++s) {
        auto captured = std::make_shared<const cerium::graph::CapturedRun<B>>(
            *executors_[s], values, cerium::graph::CaptureOptions{.segment_nodes = segment_nodes, .run = run_options_});
        values.clear();
        for (const auto& c : captured->outputs()) values.push_back(c.clone());
        fmt::print("  stage {}/{} recorded as {} CUDA graph(s) ({:.1f} s to record and instantiate)\n", s + 1,
                   executors_.size(), captured->segments(), captured->capture_seconds());
        std::fflush(stdout);
        replays_.push_back([captured](const std::vector<cerium::ckks::Ciphertext>& in) { return captured->run(in); });
      }
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  bool captured() const { return !replays_.empty(); }

  StagedRun run(std::vector<cerium::ckks::Ciphertext> inputs, LayerProfile* profile = nullptr) const {
    using clock = std::chrono::steady_clock;
    StagedRun run;
    run.outputs = std::move(inputs);
    const auto start = clock::now();
    for (std::size_t s = 0; s < executors_.size(); ++s) {
      const auto stage_start = clock::now();
      if (profile != nullptr) {
        if (s > 0) profile->next_program(plans_[s].program);
        run.outputs = executors_[s]->run(std::move(run.outputs),
                                         [&](const cerium::graph::RunProgress& p) { profile->add(p); },
                                         profiled(run_options_));
      } else if (!replays_.empty()) {
        run.outputs = replays_[s](run.outputs);
      } else {
        run.outputs = executors_[s]->run(std::move(run.outputs), progress_every(30.0, s), run_options_);
      }
      // The stage's time is the device's: wait for what the host queued (a replay returns at once).
      if constexpr (requires { evaluator_->backend().synchronize(); }) evaluator_->backend().synchronize();
      run.stage_seconds.push_back(std::chrono::duration<double>(clock::now() - stage_start).count());
      fmt::print("  stage {}/{}: {:.3f} s\n", s + 1, executors_.size(), run.stage_seconds.back());
      std::fflush(stdout);
    }
    run.seconds = std::chrono::duration<double>(clock::now() - start).count();
    return run;
  }

 private:
  // A line every `seconds` of a stage's run (nodes and bootstraps issued so far), so that a long stage shows its
  // pace before it ends (or where it was when a time limit stopped it). The host issues ahead of the device, so
  // the figures lead the device's by its queue.
  static cerium::graph::RunProgressCallback progress_every(double seconds, std::size_t stage) {
    return [seconds, stage, next = seconds](const cerium::graph::RunProgress& p) mutable {
      if (p.elapsed_seconds < next) return;
      next = p.elapsed_seconds + seconds;
      fmt::print("  stage {}: {} of {} nodes, {} of {} bootstraps issued after {:.0f} s\n", stage + 1, p.nodes_done,
                 p.nodes, p.bootstraps_done, p.bootstraps, p.elapsed_seconds);
      std::fflush(stdout);
    };
  }

  static cerium::graph::RunOptions profiled(cerium::graph::RunOptions options) {
    options.profile = true;
    return options;
  }

  std::span<const cerium::graph::Plan> plans_;
  const cerium::ckks::BasicEvaluator<B>* evaluator_;
  cerium::graph::RunOptions run_options_;
  std::vector<std::unique_ptr<cerium::graph::Executor<B>>> executors_;
  // capture()'s replays, one a stage (type-erased: the CPU backend has no CapturedRun).
  std::vector<std::function<std::vector<cerium::ckks::Ciphertext>(const std::vector<cerium::ckks::Ciphertext>&)>> replays_;
};
