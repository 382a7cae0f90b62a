#pragma once
// The power basis's schedule (expr/power_basis.hpp) run on (level, parts) with the planner's Counter: what
// plan/power_basis.hpp does on ciphertexts, counted. explain (plan/tracer.hpp) counts it at run time, the launch
// traits (plan/launch_traits.hpp) at compile time.
//
// One assumption where the ciphertexts decide: bringing a power down the chain (circuits::ScaleChain::bring_to)
// is counted as adjust_scale, which it is unless the chain's scales at the two levels match (they differ by the
// primes' ratios on any chain the planner builds).

#include <cstddef>
#include <span>
#include <vector>

#include "cerium/expr/power_basis.hpp"
#include "cerium/plan/counts.hpp"
#include "cerium/plan/terms.hpp"

namespace cerium::plan {

namespace power_count_detail {

struct Ops {
  struct Value {
    int level = 0;
    int parts = 2;
  };
  struct Terms {
    int level = 0;
    std::vector<TermShape> shapes;
  };
  Counter& c;

  static constexpr int level(const Value& v) { return v.level; }
  static constexpr Value clone(const Value& v) { return v; }
  constexpr void bring_to(Value& v, int level) {
    if (v.level > level) c.adjust_scale(v.parts);
    v.level = level;
  }
  // circuits::ScaleChain::multiply: both factors at the lower level, the tensor, one relinearizing rescale.
  constexpr Value multiply(const Value& a, const Value& b) {
    const int level = a.level < b.level ? a.level : b.level;
    Value x = a;
    bring_to(x, level);
    if (&a != &b) {
      Value y = b;
      bring_to(y, level);
    }
    c.relinearize_rescale(c.tensor());
    return {level - 1, 2};
  }
  static constexpr void level_down(Value& v, int level) { v.level = level; }
  constexpr void scale_factor(Value& y, const Value&, std::size_t, int) {
    c.multiply(y.parts);
    c.rescale();
    --y.level;
  }
  static constexpr Terms terms(std::size_t) { return {}; }
  static constexpr void tensor_term(Terms& t, Value x, Value) {
    t.level = x.level;
    t.shapes.push_back({TermKind::cipher_product, 3, false});
  }
  static constexpr void scalar_term(Terms& t, Value v, std::size_t) {
    t.level = v.level;
    t.shapes.push_back({TermKind::scalar_product, v.parts, false});
  }
  constexpr Value sum(Terms& t, bool fuse) {
    const std::span<const TermShape> shapes(t.shapes);
    return {t.level, fuse ? c.fused_sum(shapes) : c.sum_in_order(shapes)};
  }
  constexpr void add_constant(Value&) { c.add_plain(); }
  constexpr void relinearize_rescale(Value& v) {
    c.relinearize_rescale(v.parts);
    v = {v.level - 1, 2};
  }
};

}  // namespace power_count_detail

// Counts the lazy evaluation of a degree-d polynomial of a 2-part x into c (fuse: its terms in one fused pass).
constexpr void count_polynomial(Counter& c, std::size_t degree, bool fuse) {
  using Ops = power_count_detail::Ops;
  Ops ops{c};
  // Any level with room for the depth: the counts depend on level differences only.
  const Ops::Value x{expr::power_basis::depth(degree) + 1, 2};
  expr::power_basis::Schedule<Ops> schedule(ops, x, true);
  schedule.evaluate(ops, degree, fuse);
}

}  // namespace cerium::plan
