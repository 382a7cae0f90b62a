#pragma once
// A structural fingerprint of an expression: the same string for the same computation on the same operands
// (leaves by the address of their ciphertext or plaintext, constants and steps by value), so that a
// subexpression written twice can be evaluated once (plan/lower.hpp, common subexpressions).

#include <cstdint>
#include <cstdio>
#include <string>

#include "cerium/expr/node.hpp"
#include "cerium/expr/polynomial.hpp"
#include "cerium/expr/runtime_nodes.hpp"

namespace cerium::plan {

namespace fingerprint_detail {
inline void append(std::string& out, double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%a,", v);  // exact: hexadecimal floating point
  out += buffer;
}
inline void append(std::string& out, const void* p) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "@%p", p);
  out += buffer;
}
}  // namespace fingerprint_detail

// Appends e's fingerprint to out: the op, the leaf's address or value, the steps, level or coefficients, then the
// children's, bracketed.
template <expr::Node E>
void append_fingerprint(const E& e, std::string& out) {
  using expr::Op;
  using fingerprint_detail::append;
  out += std::to_string(static_cast<int>(E::op));
  if constexpr (E::op == Op::cipher || E::op == Op::plain) {
    append(out, static_cast<const void*>(e.value.get()));
  } else if constexpr (E::op == Op::constant) {
    append(out, e.value.real());
    append(out, e.value.imag());
  } else if constexpr (E::op == Op::integer) {
    out += std::to_string(e.value) + ",";
  }
  if constexpr (requires { e.steps.size(); }) {  // sum_rotations: a list
    for (const std::int64_t s : e.steps) out += std::to_string(s) + ",";
  } else if constexpr (requires { e.steps; }) {  // rotate: one step
    out += std::to_string(e.steps) + ",";
  }
  if constexpr (requires { e.level; }) out += "L" + std::to_string(e.level);
  if constexpr (requires { e.coefficients; }) {
    for (const double c : e.coefficients) append(out, c);
  }
  if constexpr (E::op == Op::sum) {
    out += '[';
    for (const auto& term : e.terms) append_fingerprint(term, out);
    out += ']';
  } else if constexpr (requires { e.lhs; }) {
    out += '(';
    append_fingerprint(e.lhs, out);
    out += ',';
    append_fingerprint(e.rhs, out);
    out += ')';
  } else if constexpr (requires { e.child; }) {
    out += '(';
    append_fingerprint(e.child, out);
    out += ')';
  }
}

// e's fingerprint (the header comment): equal strings, the same computation on the same operands.
template <expr::Node E>
std::string fingerprint(const E& e) {
  std::string out;
  append_fingerprint(e, out);
  return out;
}

}  // namespace cerium::plan
