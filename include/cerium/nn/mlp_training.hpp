#pragma once
// Encrypted training of a two-layer perceptron (inputs -> hidden -> outputs) by mini-batch SGD on squared error,
// data and weights encrypted, written once over any ops object: trace one step into a program graph (the planner
// places its bootstraps), run it eagerly, or on doubles (graph::PlainOps) for the twin.
//
// Packing (feature-major batch lanes): a ciphertext of blocks x batch slots, slot f * batch + b holding feature f
// of example b, blocks the next power of two of the widest layer.
//   - X: the batch's inputs; T: its one-hot targets (class k at block k, repeated every bit_ceil(outputs) blocks).
//   - Weight row j of W1 (hidden rows) and row k of W2 (outputs rows): a ciphertext each, entry f of the row at
//     every lane of block f, so that a row times X is all of its products at once.
// One step, for every example of the batch at once:
//   Z1 holds z_j = sum over blocks of X W1_j in every block of class j modulo bit_ceil(hidden) (rotate-and-add
//   within a group of blocks, a class mask, then by whole groups once for all rows: layer()), H = act(Z1), Y
//   likewise from H and the W2_k (classes modulo bit_ceil(outputs));
//   D2 = Y - T; D1 = act'(Z1) sum_k spread_k(D2) W2_k, spread_k copying class k to every block (spreads());
//   W2_k -= (rate / batch) lane_sum(spread_k(D2) H), W1_j -= (rate / batch) lane_sum(spread_j(D1) X), lane_sum
//   summing the lanes of each block (nn::segment_sum).
// act(z) = c0 + c1 z + c2 z^2 (a quadratic: one level, its derivative exact).
//
// Compact weights (MlpShape::compact_weights): between steps the weights travel as two ciphertexts, W1 with entry
// (j, f) at lane j of block f and W2 likewise, instead of one ciphertext a row (each row replicated over the batch
// lanes). A step expands row j by turning lane j to lane 0, masking it and spreading it over the block (1 level,
// log2(batch) + 1 rotations) for the forward and backward passes, and takes each row's step, summed at lane 0 and
// moved to lane j (the rows' moves shared: rows - 1 rotations in all), off the compact weights: refreshing the
// weights takes 2 bootstraps a step instead of hidden + outputs, and a Fashion-MNIST 784-32-10 step 3 in all
// instead of 44. Needs hidden and outputs at most the batch.
//
// Weights read as real and only where valid: a step reads each weight ciphertext as w + conj(w) (twice its real part:
// one conjugation) times 1/2 in its valid blocks (inputs for W1, hidden for W2) and 0 elsewhere, a mask the step
// multiplies by anyway when compact (the lane mask of the expansion) and one level otherwise. Bootstrapping leaves
// noise of about 2^-16 in every slot, imaginary parts and unused blocks included, and the step does not correct
// either: SGD on the squared error extended to complex weights pushes imaginary parts apart (the loss falls
// without bound along them: (i y)^2 = -y^2), and W2's unused blocks reach Y and D1 through every copy of H and Z1.
// Without the cleaning, a Fashion-MNIST run went from 2^-16 to overflow in ten steps (simulated, and on the GPU
// after 1,000 steps); the twin's arithmetic is unchanged by it (its weights are real and zero there).
//
// Rotations: log2(blocks) block steps and the lane steps +-1 .. +-batch/2, and the conjugation. Depth: about 13
// levels a step.

#include <array>
#include <bit>
#include <cstddef>
#include <complex>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/node.hpp"
#include "cerium/nn/attention.hpp"  // segment_sum
#include "cerium/nn/bert.hpp"       // Matrix

namespace cerium::nn {

// The network, the batch, the activation and the step's options.
struct MlpShape {
  // The layers' widths (inputs -> hidden -> outputs) and SGD's learning rate.
  std::size_t inputs = 64, hidden = 32, outputs = 10;
  std::size_t batch = 32;                          // examples per step (a power of two)
  std::array<double, 3> activation = {0, 0.5, 0.125};  // c0 + c1 z + c2 z^2
  double learning_rate = 0.1;
  // Pin a bootstrap on every updated weight row: the weights leave each step fresh, at the bootstrapper's output
  // level, so a plan whose weights enter at that level serves every step (the planner places the others).
  bool refresh_weights = false;
  bool compact_weights = false;  // see above

