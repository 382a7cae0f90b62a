#pragma once
// Lowering an expression to operations, the one walk behind both eval (plan/eval.hpp, which runs them) and
// explain (plan/explain.hpp, which records them), so that what explain says is what eval does.
//
// A Machine has a Value type and these members (P: PlainLeaf or ConstLeaf):
//   Value leaf(const CipherLeaf&); Value copy(const Value&); Value reuse(const Value&); int parts(const Value&);
//   void add(Value&, const Value&), sub(..), add(Value&, const P&), sub(Value&, const P&), negate(Value&);
//   Value tensor(const Value&, const Value&); void multiply(Value&, const P&);
//   void relinearize(Value&), rescale(Value&), level_down(Value&, int), conjugate(Value&);
//   void relinearize_rescale(Value&)  (rescale, a 3-part value relinearized first: one key switch that rescales);
//   Value rotate(const Value&, std::int64_t);
//   std::vector<Value> rotate_hoisted(const CipherLeaf& or const Value&, std::span<const std::int64_t>);
//   bool fused_sum(std::span<Term<Value>>, Value& out)  (false: the operands do not allow it, nothing done);
//   bool fused_sum_rescaled(std::span<Term<Value>>, Value& out)  (the same, and rescaled);
//   Value polynomial(const Value& x, std::span<const double> coefficients, bool fuse)  (expr/power_basis.hpp's
//   schedule; fuse: its terms' products in one fused sum).
// P may also be IntLeaf (multiply: no level).
//
// The rules:
//  - Hoisting. Before the walk, every rotate(leaf, k) in the tree is grouped by the leaf's ciphertext (the
//    shared_ptr's target): one rotate_hoisted per leaf, one ModUp for all its steps. sum_rotations hoists its
//    own child. Hoisted rotations equal single ones word for word (evaluator.hpp).
//  - Lazy relinearization. Products of ciphertexts stay 3-part tensors through +, -, negation and plain
//    products; a consumer that needs 2 parts (rotate, conjugate, another ciphertext product, rescale,
//    level_down, relinearize, the result) relinearizes once. A sum of products thus costs one key switch.
//  - Fused sums. A chain of + and - between ciphertext expressions, or sum(vector), is flattened into its
//    terms (operands evaluated left to right; the right side of a - negated); when two or more terms are
//    products (ciphertext x plaintext, ciphertext x ciphertext tensors, ciphertext x real or integer constant,
//    the constants' products also negated: their sign folds into the scalar), the machine accumulates them in
//    one pass per polynomial (backend linear_combination) when levels, slots and scales allow exactly what the
//    eager sequence would do; otherwise, or with PlanOptions::fuse_sums off, the terms are multiplied and added
//    (or subtracted) one by one. The words are the same either way (exact modular sums).
//  - Rescale folded into the producer. rescale(a sum) whose products all join one 2-part fused pass runs as one
//    machine.fused_sum_rescaled: the same words as the fused sum then the rescale (PlanOptions::fold_rescale).
//    rescale(a 3-part value) runs as machine.relinearize_rescale: the relinearization's key switch rescales too
//    (the evaluator's relinearize_rescale: the words of the two steps).
//  - Common subexpressions. A non-leaf subexpression that occurs twice or more (same structure, same operands:
//    plan/fingerprint.hpp) is evaluated once and copied (machine.reuse) where it occurs again; the words are
//    those of evaluating it each time. Terms of a fused sum are gathered, not cached as a whole (their
//    operands are).
//  - Everything else lowers to the eager evaluator's operation, in the tree's order (left operand first).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/expr/node.hpp"
#include "cerium/expr/runtime_nodes.hpp"
#include "cerium/plan/fingerprint.hpp"
#include "cerium/plan/options.hpp"
#include "cerium/plan/terms.hpp"

