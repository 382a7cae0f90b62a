#pragma once
// The nodes of an encrypted program: what a traced operation is, before any level, scale or bootstrap is decided.
//
// A program is written at the level of messages: add, multiply, rotate, ... with ciphertext values, plaintext
// vectors and constants. Rescales, level drops and bootstraps are not nodes the user writes: the planner
// (graph/planner.hpp) decides them. A bootstrap the user pins by hand is a node.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cerium::graph {

using NodeId = std::uint32_t;

enum class Op : std::uint8_t {
  input,              // a ciphertext the program receives
  add,                // two ciphertexts
  sub,
  negate,
  multiply,           // two ciphertexts (relinearized and rescaled)
  multiply_plain,     // a ciphertext times a plaintext vector (rescaled)
  multiply_constant,  // a ciphertext times a real constant (rescaled)
  add_plain,          // a ciphertext plus a plaintext vector
  add_constant,       // a ciphertext plus a complex constant
  rotate,             // slots rotated left by `steps`
  conjugate,
  bootstrap,          // pinned by the user; the planner adds its own where levels run out
  output,             // a result the program returns
};

const char* to_string(Op op);
// Levels an operation spends: its rescale (1 for the products, 0 otherwise; a bootstrap is handled apart).
int level_cost(Op op);
// Key switches an operation performs (relinearization or a rotation's), for the plan's cost figures.
int key_switches(Op op);

// A plaintext operand by value: `period` slot values that repeat over the slots (a periodic vector is stored
// once: compressed), encoded at the level and scale the plan needs when the program runs. Shared, immutable.
class PlainVector {
 public:
  PlainVector() = default;
  explicit PlainVector(std::vector<std::complex<double>> period_values);
  explicit PlainVector(const std::vector<double>& period_values);

  bool empty() const { return values_ == nullptr; }
  std::size_t period() const { return values_ ? values_->size() : 0; }
  const std::vector<std::complex<double>>& values() const { return *values_; }
  // The slot vector over `slots` slots: the period tiled. InvalidArgument unless the period divides slots.
  std::vector<std::complex<double>> expanded(std::size_t slots) const;

 private:
  std::shared_ptr<const std::vector<std::complex<double>>> values_;
};

struct Node {
  Op op = Op::input;
  std::vector<NodeId> inputs;        // ciphertext operands, in order
  std::size_t slots = 0;             // of the ciphertext it produces (or receives, for output)
  std::int64_t steps = 0;            // rotate
  std::complex<double> constant{};   // multiply_constant (real part), add_constant
  PlainVector plain;                 // multiply_plain, add_plain
  int input_level = -1;              // input: the level it arrives at (-1: the top level)
  std::string name;                  // input and output names; a label for any other node
};

}  // namespace cerium::graph