  std::size_t blocks() const;  // the next power of two of the widest layer
  std::size_t slots() const { return blocks() * batch; }  // a ciphertext's: blocks x batch
  // InvalidArgument for zero sizes or a batch that is not a power of two.
  void validate() const;
};

// W1 (hidden x inputs) and W2 (outputs x hidden), row-major.
struct MlpWeights {
  // W1, hidden x inputs.
  Matrix w1, w2;  // W2, outputs x hidden
  // N(0, 1 / fan-in) from a seed.
  static MlpWeights seeded(const MlpShape& shape, std::uint64_t seed);
};

// The training step of the header comment for one MlpShape, and the packing it needs.
class MlpTrainer {
 public:
  // Makes the step's masks; InvalidArgument for a shape that does not validate.
  explicit MlpTrainer(MlpShape shape);

  const MlpShape& shape() const { return shape_; }  // the shape it trains

  // The packed slot vectors: a batch (batch x inputs, rows the examples), its labels (one class each), the weight
  // rows. InvalidArgument for other sizes or a label out of range.
  std::vector<double> pack_inputs(const Matrix& batch) const;
  std::vector<double> pack_targets(std::span<const std::uint8_t> labels) const;
  // W1's rows, then W2's (or the two compact ciphertexts' slots with compact_weights).
  std::vector<std::vector<double>> pack_weights(const MlpWeights& weights) const;
  // How many ciphertexts carry the weights: hidden + outputs rows, or 2 compact.
  std::size_t weight_count() const { return shape_.compact_weights ? 2 : shape_.hidden + shape_.outputs; }
  // Weights back from the decoded weight ciphertexts (rows: lane 0 of each block; compact: lane j of block f).
  MlpWeights unpack_weights(const std::vector<std::vector<std::complex<double>>>& rows) const;

  // One SGD step: weights (weight_count() ciphertexts, as pack_weights) updated on the batch x with targets t.
  template <class Ops>
  std::vector<typename Ops::Value> step(Ops& ops, const typename Ops::Value& x, const typename Ops::Value& t,
                                        std::span<const typename Ops::Value> weights) const {
    using Value = typename Ops::Value;
    require(weights.size() == weight_count(), "mlp step: {} weight ciphertexts for {}", weights.size(),
            weight_count());
    if (!shape_.compact_weights) {
      const std::vector<Value> steps = row_steps(ops, x, t, std::span<const Value>(weight_rows(ops, weights)));
      std::vector<Value> out;
      for (std::size_t r = 0; r < steps.size(); ++r) {
        const Value next = ops.sub(weights[r], steps[r]);
        out.push_back(shape_.refresh_weights ? ops.bootstrap(next) : next);
      }
      ops.label(out.back(), "update");
      return out;
    }
    // Compact: each row's step is made at lane 0, moved to its own lane (to_lanes) and the steps are taken off
    // the compact weights themselves: no mask level after the step, and the expanded rows' rounding does not
    // enter the weights.
    const std::vector<Value> rows = weight_rows(ops, weights);
    const std::vector<Value> steps = row_steps(ops, x, t, std::span<const Value>(rows));
    std::vector<Value> out;
    for (const std::size_t part : {std::size_t{0}, std::size_t{1}}) {
      const std::size_t first = part == 0 ? 0 : shape_.hidden, count = part == 0 ? shape_.hidden : shape_.outputs;
      const Value total = to_lanes(ops, std::span<const Value>(steps).subspan(first, count));
      const Value next = ops.sub(weights[part], total);
      out.push_back(shape_.refresh_weights ? ops.bootstrap(next) : next);
    }
    ops.label(out.back(), "update");
    return out;
  }

  // The batch's outputs Y (a forward pass alone), packed like the targets.
  template <class Ops>
  typename Ops::Value predict(Ops& ops, const typename Ops::Value& x,
                              std::span<const typename Ops::Value> weights) const {
    using Value = typename Ops::Value;
    const MlpShape& s = shape_;
    const std::vector<Value> rows = weight_rows(ops, weights);
    const Value z1 = layer(ops, x, std::span<const Value>(rows).first(s.hidden), hidden_classes_);
    const Value h = ops.add(ops.add(ops.multiply(ops.multiply(z1, z1), s.activation[2]),
                                    ops.multiply(z1, s.activation[1])),
                            s.activation[0]);
    return layer(ops, h, std::span<const Value>(rows).subspan(s.hidden), output_classes_);
  }

 private:
  // The weight rows a step reads (see the file comment): each weight ciphertext as twice its real part, its valid
  // blocks halved and the rest cleared; compact weights expanded to rows.
  template <class Ops>
  std::vector<typename Ops::Value> weight_rows(Ops& ops, std::span<const typename Ops::Value> weights) const {
    using Value = typename Ops::Value;
    std::vector<Value> twice_real;
    for (const Value& w : weights) twice_real.push_back(ops.add(w, ops.conjugate(w)));
    if (shape_.compact_weights) return expand(ops, std::span<const Value>(twice_real));
    std::vector<Value> rows;
    for (std::size_t r = 0; r < twice_real.size(); ++r) {
      rows.push_back(ops.multiply(twice_real[r], r < shape_.hidden ? half_input_blocks_ : half_hidden_blocks_));
    }
    return rows;
  }

