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

// A rotation by `steps` of `size` slots as the offset it reads at: out[i] = a[(i + offset) mod size].
std::size_t rotation_offset(std::int64_t steps, std::size_t size) {
  const auto signed_size = static_cast<std::int64_t>(size);
  return static_cast<std::size_t>(((steps % signed_size) + signed_size) % signed_size);
}

// Slots [begin, begin + count) of `source` (`size` slots) read `offset` slots on, into out[0, count): at most two
// contiguous runs.
void shifted_copy(const Complex* source, std::size_t size, std::size_t offset, Complex* out, std::size_t begin,
                  std::size_t count) {
  for (std::size_t i = 0, k = (begin + offset) % size; i < count; k = 0) {
    const std::size_t run = std::min(count - i, size - k);
    std::copy(source + k, source + k + run, out + i);
    i += run;
  }
}

// Freed values' buffers, written over by later nodes (a 2^15-slot vector is 512 KiB: allocated fresh, its pages are
// faulted in and zeroed each time); a few are kept, the rest freed.
class SpareBuffers {
 public:
  // A kept buffer (its contents do not matter), or an empty vector when none is kept.
  SlotValues take() {
    if (kept_.empty()) return {};
    SlotValues out = std::move(kept_.back());
    kept_.pop_back();
    return out;
  }
  // values' buffer kept (values left empty) or freed.
  void give(SlotValues& values) {
    if (values.empty()) return;
    if (kept_.size() < kKept) {
      kept_.push_back(std::move(values));
    } else {
      SlotValues().swap(values);
    }
  }

 private:
  static constexpr std::size_t kKept = 8;
  std::vector<SlotValues> kept_;
};

// The operations computed slot by slot from their operands' slots at the same index (and a plaintext's tile).
bool elementwise(Op op) { return op != Op::input && op != Op::rotate; }

// A plaintext operation's tile over `slots` slots: the plaintext's period of values (empty for other operations).
SlotValues tile_of(const Node& n, std::size_t slots) {
  if (n.op != Op::multiply_plain && n.op != Op::add_plain) return {};
  SlotValues tile = n.plain.expanded(n.plain.period());
  require(slots % tile.size() == 0, "simulate: a plaintext of period {} does not tile {} slots", tile.size(), slots);
  return tile;
}

// An elementwise node (elementwise(n.op)) over `count` slots from slot `begin` on: out[i] from in[k][i], operand k's
// values at those slots, and for plaintext operations tile[(begin + i) mod period]. out may be in[0] (each slot's
// operands are read before it is written). Both the node-by-node and the tiled simulation compute through this,
// so their doubles are the same.
void elementwise_block(const Node& n, Complex* out, const Complex* const* in, std::size_t begin, std::size_t count,
                       const SlotValues& tile) {
  const Complex* a = in[0];
  switch (n.op) {
    case Op::add:
      for (std::size_t i = 0; i < count; ++i) out[i] = a[i] + in[1][i];
      return;
    case Op::sub:
      for (std::size_t i = 0; i < count; ++i) out[i] = a[i] - in[1][i];
      return;
    case Op::negate:
      for (std::size_t i = 0; i < count; ++i) out[i] = -a[i];
      return;
    case Op::multiply:
      for (std::size_t i = 0; i < count; ++i) out[i] = times(a[i], in[1][i]);
      return;
    case Op::product_sum: {
      // a b + c d + ...: the factors after the first are in[1], in[2], ...
      const std::size_t factors = n.inputs.size() - 1;
      for (std::size_t i = 0; i < count; ++i) {
        Complex sum = times(a[i], in[1][i]);
        for (std::size_t k = 2; k + 1 <= factors; k += 2) sum += times(in[k][i], in[k + 1][i]);
        out[i] = sum;
      }
      return;
    }
    case Op::multiply_plain:
    case Op::add_plain: {
      const std::size_t period = tile.size();
      const bool product = n.op == Op::multiply_plain;
      for (std::size_t i = 0, j = begin % period; i < count; j = 0) {  // contiguous runs of the period
        const std::size_t run = std::min(count - i, period - j);
        if (product) {
          for (std::size_t k = 0; k < run; ++k) out[i + k] = times(a[i + k], tile[j + k]);
        } else {
          for (std::size_t k = 0; k < run; ++k) out[i + k] = a[i + k] + tile[j + k];
        }
        i += run;
      }
      return;
    }
    case Op::multiply_constant: {
      const double c = n.constant.real();
      for (std::size_t i = 0; i < count; ++i) out[i] = Complex(a[i].real() * c, a[i].imag() * c);
      return;
    }
    case Op::add_constant:
      for (std::size_t i = 0; i < count; ++i) out[i] = a[i] + n.constant;
      return;
    case Op::conjugate:
      for (std::size_t i = 0; i < count; ++i) out[i] = std::conj(a[i]);
      return;
    case Op::bootstrap:
    case Op::output:
      if (out != a) std::copy(a, a + count, out);
      return;
    case Op::input:
    case Op::rotate: break;
  }
  require(false, "simulate: {} is not computed slot by slot", to_string(n.op));
}

