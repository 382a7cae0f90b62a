#include "cerium/graph/planner.hpp"
#include "cerium/graph/simulate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <set>
#include <tuple>

#include "cerium/core/check.hpp"
#include "cerium/graph/passes/bootstrap_pairs.hpp"
#include "cerium/graph/passes/levels.hpp"

namespace cerium::graph {

std::vector<double> level_prime_products(const ckks::Context& context) {
  const auto primes = context.parameters().q_primes();
  std::vector<double> products(static_cast<std::size_t>(context.max_level()) + 1, 1.0);
  for (int level = 1; level <= context.max_level(); ++level) {
    double p = 1.0;
    for (std::size_t i = context.limbs_at(level - 1); i < context.limbs_at(level); ++i) p *= primes[i];
    products[static_cast<std::size_t>(level)] = p;
  }
  return products;
}

circuits::ScaleChain program_chain(const ckks::Context& context, const std::optional<BootstrapSpec>& bootstrap) {
  const auto products = level_prime_products(context);
  if (bootstrap) {
    return circuits::ScaleChain::through(products, bootstrap->output_level, bootstrap->output_scale,
                                         context.max_level());
  }
  return circuits::ScaleChain::through(products, 0, context.parameters().default_scale_at(0), context.max_level());
}

ckks::EncodeOptions Plan::input_encoding(std::size_t input) const {
  require(input < program.inputs().size(), "plan: input {} does not exist ({} inputs)", input,
          program.inputs().size());
  const NodeId id = program.inputs()[input];
  const int level = nodes[id].level;
  return ckks::EncodeOptions{.level = level, .scale = chain.at(level), .slots = program.node(id).slots};
}

std::size_t Plan::precise_bootstraps() const {
  const auto precise = [](const NodePlan& p) { return p.precise; };
  return static_cast<std::size_t>(std::count_if(nodes.begin(), nodes.end(), precise));
}

std::size_t Plan::bootstrap_pairs() const {
  const auto first_of_pair = [](const NodePlan& p) { return p.pair.has_value(); };
  return static_cast<std::size_t>(std::count_if(nodes.begin(), nodes.end(), first_of_pair)) / 2;
}

std::size_t Plan::bootstrap_runs() const {
  std::size_t halves = 0;  // a pair's bootstraps counted half for each of its two values
  for (const NodePlan& p : nodes) {
    if (p.bootstrap) halves += (p.precise ? 2 : 1) * (p.pair ? 1 : 2);
  }
  return halves / 2;
}

std::size_t Plan::key_switches() const {
  std::size_t total = 0;
  for (const Node& node : program.nodes()) total += static_cast<std::size_t>(graph::key_switches(node.op));
  return total;
}

namespace {

// Seconds since `start`, which moves to now: each pass's share of Plan::timings.
double lap(std::chrono::steady_clock::time_point& start) {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

}  // namespace

Plan plan(Program program, const PlanOptions& options) {
  require<MismatchError>(program.context() != nullptr, "plan: the program has no context");
  const auto& context = *program.context();
  require<LevelError>(options.output_level >= 0 && options.output_level <= context.max_level(),
                      "plan: PlanOptions::output_level = {} is outside the parameters' levels 0..{}",
                      options.output_level, context.max_level());
  Plan out;
  out.options = options;
  auto clock = std::chrono::steady_clock::now();

  // 1. Levels and bootstrap placement.
  LevelRules rules{.output_level = options.output_level};
  if (options.bootstrap) {
    const BootstrapSpec& spec = *options.bootstrap;
    require<LevelError>(spec.output_level >= 1 && spec.output_level <= context.max_level(),
                        "plan: the bootstrapper delivers level {}, outside 1..{}", spec.output_level,
                        context.max_level());
    rules.bootstrap_level = spec.output_level;
    rules.bootstrap_min_input = spec.min_input_level;
  }
  // Products run where their scale fits: on some parameters the chain's scale squared outgrows Q at level 1.
  out.chain = program_chain(context, options.bootstrap);
  rules.product_min_level =
      std::max(1, lowest_product_level(context, out.chain, ckks::EvaluatorOptions{}.scale_headroom_bits));
  LevelProblem problem = level_problem(program, rules);
  Placement placement;
  std::vector<double> magnitude;
  if (!options.calibration.empty() && options.bootstrap) {
    // Values too large to bootstrap well are left alone, the limit raised until a placement exists.
    magnitude = simulate_magnitudes(program, options.calibration, &out.calibration_outputs, options.simulation_threads);
    out.timings.simulation = lap(clock);
    const LevelProblem unrestricted = problem;
    for (double limit = options.bootstrap_magnitude_limit;; limit *= 2) {
      problem = unrestricted;
      bool restricted = false;
      for (std::size_t i = 0; i < problem.items.size(); ++i) {
        if (magnitude[i] > limit && problem.items[i].may_bootstrap) {
          problem.items[i].may_bootstrap = false;
          restricted = true;
        }
      }
      placement = place_bootstraps(problem, options.placement);
      if (placement.feasible || !restricted) break;
    }
    for (std::size_t i = 0; i < problem.items.size(); ++i) {
      if (placement.bootstrap[i] && !problem.items[i].pinned) {
        out.bootstrap_magnitude = std::max(out.bootstrap_magnitude, magnitude[i]);
        out.bootstrap_scaled_magnitude =
            std::max(out.bootstrap_scaled_magnitude, std::ldexp(magnitude[i], -bootstrap_shift(magnitude[i])));
      }
    }
  } else {
    placement = place_bootstraps(problem, options.placement);
  }
  require_feasible(program, problem, placement);
  std::vector<int> levels = natural_levels(problem, placement.bootstrap);
  out.placed_bootstraps = placement.count;
  out.placement_optimal = placement.optimal;
  out.timings.placement = lap(clock);
  if (options.pair_bootstraps) {
    // Independent refreshes before any of their readers: the program, and what is known per node, in that order.
    std::vector<NodeId> order = bootstrap_epoch_order(program, placement.bootstrap);
    if (!std::is_sorted(order.begin(), order.end())) {
      program = reordered(program, order);
      const auto permute = [&](auto& per_node) {
        if (per_node.empty()) return;
        auto before = per_node;
        for (std::size_t i = 0; i < order.size(); ++i) per_node[i] = before[order[i]];
      };
      permute(levels);
      permute(placement.bootstrap);
      permute(magnitude);
      out.order = std::move(order);
    }
  }
  out.timings.ordering = lap(clock);

  // 2. Scales: one chain through the bootstrapper's output, or from level 0 at the default scale (out.chain).
  out.nodes.resize(program.size());
  for (std::size_t i = 0; i < magnitude.size() && i < out.nodes.size(); ++i) out.nodes[i].magnitude = magnitude[i];
  std::vector<int> held(program.size());
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& node = program.node(id);
    NodePlan& p = out.nodes[id];
    p.level = levels[id];
    p.scale = out.chain.at(std::max(p.level, 0));
    p.bootstrap = placement.bootstrap[id];
    p.precise = p.bootstrap && (options.precise_bootstraps || node.precise_bootstrap);
    p.held_level = p.bootstrap ? rules.bootstrap_level : p.level;
    held[id] = p.held_level;
    if (node.op == Op::bootstrap) ++out.pinned_bootstraps;
    if (p.bootstrap && options.bootstrap && options.bootstrap->slots != 0) {
      require<MismatchError>(node.slots == options.bootstrap->slots,
                             "plan: {} is bootstrapped, and its {} slots are not the bootstrapper's {}",
                             program.describe(id), node.slots, options.bootstrap->slots);
    }
  }

