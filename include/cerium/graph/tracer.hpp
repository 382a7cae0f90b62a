#pragma once
// Tracing: user code written against the operations below records a graph instead of computing. The same code
// runs eagerly on ciphertexts with graph::Eager (graph/eager.hpp), which has the same operations: write a model as
// a template over the "ops" object and its Value type, and call it with either.
//
//   graph::Tracer t(context);
//   auto x = t.input("x", slots);
//   auto y = t.multiply(x, x) + t.rotate(x, 1);    // operators work on traced values too
//   t.output(y, "y");
//   graph::Program program = std::move(t).finish();
//
// Operands are checked as they are traced (another tracer's value, slot counts that differ, a plaintext period
// that does not divide the slots, a constant that is not finite): the error names the node being traced.
// Levels, scales and bootstraps are decided later by the planner (graph/planner.hpp).

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/graph/node.hpp"
#include "cerium/graph/program.hpp"

namespace cerium::graph {

class Tracer;

// A traced ciphertext: a handle to a node of the tracer that made it (cheap to copy).
class Value {
 public:
  Value() = default;
  NodeId id() const { return id_; }             // the node it stands for
  std::size_t slots() const { return slots_; }  // n, its slot count
  Tracer* tracer() const { return tracer_; }    // the tracer that made it; null for a default-constructed value

 private:
  friend class Tracer;
  Value(Tracer* tracer, NodeId id, std::size_t slots) : tracer_(tracer), id_(id), slots_(slots) {}
  Tracer* tracer_ = nullptr;
  NodeId id_ = 0;
  std::size_t slots_ = 0;
};

// Records a Program from the operations called on it (see the file comment). Not copyable: values point to it.
class Tracer {
 public:
  using Value = graph::Value;  // what the operations take and return

  // A tracer for a program over context.
  explicit Tracer(ckks::ContextPtr context);
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  const ckks::ContextPtr& context() const { return program_.context(); }  // the program's context

  // A ciphertext input of `slots` slots (0: N/2) arriving at `level` (-1: the top level).
  Value input(std::string name, std::size_t slots = 0, int level = -1);

  // Sums and differences of traced ciphertexts, and the negation.
  Value add(Value a, Value b);
  Value sub(Value a, Value b);
  Value negate(Value a);
  // Products: two ciphertexts (relinearized and rescaled), a ciphertext and a plaintext vector, a real constant.
  Value multiply(Value a, Value b);
  Value multiply(Value a, const PlainVector& p);
  Value multiply(Value a, double constant);
  // sum_i a[i] b[i]: the products' tensors added, then one relinearization and one rescale (one key switch for
  // the whole sum: an attention's dot products). MismatchError unless a and b have the same number (at least
  // one) of values of one slot count.
  Value product_sum(std::span<const Value> a, std::span<const Value> b);
  // Sums with a plaintext vector or a constant (a subtracted constant is added negated).
  Value add(Value a, const PlainVector& p);
  Value add(Value a, std::complex<double> constant);
  Value add(Value a, double constant) { return add(a, std::complex<double>(constant, 0)); }
  Value sub(Value a, double constant) { return add(a, std::complex<double>(-constant, 0)); }
  // Slots rotated left by `steps`, taken mod the slots (0 records nothing; a turn of a value traced before returns
  // that node); complex conjugation of the slots.
  Value rotate(Value a, std::int64_t steps);
  Value conjugate(Value a);
  // A bootstrap pinned here (the planner keeps it and places others only where levels run out).
  Value bootstrap(Value a);
  // Marks a as a result of the program, named `name`.
  void output(Value a, std::string name);

  // The node just traced gets a label for explain() and errors.
  void label(Value a, std::string name);
  // a and every value between `from` and it are never bootstrapped (Program::keep_exact): for values whose
  // slots span a range too wide for a bootstrap's absolute error (graph::keep_exact in graph/circuits.hpp).
  void keep_exact(Value a, std::span<const Value> from);
  // a and every value between `from` and it are bootstrapped precisely where the planner refreshes them
  // (Program::bootstrap_precisely; graph::bootstrap_precisely in graph/circuits.hpp).
  void bootstrap_precisely(Value a, std::span<const Value> from);

  // The traced program (the tracer is spent).
  Program finish() &&;

 private:
  Value record(Node node, const char* operation);
  void check(const Value& a, const char* operation) const;
  // from's ids, each checked.
  std::vector<NodeId> ids_of(std::span<const Value> from, const char* operation) const;

  Program program_;
  std::unordered_map<std::uint64_t, NodeId> rotations_;  // (value, steps) -> the rotation traced for them
};

// The tracer that records an operator's result: MismatchError for a value that was never traced (a
// default-constructed Value has no tracer to record on).
Tracer& tracer_of(const Value& a, const char* operation);

// Operators on traced values, recorded on their tracer.
inline Value operator+(Value a, Value b) { return tracer_of(a, "operator+").add(a, b); }
inline Value operator-(Value a, Value b) { return tracer_of(a, "operator-").sub(a, b); }
inline Value operator*(Value a, Value b) { return tracer_of(a, "operator*").multiply(a, b); }
inline Value operator-(Value a) { return tracer_of(a, "operator-").negate(a); }
inline Value operator*(Value a, double c) { return tracer_of(a, "operator*").multiply(a, c); }
inline Value operator*(double c, Value a) { return tracer_of(a, "operator*").multiply(a, c); }
inline Value operator+(Value a, double c) { return tracer_of(a, "operator+").add(a, c); }
inline Value operator*(Value a, const PlainVector& p) { return tracer_of(a, "operator*").multiply(a, p); }
inline Value operator+(Value a, const PlainVector& p) { return tracer_of(a, "operator+").add(a, p); }
inline Value operator-(Value a, double c) { return tracer_of(a, "operator-").sub(a, c); }

// The eDSL's spelling on traced values, so an expression such as rescale(x * w + rotate(x, 1)) traces as written:
// rotations and conjugations record nodes; rescale and relinearize are the planner's (every product is
// relinearized and rescaled), so they return their operand.
inline Value rotate(Value a, std::int64_t steps) { return tracer_of(a, "rotate").rotate(a, steps); }
inline Value conjugate(Value a) { return tracer_of(a, "conjugate").conjugate(a); }
inline Value rescale(Value a) { return a; }
inline Value relinearize(Value a) { return a; }

}  // namespace cerium::graph
