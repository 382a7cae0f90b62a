#pragma once
// The machine that runs a lowering (plan/lower.hpp) on the eager evaluator: each step is one evaluator call, or
// a fused sum that writes exactly the words the eager calls would, so a plan's result equals the eager calls in
// the plan's order word for word.

#include <algorithm>
#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/expr/node.hpp"
#include "cerium/plan/fused_sum.hpp"
#include "cerium/plan/power_basis.hpp"
#include "cerium/plan/terms.hpp"

namespace cerium::plan {

// The Machine of plan/lower.hpp on an evaluator: what eval runs.
template <backend::PolyBackend B>
class Executor {
 public:
  using Value = ckks::Ciphertext;  // the machine's values are ciphertexts
  // Whether rescale(sum) folds into the sum's pass when PlanOptions leaves it to the backend.
  static constexpr bool fold_rescale_by_default = [] {
    if constexpr (requires { B::fold_rescale_into_sums; }) {
      return static_cast<bool>(B::fold_rescale_into_sums);
    } else {
      return true;
    }
  }();

  // Runs on this evaluator, which must outlive the executor.
  explicit Executor(const ckks::BasicEvaluator<B>& evaluator) : ev_(evaluator) {}

  // A copy of the leaf's ciphertext: the lowering owns the values it works on.
  Value leaf(const expr::CipherLeaf& x) { return x.value->clone(); }
  // The leaf's own ciphertext, read in place by fused passes (the expression owns it for the whole eval).
  const Value* borrow(const expr::CipherLeaf& x) { return x.value.get(); }
  // copy: a value used twice; reuse: a common subexpression's value where it occurs again; parts: 2 or 3.
  Value copy(const Value& v) { return v.clone(); }
  Value reuse(const Value& v) { return v.clone(); }
  int parts(const Value& v) { return static_cast<int>(v.size()); }

  // a + or - a ciphertext, a plaintext, a constant or an integer in every slot, and -a: the evaluator's in-place
  // calls (with their alignment of levels and scales).
  void add(Value& a, const Value& b) { ev_.add_inplace(a, b); }
  void sub(Value& a, const Value& b) { ev_.sub_inplace(a, b); }
  void add(Value& a, const expr::PlainLeaf& p) { ev_.add_inplace(a, *p.value); }
  void sub(Value& a, const expr::PlainLeaf& p) { ev_.sub_inplace(a, *p.value); }
  void add(Value& a, const expr::ConstLeaf& c) { ev_.add_inplace(a, c.value); }
  void sub(Value& a, const expr::ConstLeaf& c) { ev_.sub_inplace(a, c.value); }
  void add(Value& a, const expr::IntLeaf& c) { ev_.add_inplace(a, static_cast<double>(c.value)); }
  void sub(Value& a, const expr::IntLeaf& c) { ev_.sub_inplace(a, static_cast<double>(c.value)); }
  void negate(Value& a) { ev_.negate_inplace(a); }

  // a (x) b left at 3 parts (multiply_no_relin), and a times a plaintext, a constant or an integer (the last
  // without a level: multiply_integer).
  Value tensor(const Value& a, const Value& b) { return ev_.multiply_no_relin(a, b); }
  void multiply(Value& a, const expr::PlainLeaf& p) { ev_.multiply_inplace(a, *p.value); }
  void multiply(Value& a, const expr::ConstLeaf& c) { ev_.multiply_inplace(a, c.value); }
  void multiply(Value& a, const expr::IntLeaf& c) { ev_.multiply_integer_inplace(a, c.value); }

  // The evaluator's calls of the same names, in place; rotate returns the rotated copy.
  void relinearize(Value& a) { ev_.relinearize_inplace(a); }
  void rescale(Value& a) { ev_.rescale_inplace(a); }
  void relinearize_rescale(Value& a) { ev_.relinearize_rescale_inplace(a); }
  void level_down(Value& a, int level) { ev_.level_down_inplace(a, level); }
  void conjugate(Value& a) { ev_.conjugate_inplace(a); }
  Value rotate(const Value& a, std::int64_t steps) { return ev_.rotate(a, steps); }

  // The leaf's rotations by each step, sharing one ModUp (the evaluator's rotate_hoisted), read in place.
  std::vector<Value> rotate_hoisted(const expr::CipherLeaf& x, std::span<const std::int64_t> steps) {
    return ev_.rotate_hoisted(*x.value, steps);
  }
  // The same for a computed value.
  std::vector<Value> rotate_hoisted(const Value& a, std::span<const std::int64_t> steps) {
    return ev_.rotate_hoisted(a, steps);
  }

  // plan/fused_sum.hpp's fused pass into out; false, nothing done, where the operands do not allow it.
  bool fused_sum(std::span<Term<Value>> terms, Value& out) { return plan::fused_sum(ev_, terms, out); }
  // The same with the rescale folded into the pass (a 2-part sum whose terms all join it).
  bool fused_sum_rescaled(std::span<Term<Value>> terms, Value& out) {
    return plan::fused_sum_rescaled(ev_, terms, out);
  }

  // sum_k coefficients[k] x^k in the lazy form (plan/power_basis.hpp); fuse: its terms' products in one fused sum.
  Value polynomial(const Value& x, std::span<const double> coefficients, bool fuse) {
    return PowerBasis<B>(ev_, x, true).evaluate(coefficients, fuse);
  }

 private:
  const ckks::BasicEvaluator<B>& ev_;
};

}  // namespace cerium::plan