// Largest |x|^2 of a fused product and of its sum (0 when not tracked).
struct FusedMaxima {
  double product = 0, sum = 0;
};

// A plaintext product and the add that reads it, over `count` slots from `begin`: out[i] = c[i] + a[i] tile[j],
// the product's doubles and the sum's exactly as elementwise_block computes the two nodes (complex addition
// commutes exactly, so the add's operand order does not matter); out may be c. With `track`, the two nodes'
// largest |x|^2 over the block.
FusedMaxima product_add_block(Complex* out, const Complex* c, const Complex* a, std::size_t begin, std::size_t count,
                              const SlotValues& tile, bool track) {
  using Pair = double __attribute__((vector_size(16)));
  const std::size_t period = tile.size();
  // Running maxima of {|x_i|^2, |x_(i+1)|^2}, two slots at a time, as largest_squared keeps them (one scalar chain
  // of maxima would be the loop's bottleneck).
  Pair product_max = {0, 0}, sum_max = {0, 0};
  for (std::size_t i = 0, j = begin % period; i < count; j = 0) {  // contiguous runs of the period
    const std::size_t run = std::min(count - i, period - j);
    std::size_t k = 0;
    if (track) {
      for (; k + 2 <= run; k += 2) {
        const Complex p0 = times(a[i + k], tile[j + k]), p1 = times(a[i + k + 1], tile[j + k + 1]);
        const Complex s0 = c[i + k] + p0, s1 = c[i + k + 1] + p1;
        out[i + k] = s0;
        out[i + k + 1] = s1;
        const Pair p = {squared(p0), squared(p1)}, s = {squared(s0), squared(s1)};
        product_max = p > product_max ? p : product_max;
        sum_max = s > sum_max ? s : sum_max;
      }
    }
    for (; k < run; ++k) {
      const Complex p = times(a[i + k], tile[j + k]);
      out[i + k] = c[i + k] + p;
      if (track) {
        product_max[0] = std::max(product_max[0], squared(p));
        sum_max[0] = std::max(sum_max[0], squared(out[i + k]));
      }
    }
    i += run;
  }
  return {.product = std::max(product_max[0], product_max[1]), .sum = std::max(sum_max[0], sum_max[1])};
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
    case Op::rotate: {
      // out[i] = a[(i + steps) mod size]: never written over its operand (spare only).
      const std::size_t size = first.size(), offset = rotation_offset(n.steps, size);
      return fill(loop, size, spare, largest, [&](Complex* out, std::size_t begin, std::size_t end) {
        shifted_copy(first.data(), size, offset, out + begin, begin, end - begin);
      });
    }
    case Op::bootstrap:
    case Op::output: return copied(taken != nullptr ? std::move(*taken) : first);
    default: break;
  }
  // Slot by slot. The operands' data are found once per node (in() checks its index), offset per range.
  std::vector<const Complex*> operands;
  for (std::size_t k = 0; k < n.inputs.size(); ++k) operands.push_back(in(k).data());
  const SlotValues tile = tile_of(n, first.size());
  return fill(loop, first.size(), buffer, largest, [&](Complex* out, std::size_t begin, std::size_t end) {
    thread_local std::vector<const Complex*> at;
    at.resize(operands.size());
    for (std::size_t k = 0; k < operands.size(); ++k) at[k] = operands[k] + begin;
    elementwise_block(n, out + begin, at.data(), begin, end - begin, tile);
  });
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
  SpareBuffers spare;
  std::size_t next_input = 0;
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& n = program.node(id);
    // Operand 0's values, when this node reads them last, become this node's (written over in place).
    SlotValues taken, buffer;
    const bool recycle = writes_over_first(n.op) && last_reader[n.inputs.at(0)] == id;
    if (recycle) {
      taken = std::move(v[n.inputs[0]]);
    } else {
      buffer = spare.take();
    }
    double largest = 0;
    v[id] = evaluate_node(n, v, n.op == Op::input ? &inputs[next_input++] : nullptr, loop,
                          recycle ? &taken : nullptr, &buffer, &largest);
    visit(id, v[id], largest);  // may change the values (noise)
    spare.give(buffer);
    for (const NodeId operand : n.inputs) {
      if (last_reader[operand] == id) spare.give(v[operand]);
    }
  }
  return v;
}