  out.timings.rest = lap(clock);
  if (options.pair_bootstraps) {
    std::vector<std::optional<PairableBootstrap>> pairable(program.size());
    for (NodeId id = 0; id < program.size(); ++id) {
      const NodePlan& p = out.nodes[id];
      if (p.bootstrap) {
        pairable[id] = PairableBootstrap{.level = p.level, .shift = bootstrap_shift(p.magnitude),
                                         .slots = program.node(id).slots, .precise = p.precise};
      }
    }
    const std::vector<NodeId> partner = pair_bootstraps(program, pairable);
    for (NodeId id = 0; id < program.size(); ++id) {
      if (partner[id] != id) out.nodes[id].pair = partner[id];
    }
  }
  out.timings.ordering += lap(clock);

  // A value wraps when decrypted unless |x| * scale < Q_level / 2: the calibration's magnitudes say how close each
  // node comes (a product's value before its rescale has the same margin, both sides divided by the prime).
  for (NodeId id = 0; id < program.size() && !magnitude.empty(); ++id) {
    const NodePlan& p = out.nodes[id];
    if (p.magnitude <= 0) continue;
    const int level = std::max(p.level, 0);
    const double bits = context.q_basis(level)->log2_product() - 1 - std::log2(p.scale) - std::log2(p.magnitude);
    if (bits < out.smallest_headroom_bits) {
      out.smallest_headroom_bits = bits;
      out.smallest_headroom_node = id;
    }
  }

