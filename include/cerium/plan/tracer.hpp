#pragma once
// The machine that records a lowering (plan/lower.hpp) instead of running it: one line per operation and the
// totals (key switches, ModUps, how many rotations shared one). explain() prints it.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/expr/node.hpp"
#include "cerium/expr/polynomial.hpp"
#include "cerium/plan/terms.hpp"

namespace cerium::plan {

struct PlanStats {
  int key_switches = 0;      // rotations, conjugations and relinearizations that switch a key
  int mod_ups = 0;           // decompose_and_mod_up calls: one per key switch, except hoisted groups share one
  int shared_rotations = 0;  // rotations served by a ModUp another rotation already paid for
  int relinearizations = 0;
  int tensor_products = 0;
  int rescales = 0;
  int fused_sums = 0;             // sums whose products were accumulated in one pass per polynomial
  int folded_rescales = 0;        // rescales folded into their fused sum's pass
  int shared_subexpressions = 0;  // occurrences served by a value computed once
  // Elementwise backend calls, one kernel launch each on the CUDA backend (one pass over one polynomial's limbs,
  // or over a ciphertext's for the tensor product and the batched rescale); key switches' internal passes
  // (ModUp, inner product, ModDown) are counted by key_switches instead.
  int elementwise_passes = 0;
};

class Tracer {
 public:
  // Plans are traced as the CPU backend runs them (PlanOptions::fold_rescale decides otherwise).
  static constexpr bool fold_rescale_by_default = true;
  struct Value {
    std::string name;
    int parts = 2;
    std::size_t slots = 0;
  };

  Value leaf(const expr::CipherLeaf& x) { return Value{name_of(x.value.get(), "ct"), 2, x.value->slots()}; }
  // Traced plans name leaves afresh each time: nothing is borrowed.
  const Value* borrow(const expr::CipherLeaf&) { return nullptr; }
  Value copy(const Value& v) { return v; }
  Value reuse(const Value& v) {
    ++stats_.shared_subexpressions;
    lines_.push_back(fmt::format("{} reused  [common subexpression, evaluated once]", v.name));
    return v;
  }
  int parts(const Value& v) { return v.parts; }

  void add(Value& a, const Value& b) { binary(a, "+", b.name, std::max(a.parts, b.parts), std::max(a.parts, b.parts)); }
  void sub(Value& a, const Value& b) { binary(a, "-", b.name, std::max(a.parts, b.parts), std::max(a.parts, b.parts)); }
  void add(Value& a, const expr::PlainLeaf& p) { binary(a, "+", name_of(p.value.get(), "pt"), a.parts, 1); }
  void sub(Value& a, const expr::PlainLeaf& p) { binary(a, "-", name_of(p.value.get(), "pt"), a.parts, 1); }
  void add(Value& a, const expr::ConstLeaf& c) { binary(a, "+", constant(c), a.parts, 1); }
  void sub(Value& a, const expr::ConstLeaf& c) { binary(a, "-", constant(c), a.parts, 1); }
  void add(Value& a, const expr::IntLeaf& c) { binary(a, "+", fmt::format("{}", c.value), a.parts, 1); }
  void sub(Value& a, const expr::IntLeaf& c) { binary(a, "-", fmt::format("{}", c.value), a.parts, 1); }
  void negate(Value& a) {
    stats_.elementwise_passes += a.parts;
    a = emit(fmt::format("-{}", a.name), a);
  }

  Value tensor(const Value& a, const Value& b) {
    ++stats_.tensor_products;
    ++stats_.elementwise_passes;
    return emit(fmt::format("{} (x) {}  [tensor product, 3 parts, relinearization deferred]", a.name, b.name),
                Value{"", 3, a.slots});
  }
  void multiply(Value& a, const expr::PlainLeaf& p) { binary(a, "*", name_of(p.value.get(), "pt"), a.parts, a.parts); }
  void multiply(Value& a, const expr::ConstLeaf& c) { binary(a, "*", constant(c), a.parts, a.parts); }
  void multiply(Value& a, const expr::IntLeaf& c) {
    binary(a, "*", fmt::format("integer {}", c.value), a.parts, a.parts);
  }