// --- the tiled simulation: runs of slot-by-slot nodes a block of slots at a time, rotations read in place ---

// Rotations as views: a rotate node's values are its root's (the first value up its chain of rotations that is not
// one) read `shift` slots on, so no rotation is written out; the root stays held until the last reader of any of
// its views (the effective last readers below).
struct Views {
  std::vector<NodeId> root;          // per node: itself, or a rotation's root
  std::vector<std::size_t> shift;    // per node: 0, or a rotation's total shift (mod its slots)
  std::vector<NodeId> last_reader;   // per node: the last node that reads it or a view of it (0: none)

  explicit Views(const Program& program)
      : root(program.size()), shift(program.size(), 0), last_reader(program.size(), 0) {
    for (NodeId id = 0; id < program.size(); ++id) {
      const Node& n = program.node(id);
      root[id] = id;
      if (n.op == Op::rotate) {
        const NodeId source = n.inputs[0];
        root[id] = root[source];
        shift[id] = (shift[source] + rotation_offset(n.steps, n.slots)) % n.slots;
        continue;  // a view reads nothing itself
      }
      for (const NodeId operand : n.inputs) last_reader[root[operand]] = id;
    }
  }
};

// A run of consecutive nodes [first, end) of one slot count, computed block by block: each block's values of every
// node of the run in turn, so a value read only inside the run lives in a block-sized buffer (cache-resident)
// instead of a whole vector written to memory and read back; rotations are views (their blocks copied from their
// roots at an offset, from cache for a root read again and again: a matrix product's baby steps). Only the values
// read after the run (or kept: outputs) are written whole. The doubles are the node-by-node simulation's
// (elementwise_block computes both, and a rotation only moves values); each node's largest |slot| is the maximum
// over the blocks.
class TiledRun {
 public:
  static constexpr std::size_t kBlock = 256;
  static constexpr std::size_t kMaxNodes = 4096;  // bounds the per-thread maxima and the buffers' bookkeeping

  // Whether node n may be in the run that starts at `first`: a rotation (a view), or a slot-by-slot node none of
  // whose operands is a view of the run's own values (those need blocks not computed yet).
  static bool joins(const Node& n, const Views& views, NodeId first) {
    if (n.op == Op::rotate) return true;
    if (!elementwise(n.op)) return false;
    for (const NodeId operand : n.inputs) {
      if (views.shift[operand] != 0 && views.root[operand] >= first) return false;
    }
    return true;
  }

  // The run that starts at `first` (a node that joins it): every following node that joins it, of the same slots,
  // whose operands have them too.
  static NodeId end_of(const Program& program, const Views& views, NodeId first) {
    const std::size_t slots = program.node(first).slots;
    NodeId end = first;
    while (end < program.size() && end - first < kMaxNodes) {
      const Node& n = program.node(end);
      if (!joins(n, views, first) || n.slots != slots) break;
      bool same = true;
      for (const NodeId operand : n.inputs) same = same && program.node(operand).slots == slots;
      if (!same) break;
      ++end;
    }
    return end;
  }

