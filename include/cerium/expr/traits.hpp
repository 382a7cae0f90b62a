#pragma once
// Compile-time facts about an expression type, usable in static_assert and if constexpr. The totals count what
// the planner does for the whole expression: its final relinearization included.

#include "cerium/expr/node.hpp"

namespace cerium::expr {

// Levels eval(E) consumes: the multiplications on its longest path.
template <Node E>
inline constexpr int depth_v = E::depth;

// Key switches of eval(E) before hoisting: rotations, conjugations and relinearizations. Rotations of one leaf
// still cost one key switch each; hoisting shares their ModUps (plan/explain.hpp reports those).
template <Node E>
inline constexpr int key_switches_v = E::key_switches + detail::pending_relin<E>;

// Ciphertext-ciphertext products of eval(E).
template <Node E>
inline constexpr int ct_products_v = E::ct_products;

// Whether eval(E) is one slot-wise pass over the limbs: no key switch, no rescale, no ciphertext product.
template <Node E>
inline constexpr bool elementwise_v = E::elementwise;

// Whether E involves a ciphertext (false only for plaintext and constant leaves).
template <Node E>
inline constexpr bool is_cipher_v = E::cipher;

// False when a runtime-length node (sum over a vector, runtime steps) makes the counts above per-term counts.
template <Node E>
inline constexpr bool static_counts_v = E::static_counts;

// Whether E is an expression node (any type: false where Node<E> does not hold).
template <class E>
inline constexpr bool is_node_v = Node<E>;

}  // namespace cerium::expr
