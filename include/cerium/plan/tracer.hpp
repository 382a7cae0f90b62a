#pragma once
// The machine that records a lowering (plan/lower.hpp) instead of running it: one line per operation and the
// totals (key switches, ModUps, how many rotations shared one), each operation counted by plan/counts.hpp's
// table. explain() prints it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/expr/node.hpp"
#include "cerium/expr/power_basis.hpp"
#include "cerium/plan/counts.hpp"
#include "cerium/plan/power_basis_count.hpp"
#include "cerium/plan/terms.hpp"

namespace cerium::plan {

// The Machine of plan/lower.hpp that records: a line per operation, the counts in PlanStats.
class Tracer {
 public:
  // Plans are traced as the CPU backend runs them (PlanOptions::fold_rescale decides otherwise).
  static constexpr bool fold_rescale_by_default = true;
  // A traced value: a name in the listing, its parts and slot count.
  struct Value {
    std::string name;       // ct<k> / pt<k> for a leaf, t<k> for a result
    int parts = 2;          // 2, or 3 for a tensor not yet relinearized
    std::size_t slots = 0;  // the leaf's, carried along
  };

  // A leaf, named by its ciphertext: the same handle, the same name.
  Value leaf(const expr::CipherLeaf& x) { return Value{name_of(x.value.get(), "ct"), 2, x.value->slots()}; }
  // Traced plans name leaves afresh each time: nothing is borrowed.
  const Value* borrow(const expr::CipherLeaf&) { return nullptr; }
  // copy: the same value; reuse: a common subexpression's value, listed and counted as reused; parts: 2 or 3.
  Value copy(const Value& v) { return v; }
  Value reuse(const Value& v) {
    counter_.reuse();
    lines_.push_back(fmt::format("{} reused  [common subexpression, evaluated once]", v.name));
    return v;
  }
  int parts(const Value& v) { return v.parts; }

  // a + or - a value, a plaintext, a constant or an integer, and -a: a line each, counted by plan/counts.hpp.
  void add(Value& a, const Value& b) { binary(a, "+", b.name, counter_.add(a.parts, b.parts)); }
  void sub(Value& a, const Value& b) { binary(a, "-", b.name, counter_.add(a.parts, b.parts)); }
  void add(Value& a, const expr::PlainLeaf& p) { plain(a, "+", name_of(p.value.get(), "pt")); }
  void sub(Value& a, const expr::PlainLeaf& p) { plain(a, "-", name_of(p.value.get(), "pt")); }
  void add(Value& a, const expr::ConstLeaf& c) { plain(a, "+", constant(c)); }
  void sub(Value& a, const expr::ConstLeaf& c) { plain(a, "-", constant(c)); }
  void add(Value& a, const expr::IntLeaf& c) { plain(a, "+", fmt::format("{}", c.value)); }
  void sub(Value& a, const expr::IntLeaf& c) { plain(a, "-", fmt::format("{}", c.value)); }
  void negate(Value& a) {
    counter_.negate(a.parts);
    a = emit(fmt::format("-{}", a.name), a);
  }

  // a (x) b, left at 3 parts, and a times a plaintext, a constant or an integer.
  Value tensor(const Value& a, const Value& b) {
    const int parts = counter_.tensor();
    return emit(fmt::format("{} (x) {}  [tensor product, 3 parts, relinearization deferred]", a.name, b.name),
                Value{"", parts, a.slots});
  }
  void multiply(Value& a, const expr::PlainLeaf& p) { scaled(a, name_of(p.value.get(), "pt")); }
  void multiply(Value& a, const expr::ConstLeaf& c) { scaled(a, constant(c)); }
  void multiply(Value& a, const expr::IntLeaf& c) { scaled(a, fmt::format("integer {}", c.value)); }

  // A 3-part value to 2: one key switch; nothing for 2 parts.
  void relinearize(Value& a) {
    if (a.parts != 3) return;
    counter_.relinearize(a.parts);
    a = emit(fmt::format("relinearize {}  [key switch, 1 ModUp]", a.name), Value{"", 2, a.slots});
  }
  // One rescale.
  void rescale(Value& a) {
    counter_.rescale();
    a = emit(fmt::format("rescale {}", a.name), a);
  }
  // One key switch that relinearizes and rescales (the evaluator's relinearize_rescale); counted as the two
  // steps, as the launch traits count them.
  void relinearize_rescale(Value& a) {
    if (a.parts != 3) return rescale(a);
    counter_.relinearize_rescale(a.parts);
    a = emit(fmt::format("relinearize and rescale {}  [key switch, 1 ModUp; the rescale shares its ModDown's NTT]",
                         a.name),
             Value{"", 2, a.slots});
  }
  // Limbs dropped to `level`: listed, not counted.
  void level_down(Value& a, int level) { a = emit(fmt::format("level_down {} to {}", a.name, level), a); }
  // One key switch.
  void conjugate(Value& a) {
    counter_.key_switch();
    a = emit(fmt::format("conjugate {}  [key switch, 1 ModUp]", a.name), a);
  }
  // One key switch, or a copy where steps is a multiple of the slot count.
  Value rotate(const Value& a, std::int64_t steps) {
    if (trivial(steps, a.slots)) return emit(fmt::format("rotate {} by {}  [a copy]", a.name, steps), a);
    counter_.key_switch();
    return emit(fmt::format("rotate {} by {}  [key switch, 1 ModUp]", a.name, steps), a);
  }

