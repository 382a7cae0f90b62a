#pragma once
// The power basis's schedule: which powers of x are made, from which factors, where each is brought on the scale
// chain, and how the terms c_k x^k meet in one sum (expr/polynomial.hpp states the depth and scale rules). It is
// written once, over an Ops type, and run three ways: on ciphertexts (plan/power_basis.hpp: what eval does), on
// (level, parts) with the planner's counter (plan/power_basis_count.hpp: what explain and the launch traits count)
// and on parts alone here (the node's key switches). A change to the schedule thus changes all three.
//
// Ops has a Value type, a Terms type and these members:
//   int level(const Value&); Value clone(const Value&);
//   void bring_to(Value&, int level)            (onto the chain at that level, circuits::ScaleChain::bring_to);
//   Value multiply(const Value&, const Value&)  (on the chain, relinearized and rescaled; the two may be one object);
//   void level_down(Value&, int level);
//   void scale_factor(Value& y, const Value& x, std::size_t k, int level)  (y times c_k, encoded so that the
//       tensor x (x) y lands on the sum's scale at `level`, then rescaled);
//   Terms terms(std::size_t degree); void tensor_term(Terms&, Value x, Value y); void scalar_term(Terms&, Value, k);
//   Value sum(Terms&, bool fuse)  (fuse: the terms' products in one fused pass);
//   void add_constant(Value&)  (+ c_0); void relinearize_rescale(Value&).

#include <algorithm>
#include <bit>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace cerium::expr::power_basis {

// x^k = x^a x^(k - a) with a the largest power of two below k.
constexpr std::size_t factor(std::size_t k) { return std::bit_floor(k - 1); }
// Levels x^k sits below x.
constexpr int depth(std::size_t k) { return static_cast<int>(std::bit_width(k - 1)); }
// Whether another power of a degree-d evaluation is made from x^k (then it must be relinearized).
constexpr bool is_factor(std::size_t k, std::size_t degree) {
  for (std::size_t j = 2; j <= degree; ++j)
    if (factor(j) == k || j - factor(j) == k) return true;
  return false;
}
// Whether x^k enters the sum as a 3-part tensor term (lazy form, and no other power is made from it).
constexpr bool tensor_term(std::size_t k, std::size_t degree, bool lazy) {
  return lazy && k > 1 && !is_factor(k, degree);
}

// The powers made so far and the schedule that makes them and sums the terms. lazy: see tensor_term; otherwise
// every power is formed alone, relinearized (the eager form).
template <class Ops>
class Schedule {
 public:
  using Value = typename Ops::Value;  // a ciphertext, (level, parts) or parts: what Ops computes on

  // Starts from x^1, a copy of x, whose level is the top of the chain the powers descend.
  constexpr Schedule(Ops& ops, const Value& x, bool lazy) : lazy_(lazy), top_(ops.level(x)) {
    powers_.resize(2);
    powers_[1] = ops.clone(x);
  }

  // x^k, computed once from its factors. Call evaluate first, or ask for the powers in increasing order up to a
  // fixed degree (they are stored in a vector that may grow).
  constexpr const Value& power(Ops& ops, std::size_t k) {
    if (k >= powers_.size()) powers_.resize(k + 1);  // before the factors: no resize while they are referenced
    if (!powers_[k]) {
      const std::size_t a = factor(k);
      const Value& pa = power(ops, a);
      const Value& pb = power(ops, k - a);
      powers_[k] = ops.multiply(pa, pb);
    }
    return *powers_[k];
  }

  // The level of the deepest power of a polynomial of this degree: where its terms are summed.
  constexpr int sum_level(std::size_t degree) const { return top_ - depth(degree); }

  // sum_k c_k x^k + c_0, relinearized (where tensor terms left 3 parts) and rescaled once.
  constexpr Value evaluate(Ops& ops, std::size_t degree, bool fuse) {
    if (powers_.size() < degree + 1) powers_.resize(degree + 1);  // no resize while references are held
    for (std::size_t k = 2; k <= degree; ++k)
      if (!tensor_term(k, degree, lazy_)) power(ops, k);
    const int level = sum_level(degree);
    typename Ops::Terms terms = ops.terms(degree);
    for (std::size_t k = 1; k <= degree; ++k) {
      if (tensor_term(k, degree, lazy_)) {  // c_k x^k = x^a (x) rescale(c_k x^b), never formed alone
        const std::size_t a = factor(k);
        Value y = ops.clone(power(ops, k - a));
        ops.bring_to(y, level + 1);
        Value x = ops.clone(power(ops, a));
        ops.level_down(x, level);
        ops.scale_factor(y, x, k, level);
        ops.tensor_term(terms, std::move(x), std::move(y));
      } else {
        Value t = ops.clone(*powers_[k]);
        ops.bring_to(t, level);
        ops.scalar_term(terms, std::move(t), k);
      }
    }
    Value sum = ops.sum(terms, fuse && lazy_);  // the eager form sums term by term
    ops.add_constant(sum);
    ops.relinearize_rescale(sum);  // the tensor terms' s^2 parts, then the rescale: one key switch
    return sum;
  }

 private:
  bool lazy_ = false;
  int top_ = 0;
  std::vector<std::optional<Value>> powers_;
};

// The schedule on part counts alone: a product on the chain is one key switch, and so is the final relinearization
// where a tensor term left the sum at 3 parts.
struct KeySwitchCount {
  // A value: its parts alone.
  struct Value {
    int parts = 2;  // 2, or 3 for a tensor not yet relinearized
  };
  // A sum's terms: the most parts among them.
  struct Terms {
    int parts = 0;  // the most parts among the terms so far
  };
  int key_switches = 0;  // counted so far

  // The Ops members (the top of this file): only products and the final relinearization count.
  static constexpr int level(const Value&) { return 0; }
  static constexpr Value clone(const Value& v) { return v; }
  static constexpr void bring_to(Value&, int) {}
  constexpr Value multiply(const Value&, const Value&) {
    ++key_switches;
    return {};
  }
  static constexpr void level_down(Value&, int) {}
  static constexpr void scale_factor(Value&, const Value&, std::size_t, int) {}
  static constexpr Terms terms(std::size_t) { return {}; }
  static constexpr void tensor_term(Terms& t, Value, Value) { t.parts = 3; }
  static constexpr void scalar_term(Terms& t, Value v, std::size_t) { t.parts = std::max(t.parts, v.parts); }
  static constexpr Value sum(Terms& t, bool) { return {t.parts}; }
  static constexpr void add_constant(Value&) {}
  constexpr void relinearize_rescale(Value& v) {
    if (v.parts == 3) ++key_switches;
    v.parts = 2;
  }
};

// Key switches of evaluating a degree-d polynomial of a 2-part x.
constexpr int key_switches(std::size_t degree, bool lazy) {
  KeySwitchCount ops;
  Schedule<KeySwitchCount> schedule(ops, KeySwitchCount::Value{}, lazy);
  schedule.evaluate(ops, degree, false);
  return ops.key_switches;
}

}  // namespace cerium::expr::power_basis
