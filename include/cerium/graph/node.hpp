#pragma once
// The nodes of an encrypted program: what a traced operation is, before any level, scale or bootstrap is decided.
//
// A program is written at the level of messages: add, multiply, rotate, ... with ciphertext values, plaintext
// vectors and constants. Rescales, level drops and bootstraps are not nodes the user writes: the planner
// (graph/planner.hpp) decides them. A bootstrap the user pins by hand is a node.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cerium::graph {

// A node's index in its program, in trace order.
using NodeId = std::uint32_t;
// A ciphertext's slots as plaintext values (a program's sample inputs, a simulation's node values).
using SlotValues = std::vector<std::complex<double>>;

// What a node computes; the planner adds rescales, level drops and bootstraps around it.
enum class Op : std::uint8_t {
  input,              // a ciphertext the program receives
  add,                // two ciphertexts
  sub,
  negate,
  multiply,           // two ciphertexts (relinearized and rescaled)
  product_sum,        // sum_i a_i b_i over pairs of ciphertexts (inputs a_0, b_0, a_1, b_1, ...): the products' tensors
                      // added, then one relinearization and one rescale
  multiply_plain,     // a ciphertext times a plaintext vector (rescaled)
  multiply_constant,  // a ciphertext times a real constant (rescaled)
  add_plain,          // a ciphertext plus a plaintext vector
  add_constant,       // a ciphertext plus a complex constant
  rotate,             // slots rotated left by `steps`
  conjugate,
  bootstrap,          // pinned by the user; the planner adds its own where levels run out
  output,             // a result the program returns
};

// The operation's name: "multiply_plain" for Op::multiply_plain.
const char* to_string(Op op);
// Levels an operation spends: its rescale (1 for the products, 0 otherwise; a bootstrap is handled apart).
int level_cost(Op op);
// Key switches an operation performs (relinearization or a rotation's), for the plan's cost figures.
int key_switches(Op op);

// A plaintext operand by value: `period` slot values that repeat over the slots (a periodic vector is stored
// once: compressed), encoded at the level and scale the plan needs when the program runs. Or generated: a function
// that makes the period's values when they are encoded (a layer's diagonals made from its weights on demand, so a
// model holds its weights once). Shared, immutable.
class PlainVector {
 public:
  using Values = std::vector<std::complex<double>>;  // slot values
  using Generator = std::function<Values()>;         // makes the period's values on demand

  PlainVector() = default;
  // Stored values: they are the period.
  explicit PlainVector(Values period_values);
  explicit PlainVector(const std::vector<double>& period_values);
  // `period` values from `generate` (called at each expansion; it must return `period` finite values).
  PlainVector(std::size_t period, Generator generate);

  bool empty() const { return period_ == 0; }               // no values: default-constructed
  std::size_t period() const { return period_; }            // values per period; divides the slot count
  bool generated() const { return generator_ != nullptr; }  // values made on demand
  // Bytes held until encoding: the values, or nothing for a generated vector.
  std::size_t stored_bytes() const { return values_ ? values_->size() * sizeof(std::complex<double>) : 0; }
  // Identifies the storage shared by copies (the same vector traced twice is stored once).
  const void* storage() const { return values_ ? static_cast<const void*>(values_.get()) : generator_.get(); }
  // The slot vector over `slots` slots: the period tiled. InvalidArgument unless the period divides slots.
  Values expanded(std::size_t slots) const;

 private:
  std::shared_ptr<const Values> values_;
  std::shared_ptr<const Generator> generator_;
  std::size_t period_ = 0;
};

// One traced operation with its operands (see the file comment); only the fields of its op are used.
struct Node {
  Op op = Op::input;                 // what it computes
  std::vector<NodeId> inputs;        // ciphertext operands, in order
  std::size_t slots = 0;             // of the ciphertext it produces (or receives, for output)
  std::int64_t steps = 0;            // rotate
  std::complex<double> constant{};   // multiply_constant (real part), add_constant
  PlainVector plain;                 // multiply_plain, add_plain
  int input_level = -1;              // input: the level it arrives at (-1: the top level)
  std::string name;                  // input and output names; a label for any other node
  // Never bootstrapped by the planner: a bootstrap's error is absolute, and a value whose slots span a wide range
  // (a softmax denominator over rows of very different totals) would carry it as a large relative error.
  bool keep_exact = false;
  // Refreshed precisely when the planner bootstraps it (graph::ChainOps::bootstrap_precise: a second bootstrap
  // takes out the first's error): for values whose small slots matter as much as the large ones, where one
  // bootstrap's absolute error is too large a relative error and no level budget lets the value stay exact.
  bool precise_bootstrap = false;
};

// How many bits a precise bootstrap's correction gains (its error read that much larger, bootstrapped and taken
// off): the first bootstrap's error must stay within the bootstrapper's range when so enlarged (a bootstrap keeps
// at least 13 bits relative to its range even at a message bound of 16).
inline constexpr int precise_bootstrap_bits = 10;
// The shift of a precise bootstrap's correction for a value bootstrapped with `shift` (graph::bootstrap_shift):
// precise_bootstrap_bits lower, within what the bootstrapper folds into EvalMod (16 bits).
constexpr int precise_correction_shift(int shift) {
  return shift - precise_bootstrap_bits < -16 ? -16 : shift - precise_bootstrap_bits;
}

}  // namespace cerium::graph
