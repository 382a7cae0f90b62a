#pragma once
// The terms of a flattened sum (plan/lower.hpp): a chain of + and - over ciphertext expressions, or a runtime sum,
// is cut into its terms so that the products among them can be accumulated in one fused pass per polynomial.

#include "cerium/expr/node.hpp"

namespace cerium::plan {

// What a term of a sum is: one enum for the lowering (plan/lower.hpp), its counts (plan/launch_traits.hpp) and the
// fused pass (plan/fused_sum.hpp), each handling every kind.
enum class TermKind {
  value,           // any ciphertext expression, already evaluated into a
  plain_product,   // a * plain (a evaluated, the plaintext leaf by address: it lives in the expression)
  cipher_product,  // a (x) b, both 2-part: a tensor product left at 3 parts
  scalar_product,  // a * constant or a * integer (the leaf by address): one scalar per limb
};

// Whether a term of this kind joins a fused pass: a product; a subtracted one only by a scalar, whose sign folds
// into it (the others are computed alone and subtracted).
constexpr bool fusable(TermKind kind, bool negated) {
  switch (kind) {
    case TermKind::value: return false;
    case TermKind::scalar_product: return true;
    case TermKind::plain_product:
    case TermKind::cipher_product: return !negated;
  }
  return false;
}

// Whether a sum's terms are worth one fused pass: two or more of them join it (with one, the eager sequence is as
// cheap). The lowering decides by it (plan/lower.hpp) and its counts follow it (plan/launch_traits.hpp).
template <class Terms>
constexpr bool worth_fusing(const Terms& terms) {
  int products = 0;
  for (const auto& t : terms) products += fusable(t.kind, t.negated) ? 1 : 0;
  return products >= 2;
}

// What the counts need of a term: its kind, the parts of its product (3 for a tensor, else its operand's) and
// its sign.
struct TermShape {
  TermKind kind = TermKind::value;  // what the term is
  int parts = 2;                    // of its product: 3 for a tensor, else its operand's
  bool negated = false;             // subtracted from the sum
};

// A term of a flattened sum, on the machine's Value (a ciphertext for eval, a traced value for explain): its
// kind, its evaluated operands and, for a product by a plain leaf, the leaf.
template <class Value>
struct Term {
  using Kind = TermKind;  // TermKind, as a member type
  Kind kind = Kind::value;  // what the term is: a value, or which product
  Value a{};  // the term's value, or its product's ciphertext operand (the left one of a tensor)
  Value b{};  // cipher_product: the right operand
  const expr::PlainLeaf* plain = nullptr;  // plain_product: the plaintext leaf (it lives in the expression)
  const expr::ConstLeaf* constant = nullptr;  // scalar_product: one of these two
  const expr::IntLeaf* integer = nullptr;  // scalar_product by an integer: no level
  bool negated = false;  // subtracted from the sum (the right side of a -)
  // A product's operand that is a ciphertext leaf of the expression, borrowed instead of copied into a / b (a
  // fused pass only reads it; a term computed alone copies it first). Null: the operand is in a / b.
  const Value* a_ref = nullptr;
  const Value* b_ref = nullptr;

  // A product's operands: the borrowed leaf where a_ref / b_ref is set, else a / b.
  const Value& first() const { return a_ref != nullptr ? *a_ref : a; }
  const Value& second() const { return b_ref != nullptr ? *b_ref : b; }
};

// Whether this term joins a fused pass (fusable of its kind and sign).
template <class Value>
bool fusable(const Term<Value>& t) {
  return fusable(t.kind, t.negated);
}

}  // namespace cerium::plan
