#include "cerium/graph/tracer.hpp"

#include <bit>
#include <cmath>
#include <utility>

#include "cerium/core/check.hpp"

namespace cerium::graph {

Tracer::Tracer(ckks::ContextPtr context) : program_(std::move(context)) {
  require<MismatchError>(program_.context() != nullptr, "tracer: no context given");
}

void Tracer::check(const Value& a, const char* operation) const {
  require<MismatchError>(a.tracer_ == this,
                         "tracing {} at node {}: an operand was {} (use values of the tracer that traces)", operation,
                         program_.size(), a.tracer_ == nullptr ? "never traced" : "traced by another tracer");
  require(a.id_ < program_.size() && program_.node(a.id_).op != Op::output,
          "tracing {} at node {}: an operand is not a value of this program", operation, program_.size());
}

Value Tracer::record(Node node, const char* operation) {
  const std::size_t slots = node.slots;
  for (const NodeId input : node.inputs) {
    if (program_.node(input).slots == slots) continue;  // (the message's describe() only on failure)
    require<MismatchError>(false,
                           "tracing {} at node {}: {} has {} slots and the operation {}; bring them to one slot "
                           "count first",
                           operation, program_.size(), program_.describe(input), program_.node(input).slots, slots);
  }
  const NodeId id = program_.append(std::move(node));
  return Value(this, id, slots);
}

Tracer& tracer_of(const Value& a, const char* operation) {
  require<MismatchError>(a.tracer() != nullptr,
                         "tracing {}: the operand was never traced (a default-constructed graph::Value); make values "
                         "with Tracer::input and the tracer's operations",
                         operation);
  return *a.tracer();
}

Value Tracer::input(std::string name, std::size_t slots, int level) {
  // finish() moved the program out: the tracer is spent.
  require(program_.context() != nullptr, "tracing input '{}': this tracer is spent (finish() was called)", name);
  const auto& context = *program_.context();
  if (slots == 0) slots = context.parameters().max_slots();
  require(std::has_single_bit(slots) && slots <= context.parameters().max_slots(),
          "tracing input '{}': {} slots; a power of two up to N/2 = {}", name, slots,
          context.parameters().max_slots());
  require<LevelError>(level >= -1 && level <= context.max_level(),
                      "tracing input '{}': level {} is outside 0..{} (-1: the top level)", name, level,
                      context.max_level());
  Node node;
  node.op = Op::input;
  node.slots = slots;
  node.input_level = level < 0 ? context.max_level() : level;
  node.name = std::move(name);
  return record(std::move(node), "input");
}

namespace {
Node unary(Op op, const Value& a) {
  Node node;
  node.op = op;
  node.inputs = {a.id()};
  node.slots = a.slots();
  return node;
}
Node binary(Op op, const Value& a, const Value& b) {
  Node node = unary(op, a);
  node.inputs.push_back(b.id());
  return node;
}
}  // namespace

Value Tracer::add(Value a, Value b) {
  check(a, "add");
  check(b, "add");
  return record(binary(Op::add, a, b), "add");
}

Value Tracer::sub(Value a, Value b) {
  check(a, "sub");
  check(b, "sub");
  return record(binary(Op::sub, a, b), "sub");
}

Value Tracer::negate(Value a) {
  check(a, "negate");
  return record(unary(Op::negate, a), "negate");
}

Value Tracer::multiply(Value a, Value b) {
  check(a, "multiply");
  check(b, "multiply");
  return record(binary(Op::multiply, a, b), "multiply");
}

Value Tracer::product_sum(std::span<const Value> a, std::span<const Value> b) {
  require<MismatchError>(!a.empty() && a.size() == b.size(),
                         "tracing product_sum at node {}: {} and {} factors (need as many of each, at least one)",
                         program_.size(), a.size(), b.size());
  Node node;
  node.op = Op::product_sum;
  node.slots = a.front().slots();
  for (std::size_t i = 0; i < a.size(); ++i) {
    check(a[i], "product_sum");
    check(b[i], "product_sum");
    node.inputs.push_back(a[i].id());
    node.inputs.push_back(b[i].id());
  }
  return record(std::move(node), "product_sum");  // checks the slot counts
}

Value Tracer::multiply(Value a, const PlainVector& p) {
  check(a, "multiply by a plaintext");
  require(!p.empty() && a.slots() % p.period() == 0,
          "tracing multiply by a plaintext at node {}: a plaintext of period {} does not tile {} slots",
          program_.size(), p.period(), a.slots());
  Node node = unary(Op::multiply_plain, a);
  node.plain = p;
  return record(std::move(node), "multiply by a plaintext");
}

Value Tracer::multiply(Value a, double constant) {
  check(a, "multiply by a constant");
  require(std::isfinite(constant), "tracing multiply by a constant at node {}: {} is not finite", program_.size(),
          constant);
  Node node = unary(Op::multiply_constant, a);
  node.constant = constant;
  return record(std::move(node), "multiply by a constant");
}

Value Tracer::add(Value a, const PlainVector& p) {
  check(a, "add a plaintext");
  require(!p.empty() && a.slots() % p.period() == 0,
          "tracing add a plaintext at node {}: a plaintext of period {} does not tile {} slots", program_.size(),
          p.period(), a.slots());
  Node node = unary(Op::add_plain, a);
  node.plain = p;
  return record(std::move(node), "add a plaintext");
}

Value Tracer::add(Value a, std::complex<double> constant) {
  check(a, "add a constant");
  require(std::isfinite(constant.real()) && std::isfinite(constant.imag()),
          "tracing add a constant at node {}: ({}, {}) is not finite", program_.size(), constant.real(),
          constant.imag());
  Node node = unary(Op::add_constant, a);
  node.constant = constant;
  return record(std::move(node), "add a constant");
}

Value Tracer::rotate(Value a, std::int64_t steps) {
  check(a, "rotate");
  Node node = unary(Op::rotate, a);
  const auto slots = static_cast<std::int64_t>(a.slots());
  node.steps = ((steps % slots) + slots) % slots;
  if (node.steps == 0) return a;  // the identity: no node, no key
  // The same turn of the same value traced again is the node already made: matrix products that read one input
  // (attention's Q, K and V) share their baby steps' key switches.
  const std::uint64_t key = (std::uint64_t{a.id()} << 32) | static_cast<std::uint64_t>(node.steps);
  if (const auto found = rotations_.find(key); found != rotations_.end()) return Value(this, found->second, a.slots());
  const Value rotated = record(std::move(node), "rotate");
  rotations_.emplace(key, rotated.id());
  return rotated;
}

Value Tracer::conjugate(Value a) {
  check(a, "conjugate");
  return record(unary(Op::conjugate, a), "conjugate");
}

Value Tracer::bootstrap(Value a) {
  check(a, "bootstrap");
  return record(unary(Op::bootstrap, a), "bootstrap");
}

void Tracer::output(Value a, std::string name) {
  check(a, "output");
  Node node = unary(Op::output, a);
  node.name = std::move(name);
  record(std::move(node), "output");
}

void Tracer::label(Value a, std::string name) {
  check(a, "label");
  // Labels are for reading the plan: the node keeps its operation; a later label replaces an earlier one.
  program_.rename(a.id(), std::move(name));
}

std::vector<NodeId> Tracer::ids_of(std::span<const Value> from, const char* operation) const {
  std::vector<NodeId> ids;
  for (const Value& f : from) {
    check(f, operation);
    ids.push_back(f.id());
  }
  return ids;
}

void Tracer::keep_exact(Value a, std::span<const Value> from) {
  check(a, "keep_exact");
  program_.keep_exact(a.id(), ids_of(from, "keep_exact"));
}

void Tracer::bootstrap_precisely(Value a, std::span<const Value> from) {
  check(a, "bootstrap_precisely");
  program_.bootstrap_precisely(a.id(), ids_of(from, "bootstrap_precisely"));
}

Program Tracer::finish() && {
  require(!program_.outputs().empty(), "tracer: the program has no output; call output(value, name)");
  return std::move(program_);
}

}  // namespace cerium::graph