  // A leaf's rotations sharing one ModUp, as a value's.
  std::vector<Value> rotate_hoisted(const expr::CipherLeaf& x, std::span<const std::int64_t> steps) {
    return rotate_hoisted(leaf(x), steps);
  }
  // One ModUp for all the steps and a key switch per step that is not a multiple of the slot count.
  std::vector<Value> rotate_hoisted(const Value& a, std::span<const std::int64_t> steps) {
    int switches = 0;
    std::string list;
    for (const std::int64_t s : steps) {
      list += fmt::format("{}{}", list.empty() ? "" : ", ", s);
      if (!trivial(s, a.slots)) ++switches;
    }
    counter_.rotate_hoisted(switches);
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
    const std::vector<TermShape> shapes = shapes_of(terms);
    const int parts = counter_.fused_sum(shapes);
    out = emit(fused_line(terms, shapes), Value{"", parts, terms.front().first().slots});
    return true;
  }

  // A 2-part fused sum whose terms all join the pass, rescaled in it (plan/fused_sum.hpp).
  bool fused_sum_rescaled(std::span<Term<Value>> terms, Value& out) {
    const std::vector<TermShape> shapes = shapes_of(terms);
    if (!folds_rescale(shapes)) return false;
    const int parts = counter_.fused_sum_rescaled(shapes);
    const Value sum = emit(fused_line(terms, shapes), Value{"", parts, terms.front().first().slots});
    out = emit(fmt::format("rescale({})  [folded: dropped limbs first, kept limbs written once, divided]", sum.name),
               sum);
    return true;
  }

  // expr::polynomial: the power basis's schedule counted as plan/power_basis.hpp runs it. The powers others are
  // made from, each one tensor product, relinearization and rescale; the others enter the sum as 3-part tensors
  // with their constant folded into a factor, and one relinearization before the sum's rescale serves them.
  Value polynomial(const Value& x, std::span<const double> coefficients, bool fuse) {
    const std::size_t degree = coefficients.size() - 1;
    const int relinearizations = counter_.stats.relinearizations;
    count_polynomial(counter_, degree, fuse);
    for (std::size_t k = 2; k <= degree; ++k) {
      const std::size_t a = expr::power_basis::factor(k);
      if (!expr::power_basis::tensor_term(k, degree, true)) {
        lines_.push_back(fmt::format("{}^{} = rescale(relinearize({}^{} (x) {}^{}))", x.name, k, x.name, a, x.name,
                                     k - a));
      } else {
        lines_.push_back(fmt::format("c_{} {}^{} = {}^{} (x) rescale(c_{} {}^{})  [3 parts]", k, x.name, k, x.name,
                                     a, k, x.name, k - a));
      }
    }
    return emit(fmt::format("rescale(relinearize(sum_k c_k {}^k + c_0)), degree {}  [constants' products share one "
                            "rescale; {} relinearizations in all]",
                            x.name, degree, counter_.stats.relinearizations - relinearizations),
                Value{"", 2, x.slots});
  }

  // The totals, and the listing's lines in order (explain prints both).
  const PlanStats& stats() const { return counter_.stats; }
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
  void binary(Value& a, const char* op, const std::string& b, int parts) {
    a = emit(fmt::format("{} {} {}", a.name, op, b), Value{"", parts, a.slots});
  }
  void plain(Value& a, const char* op, const std::string& b) {
    counter_.add_plain();
    binary(a, op, b, a.parts);
  }
  void scaled(Value& a, const std::string& b) {
    counter_.multiply(a.parts);
    binary(a, "*", b, a.parts);
  }
  static std::vector<TermShape> shapes_of(std::span<const Term<Value>> terms) {
    std::vector<TermShape> out;
    for (const auto& t : terms)
      out.push_back({t.kind, t.kind == TermKind::cipher_product ? 3 : t.first().parts, t.negated});
    return out;
  }
  std::string fused_line(std::span<const Term<Value>> terms, std::span<const TermShape> shapes) {
    std::string list;
    int products = 0, parts = 0;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      const auto& t = terms[i];
      std::string item = t.first().name;
      if (t.kind == TermKind::plain_product) item += " * " + name_of(t.plain->value.get(), "pt");
      if (t.kind == TermKind::cipher_product) item += " (x) " + t.second().name;
      if (t.kind == TermKind::scalar_product)
        item += " * " + (t.constant != nullptr ? constant(*t.constant) : fmt::format("integer {}", t.integer->value));
      list += (list.empty() ? "" : t.negated ? " - " : " + ") + item;
      if (!fusable(t)) continue;
      ++products;
      parts = std::max(parts, shapes[i].parts);
    }
    return fmt::format("fused sum of {} products: {}  [{} parts, one linear-combination pass each]", products, list,
                       parts);
  }
  Value emit(const std::string& what, Value shape) {
    shape.name = fmt::format("t{}", next_++);
    lines_.push_back(fmt::format("{} = {}", shape.name, what));
    return shape;
  }

  Counter counter_;
  std::vector<std::string> lines_;
  std::map<const void*, std::string> names_;
  std::map<std::string, int> counts_;
  int next_ = 0;
};

}  // namespace cerium::plan
