#include "cerium/graph/passes/rank_placement.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "cerium/core/check.hpp"
#include "cerium/dist/traffic_model.hpp"

namespace cerium::graph {

namespace {

// Seconds of a node's own operation at its operands' level (top-level times scaled by the limbs there).
double node_seconds(const Node& node, int level, const ckks::Context& context, const MeshModel& mesh) {
  const double limbs = static_cast<double>(context.limbs_at(level));
  const double top = static_cast<double>(context.limbs_at(context.max_level()));
  const double share = limbs / top;
  switch (node.op) {
    case Op::multiply:
    case Op::rotate:
    case Op::conjugate: return mesh.key_switch_seconds * share;
    case Op::multiply_plain:
    case Op::multiply_constant: return mesh.plaintext_product_seconds * share;
    case Op::add:
    case Op::sub:
    case Op::negate:
    case Op::add_plain:
    case Op::add_constant: return mesh.addition_seconds * share;
    case Op::bootstrap:
    case Op::input:
    case Op::output: return 0;
  }
  return 0;
}

std::uint64_t received(const dist::RankBytes& bytes) {
  std::uint64_t total = 0;
  for (auto r : bytes.received) total += r;
  return total;
}

}  // namespace

double RankPlacement::savings() const {
  return limb_parallel_bytes == 0 ? 0.0 : 1.0 - static_cast<double>(moved_bytes) / static_cast<double>(limb_parallel_bytes);
}

RankPlacement place_on_ranks(const Plan& plan, const MeshModel& mesh, const std::vector<SegmentBoundary>& boundaries) {
  require(mesh.ranks >= 1 && mesh.link_bytes_per_second > 0, "a mesh of {} ranks at {} bytes/s", mesh.ranks,
          mesh.link_bytes_per_second);
  const Program& program = plan.program;
  const ckks::Context& context = *program.context();
  const std::size_t n = program.size();
  const auto ranks = static_cast<std::size_t>(mesh.ranks);
  const dist::LimbTraffic traffic(program.context(), mesh.ranks);

  RankPlacement out;
  out.ranks = mesh.ranks;
  out.rank.assign(n, 0);
  out.busy_seconds.assign(ranks, 0);
  std::vector<double> finish(n, 0), free_at(ranks, 0);
  std::unordered_map<std::uint64_t, double> arrival;  // (value, rank) -> when it is there
  const auto key = [&](NodeId v, std::size_t r) { return static_cast<std::uint64_t>(v) * ranks + r; };
  const auto transfer = [&](NodeId v) {
    return mesh.link_latency_seconds + static_cast<double>(plan.memory.value_bytes[v]) / mesh.link_bytes_per_second;
  };

  std::map<std::string, std::size_t> segment_index;
  std::vector<std::size_t> segment_of(n, 0);
  {
    // Segments: each boundary label closes one; the nodes after the last closing node are "rest".
    std::vector<std::size_t> pending;
    const auto index_of = [&](const std::string& name) {
      auto [it, fresh] = segment_index.emplace(name, out.segments.size());
      if (fresh) out.segments.push_back({name});
      return it->second;
    };
    for (NodeId id = 0; id < n; ++id) {
      pending.push_back(id);
      for (const auto& b : boundaries) {
        if (program.node(id).name == b.label) {
          const std::size_t s = index_of(b.segment);
          for (auto p : pending) segment_of[p] = s;
          pending.clear();
          break;
        }
      }
    }
    if (!pending.empty()) {
      const std::size_t s = index_of("rest");
      for (auto p : pending) segment_of[p] = s;
    }
  }

  std::size_t next_input = 0;
  for (NodeId id = 0; id < n; ++id) {
    const Node& node = program.node(id);
    const NodePlan& np = plan.nodes[id];
    RankPlacement::Segment& segment = out.segments[segment_of[id]];
    ++segment.nodes;
    const int operand_level = np.level + level_cost(node.op);
    double cost = node_seconds(node, operand_level, context, mesh) + (np.bootstrap ? mesh.bootstrap_seconds : 0);
    if (node.op == Op::bootstrap) cost = mesh.bootstrap_seconds;
    out.serial_seconds += cost;

    // Limb-parallel: the gathers of its key switch or rescale, 1/R of its work, and their transfer time.
    dist::RankBytes limb(ranks);
    switch (node.op) {
      case Op::multiply: limb = traffic.key_switch(operand_level, true); break;
      case Op::rotate: {
        const int group = plan.hoisting.group_of.empty() ? -1 : plan.hoisting.group_of[id];
        const bool first = group < 0 || plan.hoisting.groups[static_cast<std::size_t>(group)].rotations.front() == id;
        limb = first ? traffic.key_switch(operand_level) : traffic.mod_down(operand_level);
        break;
      }
      case Op::conjugate: limb = traffic.key_switch(operand_level); break;
      case Op::multiply_plain:
      case Op::multiply_constant: limb = traffic.rescale(operand_level); break;
      default: break;
    }
    const std::uint64_t limb_bytes = mesh.ranks > 1 ? received(limb) : 0;
    out.limb_parallel_bytes += limb_bytes;
    segment.limb_parallel_bytes += limb_bytes;
    out.limb_parallel_seconds += cost / static_cast<double>(ranks);
    if (mesh.ranks > 1 && limb.calls > 0) {
      out.limb_parallel_seconds += static_cast<double>(limb.calls) * mesh.link_latency_seconds +
                                   static_cast<double>(limb.max_received()) / mesh.link_bytes_per_second;
    }

    // Ciphertext-parallel: the rank where the node finishes first.
    if (node.op == Op::input) {
      const std::size_t r = next_input++ % ranks;  // inputs (row blocks, samples) spread over the ranks
      out.rank[id] = static_cast<int>(r);
      finish[id] = 0;
      continue;
    }
    std::size_t best = 0;
    double best_finish = std::numeric_limits<double>::infinity();
    std::uint64_t best_bytes = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      double ready = 0;
      std::uint64_t bytes = 0;
      for (const NodeId v : node.inputs) {
        if (static_cast<std::size_t>(out.rank[v]) == r) {
          ready = std::max(ready, finish[v]);
        } else if (auto it = arrival.find(key(v, r)); it != arrival.end()) {
          ready = std::max(ready, it->second);
        } else {
          ready = std::max(ready, finish[v] + transfer(v));
          bytes += plan.memory.value_bytes[v];
        }
      }
      const double done = std::max(ready, free_at[r]) + cost;
      if (done < best_finish - 1e-12 || (done <= best_finish + 1e-12 && bytes < best_bytes)) {
        best = r;
        best_finish = done;
        best_bytes = bytes;
      }
    }
    for (const NodeId v : node.inputs) {
      if (static_cast<std::size_t>(out.rank[v]) == best || arrival.contains(key(v, best))) continue;
      arrival.emplace(key(v, best), finish[v] + transfer(v));
      out.moved_bytes += plan.memory.value_bytes[v];
      segment.moved_bytes += plan.memory.value_bytes[v];
    }
    out.rank[id] = static_cast<int>(best);
    finish[id] = best_finish;
    free_at[best] = best_finish;
    out.busy_seconds[best] += cost;
    out.makespan_seconds = std::max(out.makespan_seconds, best_finish);
  }
  if (out.makespan_seconds == 0) out.makespan_seconds = out.serial_seconds;
  return out;
}

