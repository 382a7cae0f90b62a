#pragma once
// The plaintext twin of graph::Tracer and graph::Eager: every operation on slot vectors of doubles, so the same
// model code gives the reference values (its polynomial activations included) to compare a decryption with.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/graph/node.hpp"

namespace cerium::graph {

// The ops object on plaintext slot vectors (see the file comment): a model's reference values.
struct PlainOps {
  using Value = std::vector<std::complex<double>>;  // the slot values
  using Complex = std::complex<double>;             // a slot value
  std::vector<Value> outputs;                       // what output() kept, in order
  std::vector<std::string> output_names;            // their names

  // f(i, a[i]) for every slot i.
  template <class F>
  static Value map(const Value& a, F f) {
    Value out(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = f(i, a[i]);
    return out;
  }
  // The operations of graph::Tracer on slot values: sums and differences, and the negation.
  Value add(const Value& a, const Value& b) const { return map(a, [&](std::size_t i, Complex x) { return x + b[i]; }); }
  Value sub(const Value& a, const Value& b) const { return map(a, [&](std::size_t i, Complex x) { return x - b[i]; }); }
  Value negate(const Value& a) const { return map(a, [](std::size_t, Complex x) { return -x; }); }
  // Products slot by slot: with another vector, a plaintext vector (expanded), or a constant.
  Value multiply(const Value& a, const Value& b) const {
    return map(a, [&](std::size_t i, Complex x) { return x * b[i]; });
  }
  Value multiply(const Value& a, const PlainVector& p) const { return multiply(a, p.expanded(a.size())); }
  // sum_i a[i] b[i] slot by slot (graph::Tracer::product_sum).
  Value product_sum(std::span<const Value> a, std::span<const Value> b) const {
    require<MismatchError>(!a.empty() && a.size() == b.size(), "product_sum: {} and {} factors", a.size(), b.size());
    Value out(a.front().size());
    for (std::size_t t = 0; t < a.size(); ++t) {
      for (std::size_t i = 0; i < out.size(); ++i) out[i] += a[t][i] * b[t][i];
    }
    return out;
  }
  Value multiply(const Value& a, double c) const { return map(a, [&](std::size_t, Complex x) { return x * c; }); }
  // Sums with a plaintext vector or a constant (a subtracted constant is added negated).
  Value add(const Value& a, const PlainVector& p) const { return add(a, p.expanded(a.size())); }
  Value add(const Value& a, Complex c) const { return map(a, [&](std::size_t, Complex x) { return x + c; }); }
  Value add(const Value& a, double c) const { return add(a, Complex(c, 0)); }
  Value sub(const Value& a, double c) const { return add(a, Complex(-c, 0)); }
  // Slots rotated left by `steps`, taken mod the slots.
  Value rotate(const Value& a, std::int64_t steps) const {
    const auto n = static_cast<std::int64_t>(a.size());
    return map(a, [&](std::size_t i, Complex) {
      return a[static_cast<std::size_t>(((static_cast<std::int64_t>(i) + steps) % n + n) % n)];
    });
  }
  // Complex conjugation of the slots.
  Value conjugate(const Value& a) const { return map(a, [](std::size_t, Complex x) { return std::conj(x); }); }
  // The identity: a bootstrap refreshes levels, not values.
  Value bootstrap(const Value& a) const { return a; }
  // Keeps a as a result named `name`.
  void output(const Value& a, std::string name) {
    outputs.push_back(a);
    output_names.push_back(std::move(name));
  }
  // Labels are for traced graphs: nothing to do here.
  void label(const Value&, const std::string&) const {}
};

}  // namespace cerium::graph
