#pragma once
// The plaintext twin of graph::Tracer and graph::Eager: every operation on slot vectors of doubles, so the same
// model code gives the reference values (its polynomial activations included) to compare a decryption with.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cerium/graph/node.hpp"

namespace cerium::graph {

struct PlainOps {
  using Value = std::vector<std::complex<double>>;
  using Complex = std::complex<double>;
  std::vector<Value> outputs;
  std::vector<std::string> output_names;

  template <class F>
  static Value map(const Value& a, F f) {
    Value out(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = f(i, a[i]);
    return out;
  }
  Value add(const Value& a, const Value& b) const { return map(a, [&](std::size_t i, Complex x) { return x + b[i]; }); }
  Value sub(const Value& a, const Value& b) const { return map(a, [&](std::size_t i, Complex x) { return x - b[i]; }); }
  Value negate(const Value& a) const { return map(a, [](std::size_t, Complex x) { return -x; }); }
  Value multiply(const Value& a, const Value& b) const {
    return map(a, [&](std::size_t i, Complex x) { return x * b[i]; });
  }
  Value multiply(const Value& a, const PlainVector& p) const { return multiply(a, p.expanded(a.size())); }
  Value multiply(const Value& a, double c) const { return map(a, [&](std::size_t, Complex x) { return x * c; }); }
  Value add(const Value& a, const PlainVector& p) const { return add(a, p.expanded(a.size())); }
  Value add(const Value& a, Complex c) const { return map(a, [&](std::size_t, Complex x) { return x + c; }); }
  Value add(const Value& a, double c) const { return add(a, Complex(c, 0)); }
  Value sub(const Value& a, double c) const { return add(a, Complex(-c, 0)); }
  Value rotate(const Value& a, std::int64_t steps) const {
    const auto n = static_cast<std::int64_t>(a.size());
    return map(a, [&](std::size_t i, Complex) {
      return a[static_cast<std::size_t>(((static_cast<std::int64_t>(i) + steps) % n + n) % n)];
    });
  }
  Value conjugate(const Value& a) const { return map(a, [](std::size_t, Complex x) { return std::conj(x); }); }
  Value bootstrap(const Value& a) const { return a; }
  void output(const Value& a, std::string name) {
    outputs.push_back(a);
    output_names.push_back(std::move(name));
  }
  void label(const Value&, const std::string&) const {}
};

}  // namespace cerium::graph
