#include "cerium/graph/simulate.hpp"

#include <random>

#include <algorithm>
#include <cmath>

#include "cerium/core/check.hpp"

namespace cerium::graph {

namespace {

using Complex = std::complex<double>;

// Complex products written out: std::complex's operator* checks for infinities and NaNs through a library call,
// which made it most of a large model's simulation.
inline Complex times(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// One thread per loop: a node is short (about 40 us at 32768 slots) and an OpenMP team per node stalls whenever a
// core is busy elsewhere (tried: 20 s became 370 s with another process on one of two cores).
//
// recycled, when not null, is a's own buffer, taken from its node because this one reads it last: the result is
// written over it (no allocation, no zeroing pass). Its data pointer stays valid through the move.
template <class F>
SlotValues each(const SlotValues& a, SlotValues* recycled, F f) {
  const Complex* source = a.data();
  const std::size_t size = a.size();
  SlotValues out = recycled != nullptr ? std::move(*recycled) : SlotValues(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = f(i, source[i]);
  return out;
}

// a op p, p the plaintext's period tiled over a's slots (without building the tiled vector); recycled as in each.
template <class F>
SlotValues with_plain(const SlotValues& a, SlotValues* recycled, const PlainVector& plain, F f) {
  const SlotValues p = plain.expanded(plain.period());
  const Complex* source = a.data();
  const std::size_t size = a.size();
  require(size % p.size() == 0, "simulate: a plaintext of period {} does not tile {} slots", p.size(), size);
  SlotValues out = recycled != nullptr ? std::move(*recycled) : SlotValues(size);
  for (std::size_t start = 0; start < size; start += p.size()) {
    for (std::size_t j = 0; j < p.size(); ++j) out[start + j] = f(source[start + j], p[j]);
  }
  return out;
}

// The operations whose result may be written over their first operand's values (slot by slot, or a move).
bool writes_over_first(Op op) {
  switch (op) {
    case Op::add:
    case Op::sub:
    case Op::negate:
    case Op::multiply:
    case Op::multiply_plain:
    case Op::add_plain:
    case Op::multiply_constant:
    case Op::add_constant:
    case Op::conjugate:
    case Op::bootstrap:
    case Op::output: return true;
    case Op::input:
    case Op::rotate: return false;
  }
  return false;
}

// Node `id`'s values from its operands' (v holds them; with recycled, operand 0's are there instead, see each).
SlotValues evaluate_node(const Node& n, const std::vector<SlotValues>& v, const SlotValues* input,
                         SlotValues* recycled = nullptr) {
  const auto in = [&](std::size_t k) -> const SlotValues& {
    return recycled != nullptr && n.inputs.at(k) == n.inputs[0] ? *recycled : v[n.inputs.at(k)];
  };
  const SlotValues& first = n.inputs.empty() ? *input : in(0);
  switch (n.op) {
    case Op::input:
      require<MismatchError>(input->size() == n.slots, "simulate: input '{}' of {} values for {} slots", n.name,
                             input->size(), n.slots);
      return *input;
    case Op::add: {
      const Complex* b = in(1).data();  // hoisted: in() checks its index, once per node rather than per slot
      return each(first, recycled, [b](std::size_t i, auto x) { return x + b[i]; });
    }
    case Op::sub: {
      const Complex* b = in(1).data();
      return each(first, recycled, [b](std::size_t i, auto x) { return x - b[i]; });
    }
    case Op::negate: return each(first, recycled, [](std::size_t, auto x) { return -x; });
    case Op::multiply: {
      const Complex* b = in(1).data();
      return each(first, recycled, [b](std::size_t i, auto x) { return times(x, b[i]); });
    }
    case Op::multiply_plain:
      return with_plain(first, recycled, n.plain, [](Complex x, Complex p) { return times(x, p); });
    case Op::add_plain: return with_plain(first, recycled, n.plain, [](Complex x, Complex p) { return x + p; });
    case Op::multiply_constant: {
      const double c = n.constant.real();
      return each(first, recycled, [&](std::size_t, auto x) { return Complex(x.real() * c, x.imag() * c); });
    }
    case Op::add_constant: return each(first, recycled, [&](std::size_t, auto x) { return x + n.constant; });
    case Op::rotate: {
      const SlotValues& a = first;
      const auto size = static_cast<std::int64_t>(a.size());
      const auto shift = static_cast<std::size_t>(((n.steps % size) + size) % size);
      SlotValues out(a.size());
      std::copy(a.begin() + static_cast<std::ptrdiff_t>(shift), a.end(), out.begin());
      std::copy(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(shift),
                out.begin() + static_cast<std::ptrdiff_t>(a.size() - shift));
      return out;
    }
    case Op::conjugate: return each(first, recycled, [](std::size_t, auto x) { return std::conj(x); });
    case Op::bootstrap:
    case Op::output: return recycled != nullptr ? std::move(*recycled) : first;
  }
  return {};
}

void require_inputs(const Program& program, const std::vector<SlotValues>& inputs) {
  require<MismatchError>(inputs.size() == program.inputs().size(), "simulate: {} inputs for a program of {}",
                         inputs.size(), program.inputs().size());
}

}  // namespace

std::vector<SlotValues> simulate(const Program& program, const std::vector<SlotValues>& inputs) {
  require_inputs(program, inputs);
  std::vector<SlotValues> v(program.size());
  std::size_t next_input = 0;
  for (std::size_t id = 0; id < program.size(); ++id) {
    const Node& n = program.node(static_cast<NodeId>(id));
    v[id] = evaluate_node(n, v, n.op == Op::input ? &inputs[next_input++] : nullptr);
  }
  return v;
}

namespace {

// The program on one sample, each node's values dropped after its last reader (outputs have none: they stay);
// visit(id, values) sees every node's values when computed. Returns the values still held.
template <class Visit>
std::vector<SlotValues> run_freeing(const Program& program, const std::vector<NodeId>& last_reader,
                                    const std::vector<SlotValues>& inputs, Visit visit) {
  require_inputs(program, inputs);
  std::vector<SlotValues> v(program.size());
  std::size_t next_input = 0;
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& n = program.node(id);
    // Operand 0's values, when this node reads them last, become this node's (written over in place).
    SlotValues taken;
    const bool recycle = writes_over_first(n.op) && last_reader[n.inputs.at(0)] == id;
    if (recycle) taken = std::move(v[n.inputs[0]]);
    v[id] = evaluate_node(n, v, n.op == Op::input ? &inputs[next_input++] : nullptr, recycle ? &taken : nullptr);
    visit(id, v[id]);  // may change the values (noise)
    for (const NodeId operand : n.inputs) {
      if (last_reader[operand] == id) SlotValues().swap(v[operand]);
    }
  }
  return v;
}

// max |x| over the values. Squared and written out (std::norm of a complex<double> takes a hypot per slot), with
// four running maxima: one chain of dependent maxsd was a third of a transformer layer's planning.
double largest_magnitude(const SlotValues& values) {
  const auto norm = [&](std::size_t i) {
    return values[i].real() * values[i].real() + values[i].imag() * values[i].imag();
  };
  double m[4] = {0, 0, 0, 0};
  const std::size_t size = values.size(), body = size - size % 4;
  for (std::size_t i = 0; i < body; i += 4) {
    for (std::size_t k = 0; k < 4; ++k) m[k] = std::max(m[k], norm(i + k));
  }
  for (std::size_t i = body; i < size; ++i) m[0] = std::max(m[0], norm(i));
  return std::sqrt(std::max(std::max(m[0], m[1]), std::max(m[2], m[3])));
}

std::vector<NodeId> last_readers(const Program& program) {
  std::vector<NodeId> last_reader(program.size(), 0);
  for (NodeId id = 0; id < program.size(); ++id) {
    for (const NodeId operand : program.node(id).inputs) last_reader[operand] = id;
  }
  return last_reader;
}

}  // namespace

std::vector<double> simulate_magnitudes(const Program& program, const std::vector<std::vector<SlotValues>>& samples,
                                        std::vector<std::vector<SlotValues>>* outputs) {
  std::vector<double> magnitude(program.size(), 0.0);
  const std::vector<NodeId> last_reader = last_readers(program);
  if (outputs != nullptr) outputs->clear();
  for (const auto& inputs : samples) {
    std::vector<SlotValues> v = run_freeing(program, last_reader, inputs, [&](NodeId id, const SlotValues& values) {
      magnitude[id] = std::max(magnitude[id], largest_magnitude(values));
    });
    if (outputs != nullptr) {
      outputs->emplace_back();
      for (const NodeId id : program.outputs()) outputs->back().push_back(std::move(v[id]));
    }
  }
  return magnitude;
}

std::vector<SlotValues> simulate_outputs(const Program& program, const std::vector<SlotValues>& inputs) {
  std::vector<SlotValues> v = run_freeing(program, last_readers(program), inputs, [](NodeId, const SlotValues&) {});
  std::vector<SlotValues> out;
  for (const NodeId id : program.outputs()) out.push_back(std::move(v[id]));
  return out;
}

std::vector<SlotValues> simulate_outputs_noisy(const Plan& plan, const std::vector<SlotValues>& inputs,
                                               const BootstrapNoise& noise) {
  require(noise.absolute >= 0, "bootstrap noise of {}: a magnitude is not negative", noise.absolute);
  std::mt19937_64 rng(noise.seed);
  std::uniform_real_distribution<double> unit(-noise.absolute, noise.absolute);
  const Program& program = plan.program;
  std::vector<SlotValues> v = run_freeing(program, last_readers(program), inputs, [&](NodeId id, SlotValues& values) {
    if (!plan.nodes[id].bootstrap && program.node(id).op != Op::bootstrap) return;
    double factor = 1;
    if (noise.scaled_by_magnitude) {
      double largest = 0;
      for (const auto& x : values) largest = std::max(largest, std::abs(x));
      while (factor < largest) factor *= 2;
    }
    for (auto& x : values) x += factor * std::complex<double>(unit(rng), unit(rng));
  });
  std::vector<SlotValues> out;
  for (const NodeId id : program.outputs()) out.push_back(std::move(v[id]));
  return out;
}

std::vector<BootstrapMagnitude> bootstrap_magnitudes(const Plan& plan, const std::vector<SlotValues>& values) {
  require<MismatchError>(values.size() == plan.nodes.size(), "bootstrap magnitudes: {} values for {} nodes",
                         values.size(), plan.nodes.size());
  std::vector<BootstrapMagnitude> out;
  for (std::size_t id = 0; id < values.size(); ++id) {
    if (!plan.nodes[id].bootstrap) continue;
    double m = 0;
    for (const auto& x : values[id]) m = std::max(m, std::abs(x));
    out.push_back({static_cast<NodeId>(id), plan.program.node(static_cast<NodeId>(id)).name, m});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.magnitude > b.magnitude; });
  return out;
}

}  // namespace cerium::graph
