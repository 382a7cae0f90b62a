#include "cerium/graph/node.hpp"

#include <cmath>

#include "cerium/core/check.hpp"

namespace cerium::graph {

const char* to_string(Op op) {
  switch (op) {
    case Op::input: return "input";
    case Op::add: return "add";
    case Op::sub: return "sub";
    case Op::negate: return "negate";
    case Op::multiply: return "multiply";
    case Op::product_sum: return "product_sum";
    case Op::multiply_plain: return "multiply_plain";
    case Op::multiply_constant: return "multiply_constant";
    case Op::add_plain: return "add_plain";
    case Op::add_constant: return "add_constant";
    case Op::rotate: return "rotate";
    case Op::conjugate: return "conjugate";
    case Op::bootstrap: return "bootstrap";
    case Op::output: return "output";
  }
  return "?";
}

int level_cost(Op op) {
  switch (op) {
    case Op::multiply:
    case Op::product_sum:
    case Op::multiply_plain:
    case Op::multiply_constant: return 1;
    case Op::input:
    case Op::add:
    case Op::sub:
    case Op::negate:
    case Op::add_plain:
    case Op::add_constant:
    case Op::rotate:
    case Op::conjugate:
    case Op::bootstrap:
    case Op::output: return 0;
  }
  return 0;
}

int key_switches(Op op) {
  switch (op) {
    case Op::multiply:
    case Op::product_sum:
    case Op::rotate:
    case Op::conjugate: return 1;
    case Op::input:
    case Op::add:
    case Op::sub:
    case Op::negate:
    case Op::multiply_plain:
    case Op::multiply_constant:
    case Op::add_plain:
    case Op::add_constant:
    case Op::bootstrap:
    case Op::output: return 0;
  }
  return 0;
}

namespace {
void require_finite(const PlainVector::Values& values) {
  for (const auto& v : values) {
    require(std::isfinite(v.real()) && std::isfinite(v.imag()), "a plaintext vector holds a value that is not finite");
  }
}
}  // namespace

PlainVector::PlainVector(Values period_values)
    : values_(std::make_shared<const Values>(std::move(period_values))), period_(values_->size()) {
  require(!values_->empty(), "a plaintext vector needs at least one value");
  require_finite(*values_);
}

PlainVector::PlainVector(const std::vector<double>& period_values)
    : PlainVector(Values(period_values.begin(), period_values.end())) {}

PlainVector::PlainVector(std::size_t period, Generator generate)
    : generator_(std::make_shared<const Generator>(std::move(generate))), period_(period) {
  require(period >= 1 && *generator_, "a generated plaintext vector needs a period and a function");
}

PlainVector::Values PlainVector::expanded(std::size_t slots) const {
  require(!empty(), "an empty plaintext vector has no slots");
  require(slots % period_ == 0, "a plaintext vector of period {} does not tile {} slots", period_, slots);
  Values made;
  const Values* values = values_.get();
  if (generator_) {
    made = (*generator_)();
    require(made.size() == period_, "a plaintext generator made {} values; it declared {}", made.size(), period_);
    require_finite(made);
    values = &made;
    if (slots == period_) return made;
  }
  Values out(slots);
  for (std::size_t i = 0; i < slots; ++i) out[i] = (*values)[i % period_];
  return out;
}

}  // namespace cerium::graph
