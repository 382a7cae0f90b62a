#pragma once
// The machine that records a lowering (plan/lower.hpp) instead of running it: one line per operation and the
// totals (key switches, ModUps, how many rotations shared one). explain() prints it.

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/expr/node.hpp"

namespace cerium::plan {

struct PlanStats {
  int key_switches = 0;      // rotations, conjugations and relinearizations that switch a key
  int mod_ups = 0;           // decompose_and_mod_up calls: one per key switch, except hoisted groups share one
  int shared_rotations = 0;  // rotations served by a ModUp another rotation already paid for
  int relinearizations = 0;
  int tensor_products = 0;
  int rescales = 0;
};

class Tracer {
 public:
  struct Value {
    std::string name;
    int parts = 2;
    std::size_t slots = 0;
  };

  Value leaf(const expr::CipherLeaf& x) { return Value{name_of(x.value.get(), "ct"), 2, x.value->slots()}; }
  Value copy(const Value& v) { return v; }
  int parts(const Value& v) { return v.parts; }

  void add(Value& a, const Value& b) { binary(a, "+", b.name, std::max(a.parts, b.parts)); }
  void sub(Value& a, const Value& b) { binary(a, "-", b.name, std::max(a.parts, b.parts)); }
  void add(Value& a, const expr::PlainLeaf& p) { binary(a, "+", name_of(p.value.get(), "pt"), a.parts); }
  void sub(Value& a, const expr::PlainLeaf& p) { binary(a, "-", name_of(p.value.get(), "pt"), a.parts); }
  void add(Value& a, const expr::ConstLeaf& c) { binary(a, "+", fmt::format("{}", c.value), a.parts); }
  void sub(Value& a, const expr::ConstLeaf& c) { binary(a, "-", fmt::format("{}", c.value), a.parts); }
  void negate(Value& a) { a = emit(fmt::format("-{}", a.name), a); }

  Value tensor(const Value& a, const Value& b) {
    ++stats_.tensor_products;
    return emit(fmt::format("{} (x) {}  [tensor product, 3 parts, relinearization deferred]", a.name, b.name),
                Value{"", 3, a.slots});
  }
  void multiply(Value& a, const expr::PlainLeaf& p) { binary(a, "*", name_of(p.value.get(), "pt"), a.parts); }
  void multiply(Value& a, const expr::ConstLeaf& c) { binary(a, "*", fmt::format("{}", c.value), a.parts); }

  void relinearize(Value& a) {
    if (a.parts != 3) return;
    ++stats_.relinearizations;
    ++stats_.key_switches;
    ++stats_.mod_ups;
    a = emit(fmt::format("relinearize {}  [key switch, 1 ModUp]", a.name), Value{"", 2, a.slots});
  }
  void rescale(Value& a) {
    ++stats_.rescales;
    a = emit(fmt::format("rescale {}", a.name), a);
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
  void binary(Value& a, const char* op, const std::string& b, int parts) {
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