namespace cerium::plan {

namespace detail {
// A node the planner flattens into terms: a runtime sum, or + between two ciphertext expressions.
template <class E>
constexpr bool flattens() {
  if constexpr (E::op == expr::Op::sum) return true;
  else if constexpr (E::op == expr::Op::add || E::op == expr::Op::sub)
    return decltype(E::lhs)::cipher && decltype(E::rhs)::cipher;
  else return false;
}
template <class P>
constexpr bool scalar_leaf = std::is_same_v<P, expr::ConstLeaf> || std::is_same_v<P, expr::IntLeaf>;
// The term a node makes in a sum: a product of two ciphertext expressions, a ciphertext expression times a
// plaintext or times a constant or integer (either side), or any other value.
template <class E>
constexpr TermKind product_kind() {
  if constexpr (E::op != expr::Op::multiply) {
    return TermKind::value;
  } else {
    using L = decltype(E::lhs);
    using R = decltype(E::rhs);
    if constexpr (L::cipher && R::cipher) return TermKind::cipher_product;
    else if constexpr (std::is_same_v<L, expr::PlainLeaf> || std::is_same_v<R, expr::PlainLeaf>)
      return TermKind::plain_product;
    else if constexpr (scalar_leaf<L> || scalar_leaf<R>) return TermKind::scalar_product;
    else return TermKind::value;
  }
}
}  // namespace detail

// The walk that lowers an expression onto machine M (the header comment lists its members and the rules).
template <class M>
class Lowering {
 public:
  using Value = typename M::Value;  // the machine's values

  // Lowers onto this machine, which must outlive the lowering; one Lowering per expression.
  explicit Lowering(M& machine, PlanOptions options = {}) : m_(machine), options_(options) {}

