#pragma once
// explain(expression): the plan eval would run, one operation a line, then the totals and the compile-time
// traits. plan_stats(expression) gives the totals alone (tests compare them with the traits).

#include <string>

#include <fmt/format.h>

#include "cerium/expr/node.hpp"
#include "cerium/expr/traits.hpp"
#include "cerium/plan/launch_traits.hpp"
#include "cerium/plan/lower.hpp"
#include "cerium/plan/options.hpp"
#include "cerium/plan/tracer.hpp"

namespace cerium::plan {

// The totals of the plan eval(e, options) runs, counted without running it.
template <expr::Node E>
PlanStats plan_stats(const E& e, PlanOptions options = {}) {
  Tracer tracer;
  Lowering<Tracer>(tracer, options).lower(e);
  return tracer.stats();
}

// The plan as text: one operation a line (t0, t1, ... name the values; ct0, pt0, ... the leaves), then the
// totals and E's compile-time traits.
template <expr::Node E>
std::string explain(const E& e, PlanOptions options = {}) {
  Tracer tracer;
  const Tracer::Value result = Lowering<Tracer>(tracer, options).lower(e);
  std::string out = "plan:\n";
  for (const auto& line : tracer.lines()) out += "  " + line + "\n";
  const PlanStats& s = tracer.stats();
  out += fmt::format("result: {}\n", result.name);
  out += fmt::format(
      "totals: {} key switches, {} ModUps ({} rotations reused a shared ModUp), {} relinearizations, "
      "{} tensor products, {} rescales, {} fused sums, {} reused subexpressions, {} elementwise passes (kernel launches outside key "
      "switches)\n",
      s.key_switches, s.mod_ups, s.shared_rotations, s.relinearizations, s.tensor_products, s.rescales, s.fused_sums,
      s.shared_subexpressions, s.elementwise_passes);
  out += fmt::format("traits: depth {}, key switches before hoisting {}, ciphertext products {}, elementwise {}{}\n",
                     expr::depth_v<E>, expr::key_switches_v<E>, expr::ct_products_v<E>, expr::elementwise_v<E>,
                     expr::static_counts_v<E> ? "" : " (counts per term: runtime-length sums inside)");
  if constexpr (E::static_counts) {
    out += fmt::format("traits: elementwise passes {} (distinct operands, fused sums)\n", elementwise_passes_v<E>);
  }
  return out;
}

}  // namespace cerium::plan

namespace cerium {
using plan::explain;
using plan::plan_stats;
}  // namespace cerium
