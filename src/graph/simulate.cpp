#include "cerium/graph/simulate.hpp"

#include <random>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cerium/core/check.hpp"

namespace cerium::graph {

namespace {

using Complex = std::complex<double>;

// Complex products written out: std::complex's operator* checks for infinities and NaNs through a library call,
// which made it most of a large model's simulation.
inline Complex times(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

inline double squared(Complex x) { return x.real() * x.real() + x.imag() * x.imag(); }

// How a node's loops run: on one thread, or split among `threads` OpenMP threads (PlanOptions::simulation_threads;
// a node is about 20 us at 2^15 slots, so only idle cores pay: a team whose thread waits for a busy core stalls
// every node: 20 s became 370 s with another process on one of two cores), and whether they also find the
// largest |slot| of what they write (no second pass over the values for the planner's magnitudes).
struct Loop {
  std::size_t threads = 1;
  bool track = false;
  std::vector<double> part_largest = {};  // one entry per part of the node being run
};

// max |x|^2 over values[0, size): two slots to a vector of two doubles ({re^2, im^2} of each, added across), in
// two running maxima. GCC keeps a scalar max reduction scalar (without -ffast-math it may not reorder maxima), and
// one dependent chain of maxima was a third of a transformer layer's planning; this is 0.6 -> 0.36 ns a slot.
double largest_squared(const Complex* values, std::size_t size) {
  using Pair = double __attribute__((vector_size(16)));
  const double* d = reinterpret_cast<const double*>(values);
  Pair m0 = {0, 0}, m1 = {0, 0};
  std::size_t i = 0;
  for (; i + 4 <= size; i += 4) {
    Pair a, b, c, e;
    std::memcpy(&a, d + 2 * i, sizeof a);
    std::memcpy(&b, d + 2 * i + 2, sizeof b);
    std::memcpy(&c, d + 2 * i + 4, sizeof c);
    std::memcpy(&e, d + 2 * i + 6, sizeof e);
    a *= a;
    b *= b;
    c *= c;
    e *= e;
    const Pair s0 = Pair{a[0], b[0]} + Pair{a[1], b[1]};
    const Pair s1 = Pair{c[0], e[0]} + Pair{c[1], e[1]};
    m0 = s0 > m0 ? s0 : m0;
    m1 = s1 > m1 ? s1 : m1;
  }
  double m = std::max(std::max(m0[0], m0[1]), std::max(m1[0], m1[1]));
  for (; i < size; ++i) m = std::max(m, squared(values[i]));
  return m;
}

// A node's result of `size` slots, written by write(out, begin, end) over ranges of it, into `buffer` when that
// has the size (operand 0's own values when this node reads them last, or a freed node's: no allocation, no
// zeroing pass). A tracking loop reads each block of 256 slots back while it is in the L1 cache for the largest
// |slot|, which goes to *largest.
template <class Write>
SlotValues fill(Loop& loop, std::size_t size, SlotValues* buffer, double* largest, const Write& write) {
  SlotValues out = buffer != nullptr && buffer->size() == size ? std::move(*buffer) : SlotValues(size);
  Complex* data = out.data();
  // Two parts a thread even out a thread that starts late; nodes under 4096 slots stay on one thread.
  const std::size_t parts = loop.threads > 1 && size >= 4096 ? 2 * loop.threads : 1;
  const std::size_t part_size = (size + parts - 1) / parts;
  if (loop.track) loop.part_largest.assign(parts, 0.0);
  auto body = [&](std::size_t part, std::size_t begin, std::size_t end) {
    if (!loop.track) {
      write(data, begin, end);
      return;
    }
    constexpr std::size_t kBlock = 256;
    double m = 0;
    for (std::size_t b = begin; b < end; b += kBlock) {
      const std::size_t e = std::min(end, b + kBlock);
      write(data, b, e);
      m = std::max(m, largest_squared(data + b, e - b));
    }
    loop.part_largest[part] = m;
  };
  if (parts == 1) {
    body(0, 0, size);  // no OpenMP region: most nodes, and all on one thread
  } else {
    const auto signed_parts = static_cast<std::ptrdiff_t>(parts);
#if CERIUM_HAS_OPENMP
#pragma omp parallel for num_threads(static_cast<int>(loop.threads)) schedule(dynamic, 1)
#endif
    for (std::ptrdiff_t part = 0; part < signed_parts; ++part) {
      const std::size_t begin = static_cast<std::size_t>(part) * part_size;
      body(static_cast<std::size_t>(part), begin, std::min(size, begin + part_size));
    }
  }
  if (loop.track && largest != nullptr) {
    *largest = std::sqrt(*std::max_element(loop.part_largest.begin(), loop.part_largest.end()));
  }
  return out;
}

// f(i, a[i]) in every slot.
template <class F>
SlotValues each(Loop& loop, const SlotValues& a, SlotValues* buffer, double* largest, F f) {
  const Complex* source = a.data();
  return fill(loop, a.size(), buffer, largest, [&](Complex* out, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = f(i, source[i]);
  });
}

// f(a[i], p[i mod period]): p the plaintext's period tiled over a's slots (without building the tiled vector).
template <class F>
SlotValues with_plain(Loop& loop, const SlotValues& a, SlotValues* buffer, double* largest, const PlainVector& plain,
                      F f) {
  const SlotValues p = plain.expanded(plain.period());
  const Complex* source = a.data();
  const Complex* tile = p.data();
  const std::size_t period = p.size();
  require(a.size() % period == 0, "simulate: a plaintext of period {} does not tile {} slots", period, a.size());
  return fill(loop, a.size(), buffer, largest, [&](Complex* out, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin, j = begin % period; i < end; j = 0) {  // contiguous runs of the period
      const std::size_t n = std::min(end - i, period - j);
      for (std::size_t k = 0; k < n; ++k) out[i + k] = f(source[i + k], tile[j + k]);
      i += n;
    }
  });
}

// The operations whose result may be written over their first operand's values (slot by slot, or a move).
bool writes_over_first(Op op) {
  switch (op) {
    case Op::add:
    case Op::sub:
    case Op::negate:
    case Op::multiply:
    case Op::product_sum:
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

// max |x| over the values (for the nodes that copy or move).
double largest_magnitude(const SlotValues& values) { return std::sqrt(largest_squared(values.data(), values.size())); }

// Node n's values from its operands' (v holds them). taken, when not null, is operand 0's values, moved out of v
// because this node reads them last: the result is written over them. Otherwise spare, when not null, is a buffer
// whose contents do not matter. With a tracking loop, *largest gets the result's largest |slot|.
SlotValues evaluate_node(const Node& n, const std::vector<SlotValues>& v, const SlotValues* input, Loop& loop,
                         SlotValues* taken = nullptr, SlotValues* spare = nullptr, double* largest = nullptr) {
  const auto in = [&](std::size_t k) -> const SlotValues& {
    return taken != nullptr && n.inputs.at(k) == n.inputs[0] ? *taken : v[n.inputs.at(k)];
  };
  const SlotValues& first = n.inputs.empty() ? *input : in(0);
  SlotValues* buffer = taken != nullptr ? taken : spare;
  const auto copied = [&](SlotValues out) {  // a node that copies or moves its operand's values
    if (loop.track && largest != nullptr) *largest = largest_magnitude(out);
    return out;
  };
  switch (n.op) {
    case Op::input:
      require<MismatchError>(input->size() == n.slots, "simulate: input '{}' of {} values for {} slots", n.name,
                             input->size(), n.slots);
      return copied(*input);
    case Op::add: {
      const Complex* b = in(1).data();  // hoisted: in() checks its index, once per node rather than per slot
      return each(loop, first, buffer, largest, [b](std::size_t i, Complex x) { return x + b[i]; });
    }
    case Op::sub: {
      const Complex* b = in(1).data();
      return each(loop, first, buffer, largest, [b](std::size_t i, Complex x) { return x - b[i]; });
    }
    case Op::negate: return each(loop, first, buffer, largest, [](std::size_t, Complex x) { return -x; });
    case Op::multiply: {
      const Complex* b = in(1).data();
      return each(loop, first, buffer, largest, [b](std::size_t i, Complex x) { return times(x, b[i]); });
    }
    case Op::product_sum: {
      // The first product over the first operand's slots, then each later one added: reads of slot i come before
      // its write, so operand 0 may be the buffer written (and any later factor the same values).
      std::vector<const Complex*> factors;
      for (std::size_t k = 1; k < n.inputs.size(); ++k) factors.push_back(in(k).data());
      return each(loop, first, buffer, largest, [&factors](std::size_t i, Complex x) {
        Complex sum = times(x, factors[0][i]);
        for (std::size_t k = 1; k + 1 < factors.size(); k += 2) sum += times(factors[k][i], factors[k + 1][i]);
        return sum;
      });
    }
    case Op::multiply_plain:
      return with_plain(loop, first, buffer, largest, n.plain, [](Complex x, Complex p) { return times(x, p); });
    case Op::add_plain:
      return with_plain(loop, first, buffer, largest, n.plain, [](Complex x, Complex p) { return x + p; });
    case Op::multiply_constant: {
      const double c = n.constant.real();
      return each(loop, first, buffer, largest,
                  [c](std::size_t, Complex x) { return Complex(x.real() * c, x.imag() * c); });
    }
    case Op::add_constant: {
      const Complex c = n.constant;
      return each(loop, first, buffer, largest, [c](std::size_t, Complex x) { return x + c; });
    }
    case Op::rotate: {
      // out[i] = a[(i + steps) mod size]: never written over its operand (spare only).
      const std::size_t size = first.size();
      const auto signed_size = static_cast<std::int64_t>(size);
      const auto shift = static_cast<std::size_t>(((n.steps % signed_size) + signed_size) % signed_size);
      const Complex* source = first.data();
      return fill(loop, size, spare, largest, [&](Complex* out, std::size_t begin, std::size_t end) {
        for (std::size_t i = begin, k = (begin + shift) % size; i < end; k = 0) {  // at most two runs
          const std::size_t n = std::min(end - i, size - k);
          std::copy(source + k, source + k + n, out + i);
          i += n;
        }
      });
    }
    case Op::conjugate:
      return each(loop, first, buffer, largest, [](std::size_t, Complex x) { return std::conj(x); });
    case Op::bootstrap:
    case Op::output: return copied(taken != nullptr ? std::move(*taken) : first);
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
  Loop loop;
  for (std::size_t id = 0; id < program.size(); ++id) {
    const Node& n = program.node(static_cast<NodeId>(id));
    v[id] = evaluate_node(n, v, n.op == Op::input ? &inputs[next_input++] : nullptr, loop);
  }
  return v;
}

namespace {

// The program on one sample, each node's values dropped after its last reader (outputs have none: they stay);
// visit(id, values, largest) sees every node's values when computed (largest: their largest |slot| when the loop
// tracks it, else 0). Returns the values still held.
template <class Visit>
std::vector<SlotValues> run_freeing(const Program& program, const std::vector<NodeId>& last_reader,
                                    const std::vector<SlotValues>& inputs, Loop& loop, Visit visit) {
  require_inputs(program, inputs);
  std::vector<SlotValues> v(program.size());
  // Freed values' buffers, written over by later nodes (a 2^15-slot vector is 512 KiB: allocated fresh, its
  // pages are faulted in and zeroed each time).
  std::vector<SlotValues> spare;
  constexpr std::size_t kSpareBuffers = 8;
  std::size_t next_input = 0;
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& n = program.node(id);
    // Operand 0's values, when this node reads them last, become this node's (written over in place).
    SlotValues taken, buffer;
    const bool recycle = writes_over_first(n.op) && last_reader[n.inputs.at(0)] == id;
    if (recycle) {
      taken = std::move(v[n.inputs[0]]);
    } else if (!spare.empty()) {
      buffer = std::move(spare.back());
      spare.pop_back();
    }
    double largest = 0;
    v[id] = evaluate_node(n, v, n.op == Op::input ? &inputs[next_input++] : nullptr, loop,
                          recycle ? &taken : nullptr, &buffer, &largest);
    visit(id, v[id], largest);  // may change the values (noise)
    if (!buffer.empty() && spare.size() < kSpareBuffers) spare.push_back(std::move(buffer));
    for (const NodeId operand : n.inputs) {
      if (last_reader[operand] != id || v[operand].empty()) continue;
      if (spare.size() < kSpareBuffers) {
        spare.push_back(std::move(v[operand]));  // leaves v[operand] empty
      } else {
        SlotValues().swap(v[operand]);
      }
    }
  }
  return v;
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
                                        std::vector<std::vector<SlotValues>>* outputs, std::size_t threads) {
  std::vector<double> magnitude(program.size(), 0.0);
  const std::vector<NodeId> last_reader = last_readers(program);
  if (outputs != nullptr) outputs->clear();
  Loop loop{.threads = threads, .track = true};
  for (const auto& inputs : samples) {
    std::vector<SlotValues> v = run_freeing(program, last_reader, inputs, loop,
                                            [&](NodeId id, const SlotValues&, double largest) {
      magnitude[id] = std::max(magnitude[id], largest);
    });
    if (outputs != nullptr) {
      outputs->emplace_back();
      for (const NodeId id : program.outputs()) outputs->back().push_back(std::move(v[id]));
    }
  }
  return magnitude;
}

std::vector<SlotValues> simulate_outputs(const Program& program, const std::vector<SlotValues>& inputs) {
  Loop loop;
  std::vector<SlotValues> v =
      run_freeing(program, last_readers(program), inputs, loop, [](NodeId, const SlotValues&, double) {});
  std::vector<SlotValues> out;
  for (const NodeId id : program.outputs()) out.push_back(std::move(v[id]));
  return out;
}

std::vector<SlotValues> simulate_outputs_noisy(const Plan& plan, const std::vector<SlotValues>& inputs,
                                               const BootstrapNoise& noise) {
  require(noise.absolute >= 0 && noise.rounding.rescale >= 0 && noise.rounding.key_switch >= 0,
          "bootstrap noise of {} and rounding noise of {} and {}: none is negative", noise.absolute,
          noise.rounding.rescale, noise.rounding.key_switch);
  std::mt19937_64 rng(noise.seed);
  std::uniform_real_distribution<double> unit(-noise.absolute, noise.absolute);
  std::normal_distribution<double> gaussian(0.0, 1.0);
  const Program& program = plan.program;
  Loop loop;
  std::vector<SlotValues> v = run_freeing(program, last_readers(program), inputs, loop,
                                          [&](NodeId id, SlotValues& values, double) {
    const Op op = program.node(id).op;
    // A product's relinearization rounds at the product's scale, then the rescale divides that by the level's
    // prime: only the rescale's rounding is left.
    const double rounding = level_cost(op) > 0                           ? noise.rounding.rescale
                            : op == Op::rotate || op == Op::conjugate ? noise.rounding.key_switch
                                                                        : 0.0;
    if (rounding > 0) {
      const double sigma = rounding / plan.nodes[id].scale;
      for (auto& x : values) x += sigma * std::complex<double>(gaussian(rng), gaussian(rng));
    }
    if (!plan.nodes[id].bootstrap && op != Op::bootstrap) return;
    if (id < noise.first || id >= noise.last) return;
    // A precise bootstrap leaves its correction's error: a bootstrap's at the correction's shift.
    const NodePlan& p = plan.nodes[id];
    const int shift = noise.scaled_by_magnitude ? bootstrap_shift(p.magnitude) : 0;
    const double factor = std::ldexp(1.0, p.precise ? precise_correction_shift(shift) : shift);
    for (auto& x : values) x += factor * std::complex<double>(unit(rng), unit(rng));
  });
  std::vector<SlotValues> out;
  for (const NodeId id : program.outputs()) out.push_back(std::move(v[id]));
  return out;
}

RoundingNoise rounding_noise(const ckks::Parameters& parameters) {
  const ckks::CkksConfig& c = parameters.config();
  const double n = std::ldexp(1.0, c.log_n);
  // A uniform ternary secret has 2N/3 nonzeros on average.
  const double h = c.secret == ckks::SecretDistribution::hamming_weight ? c.hamming_weight : 2 * n / 3;
  const double alpha = static_cast<double>(parameters.alpha());
  // E[(u - k)^2], u of mean (alpha - 1) / 2 and variance alpha / 12, k = floor((alpha - 1) / 2) (ring::ModDown).
  const double offset = (alpha - 1) / 2 - std::floor((alpha - 1) / 2);
  const double overflow_square = offset * offset + alpha / 12;
  return {.rescale = std::sqrt(n * (1 + h) / 24), .key_switch = std::sqrt(n * ((1 + h) / 12 + h * overflow_square) / 2)};
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
