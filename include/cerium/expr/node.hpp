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

enum class Op { cipher, plain, constant, integer, add, sub, negate, multiply, rotate, conjugate, sum_rotations,
                rescale, relinearize, level_down, sum, polynomial };

// Every node type says it is one; operators accept only nodes (and doubles).
template <class T>
concept Node = requires {
  { T::op } -> std::convertible_to<Op>;
  { T::cipher } -> std::convertible_to<bool>;
};

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

struct CipherLeaf {
  static constexpr Op op = Op::cipher;
  static constexpr bool cipher = true;
  static constexpr int parts = 2;
  static constexpr int depth = 0, key_switches = 0, ct_products = 0;
  static constexpr bool elementwise = true, static_counts = true;
  std::shared_ptr<const ckks::Ciphertext> value;
};

struct PlainLeaf {
  static constexpr Op op = Op::plain;
  static constexpr bool cipher = false;
  static constexpr int parts = 0;
  static constexpr int depth = 0, key_switches = 0, ct_products = 0;
  static constexpr bool elementwise = true, static_counts = true;
  std::shared_ptr<const ckks::Plaintext> value;
};

// A real or complex constant in every slot; a product with it is encoded at the level's primes (one level).
struct ConstLeaf {
  static constexpr Op op = Op::constant;
  static constexpr bool cipher = false;
  static constexpr int parts = 0;
  static constexpr int depth = 0, key_switches = 0, ct_products = 0;
  static constexpr bool elementwise = true, static_counts = true;
  std::complex<double> value = 0;
};

// An integer in every slot: a product with it needs no encoding and no level (evaluator.multiply_integer).
struct IntLeaf {
  static constexpr Op op = Op::integer;
  static constexpr bool cipher = false, raises_scale = false;
  static constexpr int parts = 0;
  static constexpr int depth = 0, key_switches = 0, ct_products = 0;
  static constexpr bool elementwise = true, static_counts = true;
  std::int64_t value = 0;
};

// --- Slot-wise arithmetic ---

template <Node L, Node R, Op Kind>
struct Sum {  // add or sub: a 3-part operand stays 3-part (lazy relinearization)
  static_assert(L::cipher || R::cipher, "cerium::expr: + and - need at least one ciphertext operand");
  static constexpr Op op = Kind;
  static constexpr bool cipher = true;
  static constexpr int parts = std::max(L::parts, R::parts);
  static constexpr int depth = std::max(L::depth, R::depth);
  static constexpr int key_switches = L::key_switches + R::key_switches;
  static constexpr int ct_products = L::ct_products + R::ct_products;
  static constexpr bool elementwise = L::elementwise && R::elementwise;
  static constexpr bool static_counts = L::static_counts && R::static_counts;
  L lhs;
  R rhs;
};
template <Node L, Node R>
using Add = Sum<L, R, Op::add>;
template <Node L, Node R>
using Sub = Sum<L, R, Op::sub>;

template <CipherNode E>
struct Negate {
  static constexpr Op op = Op::negate;
  static constexpr bool cipher = true;
  static constexpr int parts = E::parts;
  static constexpr int depth = E::depth, key_switches = E::key_switches, ct_products = E::ct_products;
  static constexpr bool elementwise = E::elementwise, static_counts = E::static_counts;
  E child;
};

// A product. Of two ciphertexts: each operand is relinearized first if it has 3 parts, and the tensor product
// (3 parts) is left for the consumer to relinearize. By a plaintext or constant: parts are kept.
template <Node L, Node R>
struct Multiply {
  static_assert(L::cipher || R::cipher, "cerium::expr: * needs at least one ciphertext operand");
  static constexpr bool both = L::cipher && R::cipher;
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
  L lhs;
  R rhs;
};

// --- Operations that need 2 parts: a 3-part child is relinearized first ---

template <Node E, Op Kind, int OwnSwitches, bool KeepsElementwise>
struct Unary2 {
  static_assert(E::cipher, "cerium::expr: this operation needs a ciphertext operand, not a plaintext or constant");
  static constexpr Op op = Kind;
  static constexpr bool cipher = true;
  static constexpr int parts = 2;
  static constexpr int depth = E::depth, ct_products = E::ct_products;
  static constexpr int key_switches = E::key_switches + detail::pending_relin<E> + OwnSwitches;
  static constexpr bool elementwise = KeepsElementwise && E::elementwise && E::parts == 2;
  static constexpr bool static_counts = E::static_counts;
};

template <Node E>
struct Rotate : Unary2<E, Op::rotate, 1, false> {
  E child;
  std::int64_t steps = 0;
};

template <Node E>
struct Conjugate : Unary2<E, Op::conjugate, 1, false> {
  E child;
};

template <Node E>
struct Rescale : Unary2<E, Op::rescale, 0, false> {
  E child;
};

template <Node E>
struct Relinearize : Unary2<E, Op::relinearize, 0, true> {
  E child;
};

template <Node E>
struct LevelDown : Unary2<E, Op::level_down, 0, true> {
  E child;
  int level = 0;
};

// sum_k rotate(child, steps[k]): the child is evaluated once and all N rotations share its ModUp.
template <Node E, std::size_t N>
struct SumRotations : Unary2<E, Op::sum_rotations, static_cast<int>(N), false> {
  E child;
  std::array<std::int64_t, N> steps{};
};

}  // namespace cerium::expr