  TiledRun(const Program& program, const Views& views, NodeId first, NodeId end, std::size_t threads)
      : program_(program), views_(views), first_(first), end_(end), slots_(program.node(first).slots),
        place_(end - first) {
    make_tiles(threads);
    // Where each node's values live: whole (read after the run, or an output) or in a block buffer, reused once the
    // last reader inside the run has read it. Rotations have neither (views).
    std::vector<std::size_t> free_buffers;
    for (NodeId id = first; id < end; ++id) {
      const Node& n = program.node(id);
      if (n.op == Op::rotate) continue;
      max_operands_ = std::max(max_operands_, n.inputs.size());
      for (const NodeId operand : n.inputs) {
        if (views.shift[operand] != 0) read_shifted_.push_back(views.root[operand]);
      }
    }
    std::sort(read_shifted_.begin(), read_shifted_.end());
    for (NodeId id = first; id < end; ++id) {
      const Node& n = program.node(id);
      if (n.op == Op::rotate) continue;
      Place& place = place_[id - first];
      place.whole = n.op == Op::output || views.last_reader[id] >= end;
      if (!place.whole) {
        if (free_buffers.empty()) {
          place.buffer = buffers_++;
        } else {
          place.buffer = free_buffers.back();
          free_buffers.pop_back();
        }
      }
      // Buffers freed after this node go to the next ones (never this one's: it may be reading them), each once
      // (a square reads its operand twice).
      std::vector<NodeId> freed;
      for (const NodeId operand : n.inputs) {
        const NodeId r = views.root[operand];
        if (r >= first && views.last_reader[r] == id && !place_[r - first].whole &&
            std::find(freed.begin(), freed.end(), r) == freed.end()) {
          freed.push_back(r);
          free_buffers.push_back(place_[r - first].buffer);
        }
      }
    }
    find_fused();
  }