  void relinearize(Value& a) {
    if (a.parts != 3) return;
    ++stats_.relinearizations;
    ++stats_.key_switches;
    ++stats_.mod_ups;
    stats_.elementwise_passes += 2;  // the switched pair added to (c0, c1)
    a = emit(fmt::format("relinearize {}  [key switch, 1 ModUp]", a.name), Value{"", 2, a.slots});
  }
  void rescale(Value& a) {
    ++stats_.rescales;
    ++stats_.elementwise_passes;
    a = emit(fmt::format("rescale {}", a.name), a);
  }
  // One key switch that relinearizes and rescales (the evaluator's relinearize_rescale); counted as the two
  // steps, as the launch traits count them.
  void relinearize_rescale(Value& a) {
    if (a.parts != 3) return rescale(a);
    ++stats_.relinearizations;
    ++stats_.key_switches;
    ++stats_.mod_ups;
    ++stats_.rescales;
    stats_.elementwise_passes += 3;
    a = emit(fmt::format("relinearize and rescale {}  [key switch, 1 ModUp; the rescale shares its ModDown's NTT]",
                         a.name),
             Value{"", 2, a.slots});
  }
  void level_down(Value& a, int level) { a = emit(fmt::format("level_down {} to {}", a.name, level), a); }
  void conjugate(Value& a) {
    ++stats_.key_switches;
    ++stats_.mod_ups;
    a = emit(fmt::format("conjugate {}  [key switch, 1 ModUp]", a.name), a);
  }
  Value rotate(const Value& a, std::int64_t steps) {
    if (trivial(steps, a.slots)) return emit(fmt::format("rotate {} by {}  [a copy]", a.name, steps), a);
    ++stats_.key_switches;
    ++stats_.mod_ups;
    return emit(fmt::format("rotate {} by {}  [key switch, 1 ModUp]", a.name, steps), a);
  }

  std::vector<Value> rotate_hoisted(const expr::CipherLeaf& x, std::span<const std::int64_t> steps) {
    return rotate_hoisted(leaf(x), steps);
  }
  std::vector<Value> rotate_hoisted(const Value& a, std::span<const std::int64_t> steps) {
    int switches = 0;
    std::string list;
    for (const std::int64_t s : steps) {
      list += fmt::format("{}{}", list.empty() ? "" : ", ", s);
      if (!trivial(s, a.slots)) ++switches;
    }
    if (switches > 0) {
      stats_.key_switches += switches;
      stats_.mod_ups += 1;
      stats_.shared_rotations += switches - 1;
    }
    lines_.push_back(fmt::format("ModUp {} once, shared by rotations {{{}}}  [{} key switches, {} ModUp]", a.name,
                                 list, switches, switches > 0 ? 1 : 0));
    std::vector<Value> out;
    for (const std::int64_t s : steps) out.push_back(emit(fmt::format("rot({}, {})  [hoisted]", a.name, s), a));
    return out;
  }

  // Products accumulated in one pass per polynomial (backend linear_combination), then the terms that do not
  // join it computed and added or subtracted (plan/fused_sum.hpp). explain() assumes operands the fusion
  // accepts (one level, matching scales, real constants); eval falls back to term-by-term where they are not.
  bool fused_sum(std::span<Term<Value>> terms, Value& out) {
    using Kind = Term<Value>::Kind;
    std::string list;
    int parts = 0, products = 0;
    for (const auto& t : terms) {
      std::string item = t.first().name;
      if (t.kind == Kind::plain_product) item += " * " + name_of(t.plain->value.get(), "pt");
      if (t.kind == Kind::cipher_product) item += " (x) " + t.second().name;
      if (t.kind == Kind::scalar_product)
        item += " * " + (t.constant != nullptr ? constant(*t.constant) : fmt::format("integer {}", t.integer->value));
      list += (list.empty() ? "" : t.negated ? " - " : " + ") + item;
      if (t.kind == Kind::cipher_product) ++stats_.tensor_products;
      if (!fusable(t)) continue;
      ++products;
      parts = std::max(parts, t.kind == Kind::cipher_product ? 3 : t.first().parts);
    }
    ++stats_.fused_sums;
    stats_.elementwise_passes += parts;  // one linear combination per part
    int acc = parts;
    for (const auto& t : terms) {
      if (fusable(t)) continue;
      const int own = t.kind == Kind::cipher_product ? 3 : t.first().parts;
      stats_.elementwise_passes += t.kind == Kind::cipher_product ? 1 : t.kind == Kind::plain_product ? own : 0;
      stats_.elementwise_passes += std::max(acc, own);
      acc = std::max(acc, own);
    }
    out = emit(fmt::format("fused sum of {} products: {}  [{} parts, one linear-combination pass each]", products,
                           list, parts),
               Value{"", acc, terms.front().first().slots});
    return true;
  }