  // The whole expression: hoisting groups first, then the walk, then the final relinearization.
  template <expr::Node E>
  Value lower(const E& e) {
    collect(e);
    if (options_.share_subexpressions) count_subexpressions(e);
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
    } else if constexpr (E::op == expr::Op::sum) {
      for (const auto& term : e.terms) collect(term);
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

  // The result lower() made for a rotation of a leaf in its hoisting group; null for any other rotation.
  template <expr::Node R>
  const Value* hoisted_result(const R& rotation) const {
    if constexpr (std::is_same_v<std::decay_t<decltype(rotation.child)>, expr::CipherLeaf>) {
      const auto it = hoisted_.find(Key{rotation.child.value.get(), rotation.steps});
      if (it != hoisted_.end()) return &it->second;
    }
    return nullptr;
  }

  void two_parts(Value& v) {
    if (m_.parts(v) == 3) m_.relinearize(v);
  }

  // Fingerprints of the non-leaf subexpressions that occur more than once.
  template <expr::Node E>
  void count_subexpressions(const E& e) {
    std::map<std::string, int> counts;
    count(e, counts);
    for (const auto& [print, n] : counts)
      if (n > 1) repeated_.emplace(print, std::nullopt);
  }
  template <expr::Node E>
  static void count(const E& e, std::map<std::string, int>& counts) {
    if constexpr (E::op == expr::Op::cipher || !E::cipher) {
      return;  // leaves cost nothing to evaluate again
    } else {
      // A repeat is served whole from the cache: its operands occur once more only through its first copy.
      if (++counts[fingerprint(e)] > 1) return;
      if constexpr (E::op == expr::Op::sum) {
        for (const auto& term : e.terms) count(term, counts);
      } else if constexpr (requires { e.lhs; }) {
        count(e.lhs, counts);
        count(e.rhs, counts);
      } else if constexpr (requires { e.child; }) {
        count(e.child, counts);
      }
    }
  }

  // Evaluates e, once for all its occurrences when it repeats.
  template <expr::Node E>
  Value run(const E& e) {
    if constexpr (E::op != expr::Op::cipher) {
      if (!repeated_.empty()) {
        const auto it = repeated_.find(fingerprint(e));
        if (it != repeated_.end()) {
          if (it->second) return m_.reuse(*it->second);
          Value v = run_node(e);
          it->second = m_.copy(v);
          return v;
        }
      }
    }
    return run_node(e);
  }

  template <expr::Node E>
  Value run_node(const E& e) {
    using expr::Op;
    if constexpr (E::op == Op::cipher) {
      return m_.leaf(e);
    } else if constexpr (detail::flattens<E>()) {
      std::vector<Term<Value>> terms;
      gather(e, terms);
      return sum_terms(terms);
    } else if constexpr (E::op == Op::polynomial) {
      Value storage;
      return m_.polynomial(read_only(e.child, storage), std::span<const double>(e.coefficients), options_.fuse_sums);
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
        Value l, r;
        const Value& left = read_only(e.lhs, l);
        return m_.tensor(left, read_only(e.rhs, r));
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
      if (const Value* shared = hoisted_result(e)) return m_.copy(*shared);
      Value storage;
      return m_.rotate(read_only(e.child, storage), e.steps);
    } else if constexpr (E::op == Op::sum_rotations) {
      Value storage;
      std::vector<Value> rotated = m_.rotate_hoisted(read_only(e.child, storage),
                                                     std::span<const std::int64_t>(e.steps.data(), e.steps.size()));
      Value acc = std::move(rotated[0]);
      for (std::size_t i = 1; i < rotated.size(); ++i) m_.add(acc, rotated[i]);
      return acc;
    } else if constexpr (E::op == Op::rescale && detail::flattens<std::decay_t<decltype(e.child)>>()) {
      if (options_.fuse_sums && options_.fold_rescale.value_or(M::fold_rescale_by_default) &&
          (repeated_.empty() || !repeated_.contains(fingerprint(e.child)))) {
        std::vector<Term<Value>> terms;
        gather(e.child, terms);
        Value out;
        if (worth_fusing(terms) && m_.fused_sum_rescaled(std::span<Term<Value>>(terms), out)) return out;
        Value v = sum_terms(terms);
        m_.relinearize_rescale(v);
        return v;
      }
      Value v = run(e.child);
      m_.relinearize_rescale(v);
      return v;
    } else if constexpr (E::op == Op::rescale) {  // a 3-part value relinearized and rescaled in one key switch
      Value v = run(e.child);
      m_.relinearize_rescale(v);
      return v;
    } else {  // conjugate, relinearize, level_down: 2 parts in
      Value v = run(e.child);
      two_parts(v);
      if constexpr (E::op == Op::conjugate) m_.conjugate(v);
      if constexpr (E::op == Op::level_down) m_.level_down(v, e.level);
      return v;
    }
  }

  // The terms of a sum, operands evaluated left to right; negated: the term is subtracted.
  template <expr::Node E>
  void gather(const E& e, std::vector<Term<Value>>& terms, bool negated = false) {
    using expr::Op;
    using Kind = typename Term<Value>::Kind;
    if constexpr (E::op == Op::sum) {
      for (const auto& term : e.terms) gather(term, terms, negated);
    } else if constexpr (detail::flattens<E>()) {
      gather(e.lhs, terms, negated);
      gather(e.rhs, terms, E::op == Op::sub ? !negated : negated);
    } else if constexpr (detail::product_kind<E>() != TermKind::value) {
      if (!repeated_.empty() && repeated_.contains(fingerprint(e))) {  // shared: evaluated once, added as a value
        Term<Value> t{Kind::value};
        t.a = run(e);
        t.negated = negated;
        terms.push_back(std::move(t));
      } else {
        gather_product(e, terms);
        terms.back().negated = negated;
      }
    } else {
      Term<Value> t{Kind::value};
      t.a = run(e);
      t.negated = negated;
      terms.push_back(std::move(t));
    }
  }

  template <expr::Node E>
  void gather_product(const E& e, std::vector<Term<Value>>& terms) {
    using Kind = typename Term<Value>::Kind;
    constexpr TermKind kind = detail::product_kind<E>();
    if constexpr (kind == TermKind::cipher_product) {
      Term<Value> t{Kind::cipher_product};
      operand(e.lhs, t.a, t.a_ref, true);
      operand(e.rhs, t.b, t.b_ref, true);
      terms.push_back(std::move(t));
    } else if constexpr (kind == TermKind::plain_product) {
      Term<Value> t{Kind::plain_product};
      if constexpr (std::is_same_v<decltype(E::rhs), expr::PlainLeaf>) {
        operand(e.lhs, t.a, t.a_ref, false);
        t.plain = &e.rhs;
      } else {
        operand(e.rhs, t.a, t.a_ref, false);
        t.plain = &e.lhs;
      }
      terms.push_back(std::move(t));
    } else {
      static_assert(kind == TermKind::scalar_product, "gather_product: every kind of product is handled");
      Term<Value> t{Kind::scalar_product};
      if constexpr (detail::scalar_leaf<std::decay_t<decltype(e.rhs)>>) {
        operand(e.lhs, t.a, t.a_ref, false);
        set_scalar(t, e.rhs);
      } else {
        operand(e.rhs, t.a, t.a_ref, false);
        set_scalar(t, e.lhs);
      }
      terms.push_back(std::move(t));
    }
  }

  // An operand that is only read, in 2 parts: a 2-part ciphertext leaf borrowed where the machine can, anything
  // else evaluated into storage (and relinearized).
  template <expr::Node X>
  const Value& read_only(const X& x, Value& storage) {
    const Value* borrowed = nullptr;
    operand(x, storage, borrowed, true);
    return borrowed != nullptr ? *borrowed : storage;
  }

  // A product's operand (relinearized to 2 parts for a ciphertext product): a 2-part ciphertext leaf is borrowed
  // where the machine can (a fused pass reads it in place; materialize copies it), so that eval does not copy
  // every input it reads.
  template <expr::Node X>
  void operand(const X& x, Value& value, const Value*& ref, bool relinearized) {
    if constexpr (X::op == expr::Op::cipher) {
      const Value* borrowed = m_.borrow(x);
      if (borrowed != nullptr && m_.parts(*borrowed) == 2) {
        ref = borrowed;
        return;
      }
    } else if constexpr (X::op == expr::Op::rotate) {
      // A hoisted rotation of a leaf (a BSGS baby step): its result, made once, is read in place by every use.
      const Value* shared = hoisted_result(x);
      if (shared != nullptr && m_.parts(*shared) == 2) {
        ref = shared;
        return;
      }
    }
    value = run(x);
    if (relinearized) two_parts(value);
  }

  // One fused pass when the machine can, else multiply and add term by term (the same words).
  Value sum_terms(std::vector<Term<Value>>& terms) {
    Value out;
    if (options_.fuse_sums && worth_fusing(terms) && m_.fused_sum(std::span<Term<Value>>(terms), out)) return out;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      Value v = materialize(terms[i]);
      if (i == 0) {
        out = std::move(v);
        if (terms[i].negated) m_.negate(out);
      } else if (terms[i].negated) {
        m_.sub(out, v);
      } else {
        m_.add(out, v);
      }
    }
    return out;
  }

  static void set_scalar(Term<Value>& t, const expr::ConstLeaf& c) { t.constant = &c; }
  static void set_scalar(Term<Value>& t, const expr::IntLeaf& c) { t.integer = &c; }

  // The term's value as the eager sequence computes it (its sign left to the caller).
  Value materialize(Term<Value>& t) {
    using Kind = typename Term<Value>::Kind;
    if (t.kind == Kind::cipher_product) return m_.tensor(t.first(), t.second());
    if (t.a_ref != nullptr) {  // a borrowed leaf: the in-place product below needs its own copy
      t.a = m_.copy(*t.a_ref);
      t.a_ref = nullptr;
    }
    if (t.kind == Kind::plain_product) m_.multiply(t.a, *t.plain);
    if (t.kind == Kind::scalar_product) {
      if (t.constant != nullptr) m_.multiply(t.a, *t.constant); else m_.multiply(t.a, *t.integer);
    }
    return std::move(t.a);
  }


  M& m_;
  PlanOptions options_;
  std::vector<Group> groups_;
  std::map<Key, Value> hoisted_;
  std::map<std::string, std::optional<Value>> repeated_;  // fingerprint -> the value, once evaluated
};

}  // namespace cerium::plan
