#pragma once
// Building expressions: leaves (lift), the operators + - * and unary -, and the named operations. Nothing is
// computed here; plan/eval.hpp evaluates. Misuse is rejected at compile time with a message naming the rule:
// rotating (or conjugating, rescaling, ...) a plaintext or constant, and arithmetic between two plain operands
// (fold those in the clear, then encode).

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/core/check.hpp"
#include "cerium/expr/node.hpp"
#include "cerium/expr/polynomial.hpp"
#include "cerium/expr/runtime_nodes.hpp"

namespace cerium::expr {

// --- Leaves: copy, move or share the value into an owning handle ---
// Lift a ciphertext once and reuse the leaf: rotations of one leaf share a ModUp (the planner groups them by it).
inline CipherLeaf lift(std::shared_ptr<const ckks::Ciphertext> ct) { return CipherLeaf{std::move(ct)}; }
inline CipherLeaf lift(ckks::Ciphertext&& ct) {
  return CipherLeaf{std::make_shared<const ckks::Ciphertext>(std::move(ct))};
}
inline CipherLeaf lift(const ckks::Ciphertext& ct) {
  return CipherLeaf{std::make_shared<const ckks::Ciphertext>(ct.clone())};
}
inline PlainLeaf lift(std::shared_ptr<const ckks::Plaintext> pt) { return PlainLeaf{std::move(pt)}; }
inline PlainLeaf lift(ckks::Plaintext&& pt) { return PlainLeaf{std::make_shared<const ckks::Plaintext>(std::move(pt))}; }
inline PlainLeaf lift(const ckks::Plaintext& pt) {
  return PlainLeaf{std::make_shared<const ckks::Plaintext>(pt.clone())};
}
inline ConstLeaf constant(double value) { return ConstLeaf{value}; }
inline ConstLeaf constant(std::complex<double> value) { return ConstLeaf{value}; }
// An integer multiplier costs no level (x * integer(3)); `x * 3` is the constant 3.0, encoded at the level's primes.
inline IntLeaf integer(std::int64_t value) { return IntLeaf{value}; }

namespace detail {
template <class L, class R>
constexpr void require_cipher_operand() {
  static_assert(L::cipher || R::cipher,
                "cerium::expr: both operands are plain (plaintext or constant); an encrypted expression needs a "
                "ciphertext operand: combine plain values in the clear before encoding");
}
}  // namespace detail

// --- Arithmetic (found by argument-dependent lookup on the node types) ---

// lhs + rhs, slot by slot; a 3-part operand stays 3-part (one relinearization for the whole sum).
template <Node L, Node R>
auto operator+(L lhs, R rhs) {
  detail::require_cipher_operand<L, R>();
  if constexpr (L::cipher || R::cipher) return Add<L, R>{std::move(lhs), std::move(rhs)};
}
// lhs - rhs, slot by slot, as operator+.
template <Node L, Node R>
auto operator-(L lhs, R rhs) {
  detail::require_cipher_operand<L, R>();
  if constexpr (L::cipher || R::cipher) return Sub<L, R>{std::move(lhs), std::move(rhs)};
}
// lhs * rhs, slot by slot: of two ciphertexts a 3-part tensor product that its consumer relinearizes; by a
// plaintext or constant, parts kept. The scale grows by the other operand's (not by an integer()): rescale it.
template <Node L, Node R>
auto operator*(L lhs, R rhs) {
  detail::require_cipher_operand<L, R>();
  if constexpr (L::cipher || R::cipher) return Multiply<L, R>{std::move(lhs), std::move(rhs)};
}
// -e, slot by slot (a ciphertext expression only).
template <Node E>
auto operator-(E e) {
  static_assert(E::cipher, "cerium::expr: negating a plain operand; negate it in the clear");
  if constexpr (E::cipher) return Negate<E>{std::move(e)};
}

// A double or complex operand is a constant in every slot (ConstLeaf): a product by it costs a level, where
// integer() does not.
template <Node E>
auto operator+(E e, double c) { return std::move(e) + ConstLeaf{c}; }
template <Node E>
auto operator+(double c, E e) { return ConstLeaf{c} + std::move(e); }
template <Node E>
auto operator-(E e, double c) { return std::move(e) - ConstLeaf{c}; }
template <Node E>
auto operator-(double c, E e) { return ConstLeaf{c} - std::move(e); }
template <Node E>
auto operator*(E e, double c) { return std::move(e) * ConstLeaf{c}; }
template <Node E>
auto operator*(double c, E e) { return ConstLeaf{c} * std::move(e); }
template <Node E>
auto operator+(E e, std::complex<double> c) { return std::move(e) + ConstLeaf{c}; }
template <Node E>
auto operator+(std::complex<double> c, E e) { return ConstLeaf{c} + std::move(e); }
template <Node E>
auto operator-(E e, std::complex<double> c) { return std::move(e) - ConstLeaf{c}; }
template <Node E>
auto operator-(std::complex<double> c, E e) { return ConstLeaf{c} - std::move(e); }
template <Node E>
auto operator*(E e, std::complex<double> c) { return std::move(e) * ConstLeaf{c}; }
template <Node E>
auto operator*(std::complex<double> c, E e) { return ConstLeaf{c} * std::move(e); }

// --- Named operations on ciphertext expressions ---

// The compile-time error for a named operation on a plaintext or constant (`#undef` at the end of this header).
#define CERIUM_EXPR_REQUIRE_CIPHER(what)                                                                        \
  static_assert(E::cipher, "cerium::expr::" what ": the operand is a plaintext or constant; only ciphertext " \
                           "expressions can be " what "d (do it in the clear before encoding)")

// Slots rotated left by `steps` (right for negative steps); one key switch (the rotation's Galois key). Rotations
// of one leaf share its ModUp (hoisting).
template <Node E>
auto rotate(E e, std::int64_t steps) {
  CERIUM_EXPR_REQUIRE_CIPHER("rotate");
  if constexpr (E::cipher) return Rotate<E>{{}, std::move(e), steps};
}
// The complex conjugate of every slot; one key switch (the conjugation's Galois key).
template <Node E>
auto conjugate(E e) {
  CERIUM_EXPR_REQUIRE_CIPHER("conjugate");
  if constexpr (E::cipher) return Conjugate<E>{{}, std::move(e)};
}
// Divides by the level's last prime P (scale / P): one level down, the level a product costs. A 3-part operand is
// relinearized in the same key switch.
template <Node E>
auto rescale(E e) {
  CERIUM_EXPR_REQUIRE_CIPHER("rescale");
  if constexpr (E::cipher) return Rescale<E>{{}, std::move(e)};
}
// A 3-part operand back to 2 parts (one key switch); a 2-part one is left as it is. Rarely needed: every
// consumer that needs 2 parts relinearizes itself.
template <Node E>
auto relinearize(E e) {
  CERIUM_EXPR_REQUIRE_CIPHER("relinearize");
  if constexpr (E::cipher) return Relinearize<E>{{}, std::move(e)};
}
// Drops limbs down to `level` (exact).
template <Node E>
auto level_down(E e, int level) {
  static_assert(E::cipher, "cerium::expr::level_down: the operand is a plaintext or constant; encode it at the "
                           "level wanted instead");
  if constexpr (E::cipher) return LevelDown<E>{{}, std::move(e), level};
}
// sum over k of rotate(e, steps_k), e evaluated once, one ModUp shared by all rotations.
template <Node E, std::integral... S>
auto sum_rotations(E e, S... steps) {
  CERIUM_EXPR_REQUIRE_CIPHER("rotate");
  static_assert(sizeof...(S) > 0, "cerium::expr::sum_rotations: give at least one step");
  if constexpr (E::cipher)
    return SumRotations<E, sizeof...(S)>{{}, std::move(e), {static_cast<std::int64_t>(steps)...}};
}

// Steps known at run time; InvalidArgument for an empty list.
template <Node E>
auto sum_rotations(E e, std::vector<std::int64_t> steps) {
  CERIUM_EXPR_REQUIRE_CIPHER("rotate");
  require(!steps.empty(), "cerium::expr::sum_rotations: the list of steps is empty");
  if constexpr (E::cipher) return SumRotationsOf<E>{{}, std::move(e), std::move(steps)};
}

// sum_i terms[i] over a runtime number of terms of one expression type; InvalidArgument for no terms.
template <Node E>
auto sum(std::vector<E> terms) {
  static_assert(E::cipher, "cerium::expr::sum: the terms are plaintexts or constants; sum them in the clear");
  require(!terms.empty(), "cerium::expr::sum: no terms to sum");
  if constexpr (E::cipher) return SumOf<E>{std::move(terms)};
}

// p(e) = sum_k coefficients[k] e^k, degree N - 1 (see expr/polynomial.hpp for the depth and the scales).
template <Node E, std::size_t N>
auto polynomial(E e, const std::array<double, N>& coefficients) {
  static_assert(E::cipher, "cerium::expr::polynomial: the argument is a plaintext or constant; evaluate it in the "
                           "clear");
  static_assert(N >= 2, "cerium::expr::polynomial: give at least the coefficients c_0 and c_1");
  if constexpr (E::cipher && N >= 2) return Polynomial<E, N - 1>{std::move(e), coefficients};
}

#undef CERIUM_EXPR_REQUIRE_CIPHER

}  // namespace cerium::expr