std::string explain_placement(const RankPlacement& p) {
  const auto gb = [](std::uint64_t bytes) { return static_cast<double>(bytes) / 1e9; };
  std::string s = fmt::format(
      "placement over {} ranks\n"
      "  ciphertext-parallel: {:.3f} GB moved, {:.3f} s predicted ({:.1f}% scaling efficiency)\n"
      "  limb-parallel:       {:.3f} GB moved, {:.3f} s predicted ({:.1f}% scaling efficiency; bootstraps' gathers "
      "left out)\n"
      "  one rank:            {:.3f} s; bytes saved by the placement: {:.1f}%\n",
      p.ranks, gb(p.moved_bytes), p.makespan_seconds, 100 * p.efficiency(), gb(p.limb_parallel_bytes),
      p.limb_parallel_seconds, 100 * p.limb_parallel_efficiency(), p.serial_seconds, 100 * p.savings());
  for (const auto& seg : p.segments) {
    const double saved = seg.limb_parallel_bytes == 0
                             ? 0.0
                             : 100.0 * (1.0 - static_cast<double>(seg.moved_bytes) /
                                                  static_cast<double>(seg.limb_parallel_bytes));
    s += fmt::format("  segment {:<12} {:>8} nodes: {:.3f} GB vs {:.3f} GB limb-parallel ({:.1f}% less)\n", seg.name,
                     seg.nodes, gb(seg.moved_bytes), gb(seg.limb_parallel_bytes), saved);
  }
  for (std::size_t r = 0; r < p.busy_seconds.size(); ++r) {
    s += fmt::format("  rank {}: busy {:.3f} s\n", r, p.busy_seconds[r]);
  }
  return s;
}

}  // namespace cerium::graph