  // Compact W1 and W2 (each twice its real part) to rows: row r is lane r of every valid block in every lane of
  // the block. The compact weights turned by r lanes (each turn one rotation of an earlier one, by its lowest set
  // bit) put lane r at lane 0, kept alone there and halved in the valid blocks (one level) and spread over the
  // block by log2(batch) rotations towards the higher lanes, which never leave the block: 5 + 1 rotations a row
  // at batch 32 instead of a lane sum's 10, one level fewer.
  template <class Ops>
  std::vector<typename Ops::Value> expand(Ops& ops, std::span<const typename Ops::Value> compact) const {
    using Value = typename Ops::Value;
    std::vector<Value> rows;
    for (const std::size_t part : {std::size_t{0}, std::size_t{1}}) {
      std::vector<Value> turned;
      turned.push_back(graph::duplicate(compact[part]));
      for (std::size_t r = 1; r < (part == 0 ? shape_.hidden : shape_.outputs); ++r) {
        const std::size_t low = r & (~r + 1);
        turned.push_back(ops.rotate(turned[r - low], static_cast<std::int64_t>(low)));
      }
      const graph::PlainVector& mask = part == 0 ? half_input_lane_starts_ : half_hidden_lane_starts_;
      for (const Value& v : turned) {
        rows.push_back(attention_detail::add_rotations(ops, ops.multiply(v, mask), shape_.batch, -1));
      }
    }
    return rows;
  }

  // sum_r R^-r values[r]: each value's lane 0 moved to lane r (compact steps). The first half's sum plus the
  // second half's turned by the half, recursively: values.size() - 1 rotations by powers of two.
  template <class Ops>
  typename Ops::Value to_lanes(Ops& ops, std::span<const typename Ops::Value> values) const {
    if (values.size() == 1) return graph::duplicate(values.front());
    const std::size_t half = std::bit_ceil(values.size()) / 2;
    const typename Ops::Value high = to_lanes(ops, values.subspan(half));
    return ops.add(to_lanes(ops, values.first(half)), ops.rotate(high, -static_cast<std::int64_t>(half)));
  }

