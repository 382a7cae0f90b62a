#pragma once
// Expression nodes of the eDSL. A node only holds its operands: leaves hold shared_ptr handles to the ciphertext
// or plaintext (or the constant's value), inner nodes hold their children by value, so an `auto` expression owns
// everything it refers to and never dangles when the variables it was built from go away.
//
// Every node carries its traits as constexpr members, computed from its children's at compile time:
//   cipher        the subtree involves a ciphertext (false only for plaintext and constant leaves)
//   parts         2 or 3 for a ciphertext result (3: a tensor product not yet relinearized; the planner keeps
//                 sums of products at 3 parts so they share one relinearization), 0 for a plain leaf
//   depth         multiplications on the longest path (each costs a rescale, hence a level)
//   key_switches  key switches inside the subtree, not counting the relinearization a 3-part result still needs
//   ct_products   ciphertext-ciphertext products
//   elementwise   no key switch, no rescale, no ciphertext product: one pass over the limbs, slot by slot
//   static_counts the counts above are exact; false under a runtime-length node (sum over a std::vector, runtime
//                 rotation steps), where they count one term and plan_stats gives the totals
// traits.hpp turns them into the totals a caller wants.

#include <algorithm>
#include <array>
#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/plaintext.hpp"

namespace cerium::expr {

// What a node computes: one value per node type (Sum is add or sub); the planner dispatches on it.
enum class Op { cipher, plain, constant, integer, add, sub, negate, multiply, rotate, conjugate, sum_rotations,
                rescale, relinearize, level_down, sum, polynomial };

// Every node type says it is one; operators accept only nodes (and doubles).
template <class T>
concept Node = requires {
  { T::op } -> std::convertible_to<Op>;
  { T::cipher } -> std::convertible_to<bool>;
};

// A node whose result is a ciphertext: the operand the 2-part operations accept.
template <class T>
concept CipherNode = Node<T> && T::cipher;

namespace detail {
// The relinearization a consumer that needs 2 parts must insert first.
template <Node E>
inline constexpr int pending_relin = E::parts == 3 ? 1 : 0;
// Whether multiplying a ciphertext by this plain leaf raises the scale (and so costs a level after rescale):
// plaintexts and real or complex constants do, integers do not.
template <Node P>
inline constexpr bool raises_scale = [] {
  if constexpr (requires { P::raises_scale; }) return P::raises_scale;
  else return true;
}();
}  // namespace detail

// --- Leaves ---

// A ciphertext operand (expr::lift).
struct CipherLeaf {
  // The node's traits (the top of this file defines them).
  static constexpr Op op = Op::cipher;
  static constexpr bool cipher = true;
  static constexpr int parts = 2;
  static constexpr int depth = 0, key_switches = 0, ct_products = 0;
  static constexpr bool elementwise = true, static_counts = true;
  // The ciphertext, shared by every copy of the expression.
  std::shared_ptr<const ckks::Ciphertext> value;
};

// A plaintext operand (expr::lift).
struct PlainLeaf {
  // The node's traits (the top of this file defines them).
  static constexpr Op op = Op::plain;
  static constexpr bool cipher = false;
  static constexpr int parts = 0;
  static constexpr int depth = 0, key_switches = 0, ct_products = 0;
  static constexpr bool elementwise = true, static_counts = true;
  // The plaintext, shared by every copy of the expression.
  std::shared_ptr<const ckks::Plaintext> value;
};

// A real or complex constant in every slot; a product with it is encoded at the level's primes (one level).
struct ConstLeaf {
  // The node's traits (the top of this file defines them).
  static constexpr Op op = Op::constant;
  static constexpr bool cipher = false;
  static constexpr int parts = 0;
  static constexpr int depth = 0, key_switches = 0, ct_products = 0;
  static constexpr bool elementwise = true, static_counts = true;
  // The value in every slot.
  std::complex<double> value = 0;
};

// An integer in every slot: a product with it needs no encoding and no level (evaluator.multiply_integer).
struct IntLeaf {
  // The node's traits (the top of this file defines them).
  static constexpr Op op = Op::integer;
  static constexpr bool cipher = false, raises_scale = false;
  static constexpr int parts = 0;
  static constexpr int depth = 0, key_switches = 0, ct_products = 0;
  static constexpr bool elementwise = true, static_counts = true;
  // The value in every slot.
  std::int64_t value = 0;
};

// --- Slot-wise arithmetic ---

// lhs + rhs (Kind Op::add) or lhs - rhs (Op::sub); one operand at least is a ciphertext.
template <Node L, Node R, Op Kind>
struct Sum {  // add or sub: a 3-part operand stays 3-part (lazy relinearization)
  static_assert(L::cipher || R::cipher, "cerium::expr: + and - need at least one ciphertext operand");
  // The node's traits (the top of this file defines them).
  static constexpr Op op = Kind;
  static constexpr bool cipher = true;
  static constexpr int parts = std::max(L::parts, R::parts);
  static constexpr int depth = std::max(L::depth, R::depth);
  static constexpr int key_switches = L::key_switches + R::key_switches;
  static constexpr int ct_products = L::ct_products + R::ct_products;
  static constexpr bool elementwise = L::elementwise && R::elementwise;
  static constexpr bool static_counts = L::static_counts && R::static_counts;
  // The operands, held by value.
  L lhs;
  R rhs;
};
// lhs + rhs.
template <Node L, Node R>
using Add = Sum<L, R, Op::add>;
// lhs - rhs.
template <Node L, Node R>
using Sub = Sum<L, R, Op::sub>;

// -child: negates every slot, parts kept.
template <CipherNode E>
struct Negate {
  // The node's traits (the top of this file defines them).
  static constexpr Op op = Op::negate;
  static constexpr bool cipher = true;
  static constexpr int parts = E::parts;
  static constexpr int depth = E::depth, key_switches = E::key_switches, ct_products = E::ct_products;
  static constexpr bool elementwise = E::elementwise, static_counts = E::static_counts;
  // The operand, held by value.
  E child;
};

// A product. Of two ciphertexts: each operand is relinearized first if it has 3 parts, and the tensor product
// (3 parts) is left for the consumer to relinearize. By a plaintext or constant: parts are kept.
template <Node L, Node R>
struct Multiply {
  static_assert(L::cipher || R::cipher, "cerium::expr: * needs at least one ciphertext operand");
  // Both operands are ciphertexts: a tensor product, 3 parts.
  static constexpr bool both = L::cipher && R::cipher;
  // The node's traits (the top of this file defines them); raises_scale: the product costs a level (not by an
  // integer).
  static constexpr Op op = Op::multiply;
  static constexpr bool cipher = true;
  static constexpr int parts = both ? 3 : std::max(L::parts, R::parts);
  static constexpr bool raises_scale = both || (L::cipher ? detail::raises_scale<R> : detail::raises_scale<L>);
  static constexpr int depth = std::max(L::depth, R::depth) + (raises_scale ? 1 : 0);
  static constexpr int key_switches =
      L::key_switches + R::key_switches + (both ? detail::pending_relin<L> + detail::pending_relin<R> : 0);
  static constexpr int ct_products = L::ct_products + R::ct_products + (both ? 1 : 0);
  static constexpr bool elementwise = !both && L::elementwise && R::elementwise;
  static constexpr bool static_counts = L::static_counts && R::static_counts;
  // The operands, held by value.
  L lhs;
  R rhs;
};

// --- Operations that need 2 parts: a 3-part child is relinearized first ---

// The traits of a node of one ciphertext operand that it needs at 2 parts (the node types below derive from it):
// OwnSwitches is the key switches the node itself costs, KeepsElementwise whether an elementwise 2-part child stays
// elementwise through it.
template <Node E, Op Kind, int OwnSwitches, bool KeepsElementwise>
struct Unary2 {
  static_assert(E::cipher, "cerium::expr: this operation needs a ciphertext operand, not a plaintext or constant");
  static constexpr Op op = Kind;        // the node's kind
  static constexpr bool cipher = true;  // a ciphertext result
  static constexpr int parts = 2;       // a 3-part child is relinearized first
  // The child's depth: the node costs no level of its own.
  static constexpr int depth = E::depth, ct_products = E::ct_products;  // the child's ciphertext products
  // The child's key switches, its pending relinearization and OwnSwitches.
  static constexpr int key_switches = E::key_switches + detail::pending_relin<E> + OwnSwitches;
  // Whether the node keeps an elementwise 2-part child elementwise (KeepsElementwise).
  static constexpr bool elementwise = KeepsElementwise && E::elementwise && E::parts == 2;
  static constexpr bool static_counts = E::static_counts;  // the child's
};

// rotate(child, steps): the slots rotated left by `steps` (right for negative steps); one key switch.
template <Node E>
struct Rotate : Unary2<E, Op::rotate, 1, false> {
  E child;                 // the operand, held by value
  std::int64_t steps = 0;  // left rotation in slots; negative: right
};

// conjugate(child): the complex conjugate of every slot; one key switch.
template <Node E>
struct Conjugate : Unary2<E, Op::conjugate, 1, false> {
  E child;  // the operand, held by value
};

// rescale(child): divided by the level's last prime P (scale / P), one level down.
template <Node E>
struct Rescale : Unary2<E, Op::rescale, 0, false> {
  E child;  // the operand, held by value
};

// relinearize(child): a 3-part child back to 2 parts (its key switch is the child's pending one); a 2-part
// child is passed through.
template <Node E>
struct Relinearize : Unary2<E, Op::relinearize, 0, true> {
  E child;  // the operand, held by value
};

// level_down(child, level): limbs dropped down to `level` (exact: scale unchanged).
template <Node E>
struct LevelDown : Unary2<E, Op::level_down, 0, true> {
  E child;        // the operand, held by value
  int level = 0;  // the level to drop to
};

// sum_k rotate(child, steps[k]): the child is evaluated once and all N rotations share its ModUp.
template <Node E, std::size_t N>
struct SumRotations : Unary2<E, Op::sum_rotations, static_cast<int>(N), false> {
  E child;                              // the operand, evaluated once
  std::array<std::int64_t, N> steps{};  // the rotations summed, as in Rotate
};

}  // namespace cerium::expr