  // Computes the run. v: every node's whole values (those before the run read, those of the run written where
  // whole); spare: freed buffers to write whole values into; largest (when not null): per node of the run that is
  // not a rotation, its largest |slot|. threads: as Loop::threads.
  void run(std::vector<SlotValues>& v, SpareBuffers& spare, std::size_t threads, std::vector<double>* largest) {
    // Where each whole value is stored during the run: its own vector, or, written over operand 0's whole values
    // when this node reads them last (not through a view), that operand's storage: block by block, every other
    // reader in the run reads a block before this node writes it, unless it reads it shifted (another block).
    for (NodeId id = first_; id < end_; ++id) {
      Place& place = place_[id - first_];
      if (!place.whole) continue;
      const NodeId a = program_.node(id).inputs.at(0);
      const bool a_whole = a < first_ || place_[a - first_].whole;
      const NodeId a_storage = a >= first_ && a_whole ? place_[a - first_].storage : a;
      const bool shifted = std::binary_search(read_shifted_.begin(), read_shifted_.end(), a);
      if (views_.root[a] == a && !shifted && a_whole && views_.last_reader[a] == id && v[a_storage].size() == slots_) {
        place.storage = a_storage;
        place.moved_from = a;
        continue;
      }
      place.storage = id;
      v[id] = spare.take();
      v[id].resize(slots_);
    }
    const std::size_t blocks = (slots_ + kBlock - 1) / kBlock;
    const std::size_t nodes = end_ - first_;
    const std::size_t teams = threads > 1 && blocks >= 2 * threads ? threads : 1;
    std::vector<double> maxima(largest != nullptr ? teams * nodes : 0, 0.0);
    const auto team_work = [&](std::size_t team) {
      std::vector<Complex> scratch(buffers_ * kBlock), shifted(max_operands_ * kBlock);
      std::vector<const Complex*> at;
      double* team_max = largest != nullptr ? maxima.data() + team * nodes : nullptr;
      for (std::size_t b = team * blocks / teams; b < (team + 1) * blocks / teams; ++b) {
        const std::size_t begin = b * kBlock, count = std::min(kBlock, slots_ - begin);
        const auto data = [&](NodeId id) -> Complex* {
          if (id < first_) return v[id].data() + begin;
          const Place& place = place_[id - first_];
          return place.whole ? v[place.storage].data() + begin : scratch.data() + place.buffer * kBlock;
        };
        // Operand `operand`'s block; a view's from its root (before the run), read in place where it does not
        // wrap around the root's end (a block of 256 slots of 2^15: almost always), else copied to scratch slot k.
        const auto operand_at = [&](NodeId operand, std::size_t k) -> const Complex* {
          if (views_.shift[operand] == 0) return data(views_.root[operand]);
          const SlotValues& root = v[views_.root[operand]];
          const std::size_t from = (begin + views_.shift[operand]) % root.size();
          if (from + count <= root.size()) return root.data() + from;
          Complex* copy = shifted.data() + k * kBlock;
          shifted_copy(root.data(), root.size(), views_.shift[operand], copy, begin, count);
          return copy;
        };
        const auto track = [&](NodeId id, double m) {
          if (team_max != nullptr) team_max[id - first_] = std::max(team_max[id - first_], m);
        };
        for (NodeId id = first_; id < end_; ++id) {
          const Node& n = program_.node(id);
          if (n.op == Op::rotate) continue;
          if (fused_[id - first_]) {  // a term of a sum and the add that takes it: one pass
            const Node& sum = program_.node(id + 1);
            const NodeId other = sum.inputs[0] == id ? sum.inputs[1] : sum.inputs[0];
            const Complex* a = operand_at(n.inputs[0], 0);
            const Complex* accumulated = operand_at(other, 1);
            const FusedMaxima m = product_add_block(data(id + 1), accumulated, a, begin, count,
                                                    place_[id - first_].tile, team_max != nullptr);
            track(id, m.product);
            track(id + 1, m.sum);
            ++id;
            continue;
          }
          at.resize(n.inputs.size());
          for (std::size_t k = 0; k < n.inputs.size(); ++k) at[k] = operand_at(n.inputs[k], k);
          Complex* out = data(id);
          elementwise_block(n, out, at.data(), begin, count, place_[id - first_].tile);
          if (team_max != nullptr) track(id, largest_squared(out, count));
        }
      }
    };
    if (teams == 1) {
      team_work(0);
    } else {
      const auto signed_teams = static_cast<std::ptrdiff_t>(teams);
#if CERIUM_HAS_OPENMP
#pragma omp parallel for num_threads(static_cast<int>(teams)) schedule(static, 1)
#endif
      for (std::ptrdiff_t team = 0; team < signed_teams; ++team) team_work(static_cast<std::size_t>(team));
    }
    for (NodeId id = first_; id < end_; ++id) {  // in order: a chain of nodes written over one vector hands it on
      const Place& place = place_[id - first_];
      if (place.whole && place.storage != id) v[id] = std::move(v[place.moved_from]);
    }
    if (largest != nullptr) {
      largest->assign(nodes, 0.0);
      for (std::size_t t = 0; t < teams; ++t) {
        for (std::size_t k = 0; k < nodes; ++k) (*largest)[k] = std::max((*largest)[k], maxima[t * nodes + k]);
      }
      for (auto& m : *largest) m = std::sqrt(m);
    }
  }

 private:
  // The plaintext operations' tiles, made on the loop's threads: a weight diagonal is generated here (a matrix
  // product's plaintexts are generators), and made serially it was a tenth of a Llama block's calibration.
  void make_tiles(std::size_t threads) {
    std::vector<NodeId> plain;
    for (NodeId id = first_; id < end_; ++id) {
      const Op op = program_.node(id).op;
      if (op == Op::multiply_plain || op == Op::add_plain) plain.push_back(id);
    }
    const auto count = static_cast<std::ptrdiff_t>(plain.size());
#if CERIUM_HAS_OPENMP
#pragma omp parallel for num_threads(static_cast<int>(threads)) schedule(dynamic, 4) if (threads > 1 && count > 8)
#endif
    for (std::ptrdiff_t k = 0; k < count; ++k) {
      const NodeId id = plain[static_cast<std::size_t>(k)];
      place_[id - first_].tile = tile_of(program_.node(id), slots_);
    }
    (void)threads;
  }

