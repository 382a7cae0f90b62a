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

PlainVector::PlainVector(std::vector<std::complex<double>> period_values)
    : values_(std::make_shared<const std::vector<std::complex<double>>>(std::move(period_values))) {
  require(!values_->empty(), "a plaintext vector needs at least one value");
  for (const auto& v : *values_) {
    require(std::isfinite(v.real()) && std::isfinite(v.imag()), "a plaintext vector holds a value that is not finite");
  }
}

PlainVector::PlainVector(const std::vector<double>& period_values)
    : PlainVector(std::vector<std::complex<double>>(period_values.begin(), period_values.end())) {}

std::vector<std::complex<double>> PlainVector::expanded(std::size_t slots) const {
  require(!empty(), "an empty plaintext vector has no slots");
  require(slots % period() == 0, "a plaintext vector of period {} does not tile {} slots", period(), slots);
  std::vector<std::complex<double>> out(slots);
  for (std::size_t i = 0; i < slots; ++i) out[i] = (*values_)[i % period()];
  return out;
}

}  // namespace cerium::graph
