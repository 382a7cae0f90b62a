#pragma once
// The per-layer table of a profiled run (graph::RunOptions::profile): a model labels each layer's output
// (Tracer::label), so every node's time goes to the next labelled node, the layer it belongs to; layers of the
// same name add up. Feed it each RunProgress, then print it. A model run in stages (one program each) calls
// next_program before each stage after the first: the table adds up over all of them.

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "cerium/graph/executor.hpp"
#include "cerium/graph/program.hpp"

class LayerProfile {
 public:
  explicit LayerProfile(const cerium::graph::Program& program) : program_(&program) {}

  // The next stage's program: its run counts its bootstraps from 0 again.
  void next_program(const cerium::graph::Program& program) {
    program_ = &program;
    last_done_ = 0;
  }

  void add(const cerium::graph::RunProgress& p) {
    const cerium::graph::Node& node = program_->node(p.node);
    OpRow& op = ops_[static_cast<std::size_t>(node.op)];
    ++op.nodes;
    op.seconds += p.node_seconds - p.bootstrap_seconds;
    pending_.seconds += p.node_seconds;
    pending_.bootstrap_seconds += p.bootstrap_seconds;
    pending_.bootstraps += p.bootstraps_done - last_done_;
    bootstraps_seen_ += p.bootstraps_done - last_done_;
    last_done_ = p.bootstraps_done;
    ++pending_.nodes;
    if (node.name.empty() || node.op == cerium::graph::Op::input) return;
    if (node.op == cerium::graph::Op::output && pending_.nodes == 1 && !rows_.empty()) {
      rows_.back().seconds += pending_.seconds;  // an output node alone: nothing to show
    } else {
      close(node.name);
    }
    pending_ = {};
  }

  double total_seconds() const {
    double total = pending_.seconds;
    for (const Row& r : rows_) total += r.seconds;
    return total;
  }
  double bootstrap_seconds() const {
    double total = pending_.bootstrap_seconds;
    for (const Row& r : rows_) total += r.bootstrap_seconds;
    return total;
  }

  void print() const {
    const double total = total_seconds();
    fmt::print("{:<22} {:>7} {:>10} {:>6} {:>11} {:>6}\n", "layer", "nodes", "ms", "share", "bootstraps", "ms");
    for (const Row& r : rows_) {
      fmt::print("{:<22} {:>7} {:>10.2f} {:>5.1f}% {:>11} {:>6.1f}\n", r.name, r.nodes, 1e3 * r.seconds,
                 100 * r.seconds / total, r.bootstraps, 1e3 * r.bootstrap_seconds);
    }
    fmt::print("{:<22} {:>7} {:>10.2f} {:>6} {:>11} {:>6.1f}  (bootstrapping {:.1f}% of the time)\n", "total", "",
               1e3 * total, "", bootstraps_seen_, 1e3 * bootstrap_seconds(),
               total > 0 ? 100 * bootstrap_seconds() / total : 0.0);
    // Where the time outside the bootstraps goes, by operation (a node's time covers its host work too).
    fmt::print("\n{:<22} {:>7} {:>10} {:>6} {:>10}\n", "operation", "nodes", "ms", "share", "us each");
    for (std::size_t k = 0; k < ops_.size(); ++k) {
      const OpRow& r = ops_[k];
      if (r.nodes == 0) continue;
      fmt::print("{:<22} {:>7} {:>10.2f} {:>5.1f}% {:>10.1f}\n", to_string(static_cast<cerium::graph::Op>(k)),
                 r.nodes, 1e3 * r.seconds, total > 0 ? 100 * r.seconds / total : 0.0, 1e6 * r.seconds / r.nodes);
    }
  }

 private:
  struct Row {
    std::string name;
    std::size_t nodes = 0;
    int bootstraps = 0;
    double seconds = 0, bootstrap_seconds = 0;
  };

  void close(const std::string& name) {
    for (Row& r : rows_) {
      if (r.name != name) continue;
      r.nodes += pending_.nodes;
      r.bootstraps += pending_.bootstraps;
      r.seconds += pending_.seconds;
      r.bootstrap_seconds += pending_.bootstrap_seconds;
      return;
    }
    pending_.name = name;
    rows_.push_back(pending_);
  }

  struct OpRow {
    std::size_t nodes = 0;
    double seconds = 0;
  };

  const cerium::graph::Program* program_;
  std::vector<Row> rows_;
  std::array<OpRow, static_cast<std::size_t>(cerium::graph::Op::output) + 1> ops_{};
  Row pending_;
  int bootstraps_seen_ = 0;
  int last_done_ = 0;
};