  // Whether node id (first_ + index) is a plaintext product read only by the add after it, computed with it in
  // one pass (a matrix product's terms: nearly every node of a transformer layer), its values never written.
  void find_fused() {
    fused_.assign(end_ - first_, false);
    for (NodeId id = first_; id + 1 < end_; ++id) {
      const Node& n = program_.node(id);
      const Node& next = program_.node(id + 1);
      if (n.op != Op::multiply_plain || next.op != Op::add || place_[id - first_].whole) continue;
      const bool reads_once = (next.inputs[0] == id) != (next.inputs[1] == id);
      fused_[id - first_] = reads_once && views_.last_reader[id] == id + 1;
    }
  }

  struct Place {
    bool whole = false;
    std::size_t buffer = 0;  // when not whole: its block buffer
    NodeId storage = 0;      // when whole: the node whose vector holds its values during the run
    NodeId moved_from = 0;   // when that is not its own: the operand whose vector it takes after the run
    SlotValues tile;         // a plaintext operation's period of values
  };

  const Program& program_;
  const Views& views_;
  NodeId first_, end_;
  std::size_t slots_;
  std::vector<Place> place_;
  std::vector<bool> fused_;
  std::vector<NodeId> read_shifted_;  // the roots the run reads through views, sorted
  std::size_t buffers_ = 0, max_operands_ = 1;
};

// The program on one sample as run_freeing runs it, in runs (TiledRun) with rotations as views; on_largest(id,
// largest) hears every node's largest |slot| (with a tracking loop; a rotation's is its root's), in order. Returns
// the values still held (outputs among them).
template <class OnLargest>
std::vector<SlotValues> run_tiled(const Program& program, const Views& views, const std::vector<SlotValues>& inputs,
                                  Loop& loop, OnLargest on_largest) {
  require_inputs(program, inputs);
  std::vector<SlotValues> v(program.size());
  std::vector<double> largest_of(loop.track ? program.size() : 0, 0.0);
  SpareBuffers spare;
  const auto released_after = [&](NodeId id) {  // the values (roots) read last by node id
    for (const NodeId operand : program.node(id).inputs) {
      if (views.last_reader[views.root[operand]] == id) spare.give(v[views.root[operand]]);
    }
  };
  std::size_t next_input = 0;
  std::vector<double> largest;
  for (NodeId id = 0; id < program.size();) {
    const Node& n = program.node(id);
    if (n.op == Op::input) {
      double m = 0;
      v[id] = evaluate_node(n, v, &inputs[next_input++], loop, nullptr, nullptr, &m);
      if (loop.track) largest_of[id] = m;
      on_largest(id, m);
      ++id;
      continue;
    }
    const NodeId end = TiledRun::end_of(program, views, id);
    TiledRun tiled(program, views, id, end, loop.threads);
    tiled.run(v, spare, loop.threads, loop.track ? &largest : nullptr);
    for (NodeId k = id; k < end; ++k) {
      if (loop.track) largest_of[k] = program.node(k).op == Op::rotate ? largest_of[views.root[k]] : largest[k - id];
      on_largest(k, loop.track ? largest_of[k] : 0.0);
    }
    for (NodeId k = id; k < end; ++k) released_after(k);
    id = end;
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
  const Views views(program);
  if (outputs != nullptr) outputs->clear();
  Loop loop{.threads = threads, .track = true};
  for (const auto& inputs : samples) {
    std::vector<SlotValues> v = run_tiled(program, views, inputs, loop, [&](NodeId id, double largest) {
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
  std::vector<SlotValues> v = run_tiled(program, Views(program), inputs, loop, [](NodeId, double) {});
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