  // A 2-part fused sum whose terms all join the pass, rescaled in it (plan/fused_sum.hpp): per part one pass
  // over the dropped limbs, then one over the kept limbs that writes them divided; the rescale's transforms
  // between them are not counted (as for a rescale alone, whose one pass is its subtract-and-scale).
  bool fused_sum_rescaled(std::span<Term<Value>> terms, Value& out) {
    using Kind = Term<Value>::Kind;
    for (const auto& t : terms)
      if (!fusable(t) || t.kind == Kind::cipher_product || t.first().parts != 2) return false;
    Value sum;
    fused_sum(terms, sum);
    stats_.elementwise_passes += 2 * 2 - 2;  // fused_sum counted 2 passes
    ++stats_.rescales;
    ++stats_.folded_rescales;
    out = emit(fmt::format("rescale({})  [folded: dropped limbs first, kept limbs written once, divided]", sum.name),
               sum);
    return true;
  }

  // expr::polynomial (plan/power_basis.hpp): the powers others are made from, each one tensor product,
  // relinearization and rescale; the others enter the sum as 3-part tensors with their constant folded into a
  // factor, and one relinearization before the sum's rescale serves them.
  Value polynomial(const Value& x, std::span<const double> coefficients, bool fuse) {
    const std::size_t degree = coefficients.size() - 1;
    const auto shape = expr::power_basis::count(degree, true, false, fuse);
    if (fuse) ++stats_.fused_sums;
    stats_.tensor_products += shape.tensor_products;
    stats_.relinearizations += shape.relinearizations;
    stats_.key_switches += shape.relinearizations;
    stats_.mod_ups += shape.relinearizations;
    stats_.rescales += shape.rescales;
    stats_.elementwise_passes += shape.elementwise_passes;
    for (std::size_t k = 2; k <= degree; ++k) {
      const std::size_t a = std::bit_floor(k - 1);
      if (expr::power_basis::is_factor(k, degree)) {
        lines_.push_back(fmt::format("{}^{} = rescale(relinearize({}^{} (x) {}^{}))", x.name, k, x.name, a, x.name,
                                     k - a));
      } else {
        lines_.push_back(fmt::format("c_{} {}^{} = {}^{} (x) rescale(c_{} {}^{})  [3 parts]", k, x.name, k, x.name,
                                     a, k, x.name, k - a));
      }
    }
    return emit(fmt::format("rescale(relinearize(sum_k c_k {}^k + c_0)), degree {}  [constants' products share one "
                            "rescale; {} relinearizations in all]",
                            x.name, degree, shape.relinearizations),
                Value{"", 2, x.slots});
  }

  const PlanStats& stats() const { return stats_; }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  static bool trivial(std::int64_t steps, std::size_t slots) {
    return slots != 0 && steps % static_cast<std::int64_t>(slots) == 0;
  }
  // Leaves are named by identity: the same handle gets the same name, so shared sources are visible.
  std::string name_of(const void* p, const char* kind) {
    auto [it, fresh] = names_.try_emplace(p, std::string());
    if (fresh) it->second = fmt::format("{}{}", kind, counts_[kind]++);
    return it->second;
  }
  static std::string constant(const expr::ConstLeaf& c) {
    return c.value.imag() == 0 ? fmt::format("{}", c.value.real())
                               : fmt::format("({}{:+}i)", c.value.real(), c.value.imag());
  }
  void binary(Value& a, const char* op, const std::string& b, int parts, int passes) {
    stats_.elementwise_passes += passes;
    a = emit(fmt::format("{} {} {}", a.name, op, b), Value{"", parts, a.slots});
  }
  Value emit(const std::string& what, Value shape) {
    shape.name = fmt::format("t{}", next_++);
    lines_.push_back(fmt::format("{} = {}", shape.name, what));
    return shape;
  }

  PlanStats stats_;
  std::vector<std::string> lines_;
  std::map<const void*, std::string> names_;
  std::map<std::string, int> counts_;
  int next_ = 0;
};

}  // namespace cerium::plan