  // 3. Rotation keys. 4. Fusion. 5. Memory.
  out.keys = infer_rotation_keys(program, options.available_rotations, options.conjugation_available,
                                 options.key_storage);
  if (options.hoist_rotations) {
    out.hoisting = hoist_rotations(program);
  } else {
    out.hoisting.group_of.assign(program.size(), -1);
  }
  std::vector<NodeId> born(program.size());
  for (NodeId id = 0; id < program.size(); ++id) {
    const int group = out.hoisting.group_of[id];
    born[id] = group < 0 ? id : out.hoisting.groups[static_cast<std::size_t>(group)].rotations.front();
  }
  out.memory = plan_memory(program, held, born);
  const std::size_t key_bytes = switching_key_bytes(context, options.key_storage);
  require_within_budget(program, out.memory, options.memory_budget_bytes, out.keys.bytes + key_bytes, key_bytes);
  std::set<const void*> stored;
  std::set<std::tuple<const void*, std::size_t, int>> encoded;  // as the executor holds them
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& node = program.node(id);
    if (node.plain.empty()) continue;
    if (stored.insert(node.plain.storage()).second) out.plaintext_bytes += node.plain.stored_bytes();
    // Encoded at the level its ciphertext operand is read at, once for the nodes that share it there.
    const NodeId source = node.inputs[0];
    if (encoded.emplace(node.plain.storage(), program.node(source).slots, held[source]).second) {
      out.plaintext_encoded_bytes += context.limbs_at(held[source]) * context.ring_degree() * sizeof(std::uint32_t);
    }
  }
  out.program = std::move(program);
  out.timings.rest += lap(clock);
  return out;
}

int bootstrap_shift(double magnitude) {
  if (!(magnitude > 0)) return 0;
  int shift = 0;
  while (std::ldexp(magnitude, -shift) > 0.8 && shift < 30) ++shift;
  while (shift > -max_bootstrap_upscale_bits && std::ldexp(magnitude, 1 - shift) <= 0.8) --shift;
  return shift;
}

double required_message_bound(const Plan& plan, int message_ratio_bits) {
  if (plan.bootstrap_magnitude <= 0 || !plan.options.bootstrap) return 1;
  const std::size_t slots = plan.options.bootstrap->slots != 0 ? plan.options.bootstrap->slots
                                                               : plan.program.context()->parameters().max_slots();
  const int ratio = message_ratio_bits != 0 ? message_ratio_bits : boot::automatic_message_ratio_bits(slots);
  const double seen = plan.bootstrap_scaled_magnitude > 0 ? plan.bootstrap_scaled_magnitude : plan.bootstrap_magnitude;
  const double wanted = seen * std::exp2(10 - ratio);
  double bound = 1;
  while (bound < wanted) bound *= 2;
  return bound;
}

}  // namespace cerium::graph
