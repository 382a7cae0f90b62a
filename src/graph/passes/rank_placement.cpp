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
    case Op::product_sum:  // the tensors' additions are small beside the one key switch
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

namespace {

// One list schedule: each node on the rank minimizing its finish time plus `byte_penalty` seconds per byte it
// would move there (0: plain HEFT, fastest; larger: operands stay put unless moving pays for itself).
struct Schedule {
  std::vector<int> rank;
  std::vector<double> busy;
  std::vector<std::uint64_t> segment_moved;
  std::uint64_t moved = 0;
  std::size_t transfers = 0;
  double makespan = 0;
};

// Owner computes: each node on the rank that holds most of its operands' bytes, unless that rank's work would pass
// (1 + spill) times the mean: then on the least busy rank (its consumers follow it there). Times are simulated
// afterwards with that assignment (each rank runs its nodes in program order).
std::vector<int> owner_computes(const Plan& plan, const MeshModel& mesh, const std::vector<double>& cost, double spill) {
  const Program& program = plan.program;
  const auto ranks = static_cast<std::size_t>(mesh.ranks);
  std::vector<int> rank(program.size(), 0);
  std::vector<double> busy(ranks, 0);
  double total = 0;
  std::size_t next_input = 0;
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& node = program.node(id);
    if (node.op == Op::input) {
      rank[id] = static_cast<int>(next_input++ % ranks);
      continue;
    }
    std::vector<std::uint64_t> held(ranks, 0);
    for (const NodeId v : node.inputs) held[static_cast<std::size_t>(rank[v])] += plan.memory.value_bytes[v] + 1;
    std::size_t owner = 0;
    for (std::size_t r = 1; r < ranks; ++r) {
      if (held[r] > held[owner] || (held[r] == held[owner] && busy[r] < busy[owner])) owner = r;
    }
    total += cost[id];
    const double mean = total / static_cast<double>(ranks);
    if (busy[owner] + cost[id] > (1 + spill) * mean + cost[id]) {
      owner = static_cast<std::size_t>(std::min_element(busy.begin(), busy.end()) - busy.begin());
    }
    rank[id] = static_cast<int>(owner);
    busy[owner] += cost[id];
  }
  return rank;
}

Schedule schedule(const Plan& plan, const MeshModel& mesh, const std::vector<double>& cost,
                  const std::vector<std::size_t>& segment_of, std::size_t segments, double byte_penalty,
                  const std::vector<int>* fixed = nullptr) {
  const Program& program = plan.program;
  const std::size_t n = program.size();
  const auto ranks = static_cast<std::size_t>(mesh.ranks);
  Schedule out;
  out.rank.assign(n, 0);
  out.busy.assign(ranks, 0);
  out.segment_moved.assign(segments, 0);
  std::vector<double> finish(n, 0), free_at(ranks, 0);
  std::unordered_map<std::uint64_t, double> arrival;  // (value, rank) -> when it is there
  const auto key = [&](NodeId v, std::size_t r) { return static_cast<std::uint64_t>(v) * ranks + r; };
  const auto transfer = [&](NodeId v) {
    return mesh.link_latency_seconds + static_cast<double>(plan.memory.value_bytes[v]) / mesh.link_bytes_per_second;
  };
  std::size_t next_input = 0;
  for (NodeId id = 0; id < n; ++id) {
    const Node& node = program.node(id);
    if (node.op == Op::input) {
      out.rank[id] = static_cast<int>(next_input++ % ranks);  // inputs (row blocks, samples) spread over the ranks
      continue;
    }
    std::size_t first = 0, last = ranks;
    if (fixed != nullptr) {
      first = static_cast<std::size_t>((*fixed)[id]);
      last = first + 1;
    }
    std::size_t best = first;
    double best_score = std::numeric_limits<double>::infinity(), best_finish = 0;
    for (std::size_t r = first; r < last; ++r) {
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
      const double done = std::max(ready, free_at[r]) + cost[id];
      const double score = done + byte_penalty * static_cast<double>(bytes);
      if (score < best_score - 1e-12) {
        best = r;
        best_score = score;
        best_finish = done;
      }
    }
    for (const NodeId v : node.inputs) {
      if (static_cast<std::size_t>(out.rank[v]) == best || arrival.contains(key(v, best))) continue;
      arrival.emplace(key(v, best), finish[v] + transfer(v));
      ++out.transfers;
      out.moved += plan.memory.value_bytes[v];
      out.segment_moved[segment_of[id]] += plan.memory.value_bytes[v];
    }
    out.rank[id] = static_cast<int>(best);
    finish[id] = best_finish;
    free_at[best] = best_finish;
    out.busy[best] += cost[id];
    out.makespan = std::max(out.makespan, best_finish);
  }
  return out;
}

}  // namespace

