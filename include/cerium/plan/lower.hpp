#pragma once
// Lowering an expression to operations, the one walk behind both eval (plan/eval.hpp, which runs them) and
// explain (plan/explain.hpp, which records them), so that what explain says is what eval does.
//
// A Machine has a Value type and these members (P: PlainLeaf or ConstLeaf):
//   Value leaf(const CipherLeaf&); Value copy(const Value&); int parts(const Value&);
//   void add(Value&, const Value&), sub(..), add(Value&, const P&), sub(Value&, const P&), negate(Value&);
//   Value tensor(const Value&, const Value&); void multiply(Value&, const P&);
//   void relinearize(Value&), rescale(Value&), level_down(Value&, int), conjugate(Value&);
//   Value rotate(const Value&, std::int64_t);
//   std::vector<Value> rotate_hoisted(const CipherLeaf& or const Value&, std::span<const std::int64_t>).
//
// The rules:
//  - Hoisting. Before the walk, every rotate(leaf, k) in the tree is grouped by the leaf's ciphertext (the
//    shared_ptr's target): one rotate_hoisted per leaf, one ModUp for all its steps. sum_rotations hoists its
//    own child. Hoisted rotations equal single ones word for word (evaluator.hpp).
//  - Lazy relinearization. Products of ciphertexts stay 3-part tensors through +, -, negation and plain
//    products; a consumer that needs 2 parts (rotate, conjugate, another ciphertext product, rescale,
//    level_down, relinearize, the result) relinearizes once. A sum of products thus costs one key switch.
//  - Everything else lowers to the eager evaluator's operation, in the tree's order (left operand first).

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/expr/node.hpp"

namespace cerium::plan {

template <class M>
class Lowering {
 public:
  using Value = typename M::Value;

  explicit Lowering(M& machine) : m_(machine) {}

  // The whole expression: hoisting groups first, then the walk, then the final relinearization.
  template <expr::Node E>
  Value lower(const E& e) {
    collect(e);
    for (auto& group : groups_) {
      std::vector<Value> rotated = m_.rotate_hoisted(group.leaf, std::span<const std::int64_t>(group.steps));
      for (std::size_t i = 0; i < rotated.size(); ++i)
        hoisted_.emplace(Key{group.leaf.value.get(), group.steps[i]}, std::move(rotated[i]));
    }
    Value out = run(e);
    two_parts(out);
    return out;
  }

 private:
  using Key = std::pair<const ckks::Ciphertext*, std::int64_t>;
  struct Group {
    expr::CipherLeaf leaf;
    std::vector<std::int64_t> steps;  // distinct, in order of appearance
  };

  template <expr::Node E>
  void collect(const E& e) {
    if constexpr (E::op == expr::Op::rotate) {
      if constexpr (std::is_same_v<std::decay_t<decltype(e.child)>, expr::CipherLeaf>) {
        add_to_group(e.child, e.steps);
      } else {
        collect(e.child);
      }
    } else if constexpr (requires { e.lhs; }) {
      collect(e.lhs);
      collect(e.rhs);
    } else if constexpr (requires { e.child; }) {
      collect(e.child);
    }
  }

  void add_to_group(const expr::CipherLeaf& leaf, std::int64_t steps) {
    for (auto& group : groups_) {
      if (group.leaf.value != leaf.value) continue;
      for (const std::int64_t s : group.steps)
        if (s == steps) return;
      group.steps.push_back(steps);
      return;
    }
    groups_.push_back(Group{leaf, {steps}});
  }

  void two_parts(Value& v) {
    if (m_.parts(v) == 3) m_.relinearize(v);
  }

  template <expr::Node E>
  Value run(const E& e) {
    using expr::Op;
    if constexpr (E::op == Op::cipher) {
      return m_.leaf(e);
    } else if constexpr (E::op == Op::add || E::op == Op::sub) {
      constexpr bool subtract = E::op == Op::sub;
      using L = std::decay_t<decltype(e.lhs)>;
      using R = std::decay_t<decltype(e.rhs)>;
      if constexpr (!L::cipher) {  // c + x = x + c; c - x = -x + c
        Value r = run(e.rhs);
        if constexpr (subtract) m_.negate(r);
        m_.add(r, e.lhs);
        return r;
      } else {
        Value l = run(e.lhs);
        if constexpr (!R::cipher) {
          if constexpr (subtract) m_.sub(l, e.rhs); else m_.add(l, e.rhs);
        } else {
          const Value r = run(e.rhs);
          if constexpr (subtract) m_.sub(l, r); else m_.add(l, r);
        }
        return l;
      }
    } else if constexpr (E::op == Op::negate) {
      Value v = run(e.child);
      m_.negate(v);
      return v;
    } else if constexpr (E::op == Op::multiply) {
      using L = std::decay_t<decltype(e.lhs)>;
      using R = std::decay_t<decltype(e.rhs)>;
      if constexpr (L::cipher && R::cipher) {
        Value l = run(e.lhs);
        two_parts(l);
        Value r = run(e.rhs);
        two_parts(r);
        return m_.tensor(l, r);
      } else if constexpr (L::cipher) {
        Value l = run(e.lhs);
        m_.multiply(l, e.rhs);
        return l;
      } else {
        Value r = run(e.rhs);
        m_.multiply(r, e.lhs);
        return r;
      }
    } else if constexpr (E::op == Op::rotate) {
      if constexpr (std::is_same_v<std::decay_t<decltype(e.child)>, expr::CipherLeaf>) {
        const auto it = hoisted_.find(Key{e.child.value.get(), e.steps});
        if (it != hoisted_.end()) return m_.copy(it->second);
      }
      Value v = run(e.child);
      two_parts(v);
      return m_.rotate(v, e.steps);
    } else if constexpr (E::op == Op::sum_rotations) {
      Value v = run(e.child);
      two_parts(v);
      std::vector<Value> rotated = m_.rotate_hoisted(v, std::span<const std::int64_t>(e.steps));
      Value acc = std::move(rotated[0]);
      for (std::size_t i = 1; i < rotated.size(); ++i) m_.add(acc, rotated[i]);
      return acc;
    } else {  // conjugate, rescale, relinearize, level_down: 2 parts in
      Value v = run(e.child);
      two_parts(v);
      if constexpr (E::op == Op::conjugate) m_.conjugate(v);
      if constexpr (E::op == Op::rescale) m_.rescale(v);
      if constexpr (E::op == Op::level_down) m_.level_down(v, e.level);
      return v;
    }
  }

  M& m_;
  std::vector<Group> groups_;
  std::map<Key, Value> hoisted_;
};

}  // namespace cerium::plan