  // The SGD steps of the weight rows (hidden + outputs): rate / batch * lane_sum(spread(D) A) per row, in every
  // lane (the rows' form), or with compact weights at lane 0 of each block only (the sum of the block's lanes by
  // log2(batch) rotations towards the lower lanes, 5 at batch 32 instead of 10, and one level fewer): step()
  // moves row r's to lane r (to_lanes).
  template <class Ops>
  std::vector<typename Ops::Value> row_steps(Ops& ops, const typename Ops::Value& x, const typename Ops::Value& t,
                                             std::span<const typename Ops::Value> weights) const {
    using Value = typename Ops::Value;
    const MlpShape& s = shape_;
    const std::span<const Value> w1 = weights.first(s.hidden), w2 = weights.subspan(s.hidden);
    // Forward (each total in every block of its class: see layer()).
    const Value z1 = layer(ops, x, w1, hidden_classes_);
    const Value h = ops.add(ops.add(ops.multiply(ops.multiply(z1, z1), s.activation[2]),
                                    ops.multiply(z1, s.activation[1])),
                            s.activation[0]);
    const Value y = layer(ops, h, w2, output_classes_);
    ops.label(y, "forward");
    // Backward: D2 = Y - T, D1 = act'(Z1) sum_k spread_k(D2) W2_k.
    const Value d2 = ops.sub(y, t);  // T repeats its classes over the groups as Y does
    const std::vector<Value> spread2 = spreads(ops, d2, output_classes_);
    // One relinearization for the whole sum (graph::product_sum).
    const Value back = graph::product_sum(ops, std::span<const Value>(spread2), w2.first(s.outputs));
    const Value slope = ops.add(ops.multiply(z1, 2 * s.activation[2]), s.activation[1]);
    const Value d1 = ops.multiply(back, slope);
    ops.label(d1, "backward");
    // Steps: rate / batch * lane_sum(spread(D) A), the rate folded into the mask of the valid blocks (and of the
    // row's lane when compact).
    std::vector<Value> out;
    const auto summed = [&](const Value& g) {
      return s.compact_weights ? attention_detail::add_rotations(ops, g, s.batch, 1) : lane_sum(ops, g);
    };
    // D1 vanishes outside the hidden blocks (every term of its sum has a W2 row's factor): its groups summed first
    // repeat them over the groups.
    const std::vector<Value> spread1 =
        spreads(ops, block_sum(ops, d1, std::bit_ceil(s.hidden), s.blocks()), hidden_classes_);
    for (std::size_t j = 0; j < s.hidden; ++j) {
      const Value g = summed(ops.multiply(spread1[j], x));
      out.push_back(ops.multiply(g, s.compact_weights ? input_rate_first_lane_ : input_rate_));
    }
    for (std::size_t k = 0; k < s.outputs; ++k) {
      const Value g = summed(ops.multiply(spread2[k], h));
      out.push_back(ops.multiply(g, s.compact_weights ? hidden_rate_first_lane_ : hidden_rate_));
    }
    return out;
  }
  // Row j's products with every example summed over the blocks, in every block of class j modulo the group
  // (bit_ceil(rows) blocks): each product summed over one group's shifts (log2(group) rotations), kept in its class
  // (one mask level) and the classes summed over the groups' shifts once for all rows: rows log2(group) +
  // log2(blocks / group) rotations instead of rows log2(blocks) with a total per row at its block alone
  // (Fashion-MNIST's hidden layer: 165 against 320). The copies past the first group meet only values that vanish
  // there (Z1 and H: W2's rows and the valid-block masks) or the same copies (Y: T repeats its classes too).
  template <class Ops>
  typename Ops::Value layer(Ops& ops, const typename Ops::Value& a, std::span<const typename Ops::Value> rows,
                            const std::vector<graph::PlainVector>& classes) const {
    const std::size_t group = std::bit_ceil(rows.size());
    std::optional<typename Ops::Value> sum;
    for (std::size_t j = 0; j < rows.size(); ++j) {
      const auto term = ops.multiply(block_sum(ops, ops.multiply(a, rows[j]), 1, group), classes[j]);
      sum = sum ? ops.add(*sum, term) : graph::duplicate(term);
    }
    return block_sum(ops, *sum, group, shape_.blocks());
  }
  // Every block gets the sum of the blocks k shifts apart for k = first, 2 first, .. below last (rotations by
  // whole blocks; 1 .. blocks(): the sum of all blocks).
  template <class Ops>
  typename Ops::Value block_sum(Ops& ops, typename Ops::Value a, std::size_t first, std::size_t last) const {
    for (std::size_t k = first; k < last; k *= 2) {
      a = ops.add(a, ops.rotate(a, static_cast<std::int64_t>(k * shape_.batch)));
    }
    return a;
  }
  // Class j of `grouped` (a value whose block b repeats block b mod group, group = bit_ceil(classes.size())) in
  // every block: kept by its mask (one level) and spread over a group, log2(group) rotations each instead of a
  // spread over all blocks' log2(blocks).
  template <class Ops>
  std::vector<typename Ops::Value> spreads(Ops& ops, const typename Ops::Value& grouped,
                                           const std::vector<graph::PlainVector>& classes) const {
    const std::size_t group = std::bit_ceil(classes.size());
    std::vector<typename Ops::Value> out;
    for (const graph::PlainVector& mask : classes) {
      out.push_back(block_sum(ops, ops.multiply(grouped, mask), 1, group));
    }
    return out;
  }
  // Each block's lanes summed, the sum in every lane of the block.
  template <class Ops>
  typename Ops::Value lane_sum(Ops& ops, const typename Ops::Value& a) const {
    return segment_sum(ops, a, shape_.batch, lane_starts_);
  }

  MlpShape shape_;
  // 1 in the blocks j modulo bit_ceil(hidden) (bit_ceil(outputs)), j below hidden (outputs): the layers' and
  // spreads' classes.
  std::vector<graph::PlainVector> hidden_classes_, output_classes_;
  graph::PlainVector lane_starts_;               // 1 at each block's first lane
  graph::PlainVector input_rate_, hidden_rate_;  // rate / batch in the valid input (hidden) blocks
  // The same at each block's first lane only (compact weights).
  graph::PlainVector input_rate_first_lane_, hidden_rate_first_lane_;
  // 1/2 in the valid input (hidden) blocks: a weight row's twice-real part to its real part (rows), and the same at
  // each block's first lane only (compact: expand()'s lane mask).
  graph::PlainVector half_input_blocks_, half_hidden_blocks_;
  graph::PlainVector half_input_lane_starts_, half_hidden_lane_starts_;
};

// The same training in double precision on matrices, written directly (loops over examples): the reference an
// encrypted run and its twin are checked against. x: batch x inputs; returns the updated weights.
MlpWeights mlp_step_reference(const MlpShape& shape, const MlpWeights& weights, const Matrix& x,
                              std::span<const std::uint8_t> labels);
// Outputs (examples x outputs) of the network on x.
Matrix mlp_forward_reference(const MlpShape& shape, const MlpWeights& weights, const Matrix& x);

}  // namespace cerium::nn