RankPlacement place_on_ranks(const Plan& plan, const MeshModel& mesh, const std::vector<SegmentBoundary>& boundaries) {
  require(mesh.ranks >= 1 && mesh.link_bytes_per_second > 0, "a mesh of {} ranks at {} bytes/s", mesh.ranks,
          mesh.link_bytes_per_second);
  require(mesh.time_slack >= 0, "a placement's time slack must be at least 0, not {}", mesh.time_slack);
  const Program& program = plan.program;
  const ckks::Context& context = *program.context();
  const std::size_t n = program.size();
  const auto ranks = static_cast<std::size_t>(mesh.ranks);
  const dist::LimbTraffic traffic(program.context(), mesh.ranks);

  RankPlacement out;
  out.ranks = mesh.ranks;

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

  // Each node's time, and the limb-parallel side: the gathers of its key switch or rescale and 1/R of its work.
  std::vector<double> cost(n, 0);
  for (NodeId id = 0; id < n; ++id) {
    const Node& node = program.node(id);
    const NodePlan& np = plan.nodes[id];
    ++out.segments[segment_of[id]].nodes;
    const int operand_level = np.level + level_cost(node.op);
    cost[id] = node.op == Op::bootstrap ? mesh.bootstrap_seconds
                                        : node_seconds(node, operand_level, context, mesh) +
                                              (np.bootstrap ? mesh.bootstrap_seconds : 0);
    out.serial_seconds += cost[id];

    dist::RankBytes limb(ranks);
    switch (node.op) {
      case Op::multiply:
      case Op::product_sum: limb = traffic.key_switch(operand_level, true); break;
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
    out.segments[segment_of[id]].limb_parallel_bytes += limb_bytes;
    out.limb_parallel_seconds += cost[id] / static_cast<double>(ranks);
    if (mesh.ranks > 1 && limb.calls > 0) {
      out.limb_parallel_seconds += static_cast<double>(limb.calls) * mesh.link_latency_seconds +
                                   static_cast<double>(limb.max_received()) / mesh.link_bytes_per_second;
    }
  }

  // Ciphertext-parallel: list schedules from plain HEFT to ever more reluctant to move data, and owner-computes
  // assignments with ever more room for imbalance; the one that moves the fewest bytes within the time slack of
  // the fastest.
  const double ciphertext_seconds =
      static_cast<double>(2 * context.limbs_at(context.max_level()) * context.ring_degree() * 4) /
      mesh.link_bytes_per_second;
  const double per_byte = mesh.key_switch_seconds / (ciphertext_seconds * mesh.link_bytes_per_second);
  std::vector<Schedule> tried;
  for (const double weight : {0.0, 0.01, 0.05, 0.25, 1.0, 4.0, 16.0, 64.0}) {
    tried.push_back(schedule(plan, mesh, cost, segment_of, out.segments.size(), weight * per_byte));
    if (mesh.ranks == 1) break;
  }
  for (const double spill : {0.02, 0.05, 0.1, 0.25, 0.5}) {
    if (mesh.ranks == 1) break;
    const std::vector<int> assignment = owner_computes(plan, mesh, cost, spill);
    tried.push_back(schedule(plan, mesh, cost, segment_of, out.segments.size(), 0, &assignment));
  }
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto& t : tried) fastest = std::min(fastest, t.makespan);
  const Schedule* chosen = &tried.front();
  for (const auto& t : tried) {
    if (t.makespan <= (1 + mesh.time_slack) * fastest && t.moved < chosen->moved) chosen = &t;
  }
  out.rank = chosen->rank;
  out.busy_seconds = chosen->busy;
  out.moved_bytes = chosen->moved;
  out.transfers = chosen->transfers;
  out.makespan_seconds = chosen->makespan > 0 ? chosen->makespan : out.serial_seconds;
  for (std::size_t s = 0; s < out.segments.size(); ++s) out.segments[s].moved_bytes = chosen->segment_moved[s];
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
