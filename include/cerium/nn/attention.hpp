#pragma once
// Multi-head self-attention on token-major ciphertexts (nn/row_layout.hpp), every head at once.
//
// With Q, K, V packed as rows of one ciphertext, turning K by s whole rows puts key (r + s) mod T beside query r,
// so Q * R^(s stride) K summed over each head's features is the score of query r with key r + s, for all rows and
// heads in one product. The scores of shift s are moved to slot s of their head, so one ciphertext holds the
// scores of head-width shifts (T <= head width: one ciphertext for all): softmax runs once on it (exp, a segment
// sum for the denominators, one reciprocal), not once per shift, which is what keeps the bootstraps few. For the
// output, the weights of shift s are taken back out of slot s and spread over the head, times R^(s stride) V:
// slot (r, head h, feature k) gets sum_s A(r, r + s, h) V(r + s, h, k).
//
// Shifts are folded m at a time (AttentionShape::fold, 4 by default): each head split into m parts of p = w / m
// features, shift g w + j0 + d p computed in part d. Its score is sum_c (q's part c) (key's part c), both turned
// to part d (the query given as its parts, each 0 elsewhere, so nothing else lands there; its masks folded into
// the query projection or RoPE cost no level): m shifts make one graph::product_sum of m^2 products (one
// relinearization), whose sums over each part (log2 p rotations) leave every shift's score at its part's first
// slot. The weighted values mirror it: m shifts' weights spread over their parts, turned part to
// part, times the values masked to the parts, one product sum per score group. A BERT-Base layer: 8,441 -> 2,869
// key switches in attention.
//
// Rows that do not fit one ciphertext span several (AttentionShape::blocks): every key block, turned by every row
// shift, meets every query block that attends to it, and each query block's score groups cover all blocks' keys.
// A causal mask (decoders) skips the key blocks after the query's.
//
// Cost per layer, B blocks of T rows, head width w, fold m: about B^2 T (log2(w / m) + 2) / m rotations for the
// scores and B^2 T (log2(w / m) + 2m) / m for the weighted values (about half under a causal mask), (m + 1) B T
// turns of the key and value blocks, B^2 T / w relinearizations for the values' product sums and B^2 T / m for the
// scores', and per packed score ciphertext one exponential and one reciprocal.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/node.hpp"
#include "cerium/nn/row_layout.hpp"

namespace cerium::nn {

namespace attention_detail {

template <class Ops>
typename Ops::Value add_rotations(Ops& ops, typename Ops::Value x, std::size_t width, int direction) {
  for (std::size_t k = 1; k < width; k *= 2) {
    x = ops.add(x, ops.rotate(x, direction * static_cast<std::int64_t>(k)));
  }
  return x;
}

// R^j for a turn within a head (0 < j < w): one rotation, or with a split s (a power of two) and j >= s, two: by
// j - j mod s and by j mod s, so that the turns need keys 1..s-1 and the multiples of s only.
template <class Ops>
typename Ops::Value turn_in_head(Ops& ops, const typename Ops::Value& x, std::size_t j, std::size_t split) {
  const std::size_t low = split == 0 ? j : j % split;
  if (low == j) return ops.rotate(x, static_cast<std::int64_t>(j));
  typename Ops::Value high = ops.rotate(x, static_cast<std::int64_t>(j - low));
  return low == 0 ? high : ops.rotate(high, static_cast<std::int64_t>(low));
}

}  // namespace attention_detail

// Each aligned segment of `width` slots (a power of two) gets its sum in every slot, for the segments that
// `starts` (1 at a segment's first slot, 0 elsewhere) keeps; the rest become 0. One level (the mask).
template <class Ops>
typename Ops::Value segment_sum(Ops& ops, const typename Ops::Value& x, std::size_t width,
                                const graph::PlainVector& starts) {
  // Slot i holds x_i + ... + x_(i + width - 1): keep the segments' first slots, then spread them forward.
  const typename Ops::Value firsts = ops.multiply(attention_detail::add_rotations(ops, x, width, 1), starts);
  return attention_detail::add_rotations(ops, firsts, width, -1);
}
// Which keys a query may attend to. The rows may span several ciphertexts (`blocks`, each a `layout` of rows):
// row r of block b is token b * layout.rows + r. A query attends to the first `valid_rows` tokens (the rest is
// padding), and with `causal` only to tokens up to its own (a decoder's mask).
struct AttentionShape {
  RowLayout layout;        // of Q, K, V and the output, per ciphertext: features = heads x head width
  std::size_t heads = 1;   // each of head_width() features
  std::size_t valid_rows = 0;  // 0: all rows of all blocks
  bool causal = false;     // a decoder's mask: a query attends to tokens up to its own
  std::size_t blocks = 1;  // ciphertexts of rows
  // Turns within a head by j = 1 .. w-1 place the scores and pick the values: each a key of its own (0), or with
  // a power of two s, turns by j >= s are made of two (j - j mod s, then j mod s), so that their keys are 1..s-1
  // (a matrix product's baby steps at stride s have them) and the multiples of s: fewer keys, more key switches.
  std::size_t turn_split = 0;
  // Row shifts folded into one product sum (a power of two dividing the head width; 0: 4, or the head width if
  // smaller): each fold of m shifts costs one relinearization and log2(w / m) rotations for its scores, and about
  // log2(w / m) + 2m - 1 for its weighted values, instead of m (log2 w + 2) each; the keys and values are masked to
  // m parts of their heads (one level each) and each key block turned m - 1 more ways within its heads.
  std::size_t fold = 0;

  // Features per head; tokens of all blocks; the tokens attended to (valid_rows, 0 resolved); validate():
  // InvalidArgument unless the heads split the features into power-of-two widths and the valid rows fit.
  std::size_t head_width() const { return layout.features / heads; }
  std::size_t folds() const { return fold != 0 ? fold : std::min<std::size_t>(4, head_width()); }  // m
  std::size_t tokens() const { return layout.rows * blocks; }
  std::size_t valid() const { return valid_rows == 0 ? tokens() : valid_rows; }
  void validate() const {
    layout.validate();
    require(heads >= 1 && layout.features % heads == 0, "attention: {} features in {} heads", layout.features,
            heads);
    const std::size_t w = head_width();
    require((w & (w - 1)) == 0, "attention: a head width of {} (a power of two is needed for the segment sums)", w);
    require((turn_split & (turn_split - 1)) == 0, "attention: a turn split of {} (0 or a power of two)", turn_split);
    require(blocks >= 1, "attention: {} blocks of rows", blocks);
    require((folds() & (folds() - 1)) == 0 && w % folds() == 0,
            "attention: a fold of {} (a power of two that divides the head width {})", folds(), w);
    require(valid() >= 1 && valid() <= tokens(), "attention: {} valid rows of {} ({} blocks of {})", valid(),
            tokens(), blocks, layout.rows);
  }
  // 1 at the first slot of every head of every row.
  graph::PlainVector head_starts() const { return head_slot(0); }
  // `value` at slot j of every head of every row.
  graph::PlainVector head_slot(std::size_t j, double value = 1) const {
    std::vector<double> m(layout.stride, 0.0);
    for (std::size_t h = 0; h < heads; ++h) m[h * head_width() + j] = value;
    return graph::PlainVector(m);
  }
  // 1 on part c of every head (features c w/m .. (c + 1) w/m - 1 of the head; m = folds()), 0 elsewhere: one value
  // per feature (a mask to fold into the weights that make the queries), or per slot of every row.
  std::vector<double> part_features(std::size_t c) const {
    const std::size_t part = head_width() / folds();
    std::vector<double> mask(layout.features, 0.0);
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t i = 0; i < part; ++i) mask[h * head_width() + c * part + i] = 1;
    }
    return mask;
  }
  graph::PlainVector head_part(std::size_t c) const {
    std::vector<double> mask = part_features(c);
    mask.resize(layout.stride, 0.0);
    return graph::PlainVector(mask);
  }
  // `value` at slot j0 of every part of every head of every row.
  graph::PlainVector part_slots(std::size_t j0, double value = 1) const {
    const std::size_t part = head_width() / folds();
    std::vector<double> mask(layout.stride, 0.0);
    for (std::size_t h = 0; h < heads; ++h) {
      for (std::size_t c = 0; c < folds(); ++c) mask[h * head_width() + c * part + j0] = value;
    }
    return graph::PlainVector(mask);
  }
  // 1 in the padding slots of every row (features and beyond), 0 in the heads.
  graph::PlainVector outside_heads() const {
    std::vector<double> m(layout.stride, 1.0);
    for (std::size_t f = 0; f < layout.features; ++f) m[f] = 0;
    return graph::PlainVector(m);
  }
  // A query of `query_block` and a key of block b, turned by shift s (key row (r + s) mod rows beside query row
  // r), meet at key index b * rows + s. Score ciphertexts hold head-width runs of key indices: index
  // group * head width + j at slot j of each head.
  std::size_t score_groups() const { return (tokens() + head_width() - 1) / head_width(); }
  // Whether any query of `query_block` attends to a key of `key_block` (else their products are skipped: half of
  // them under a causal mask).
  bool blocks_meet(std::size_t query_block, std::size_t key_block) const {
    return key_block * layout.rows < valid() && (!causal || key_block <= query_block);
  }
  // For query block a and score group g: 1 at slot (r, head h, j) when key index g w + j exists and its key may
  // be attended to by query row r.
  graph::PlainVector valid_scores(std::size_t query_block, std::size_t group) const {
    std::vector<double> m(layout.slots(), 0.0);
    const std::size_t w = head_width(), rows = layout.rows;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t query = query_block * rows + r;
      for (std::size_t j = 0; j < w; ++j) {
        const std::size_t index = group * w + j;
        if (index >= tokens()) continue;
        const std::size_t key = (index / rows) * rows + (r + index % rows) % rows;
        if (key >= valid() || (causal && key > query)) continue;
        for (std::size_t h = 0; h < heads; ++h) m[layout.slot(r, h * w + j)] = 1;
      }
    }
    return graph::PlainVector(m);
  }
};

// How softmax runs, with any types with forward(ops, x) for exp and the reciprocals (and multiply_inverse for
// the latter where they have it: nn::Reciprocal).
//
// exp(score - upper) is badly conditioned when a row's largest score lies far below the bound over all rows: its
// weights and denominator are then tiny, and a ciphertext's absolute noise becomes a large relative error. So
// softmax is taken of score / 2^k (the spread shrinks 2^k-fold) and then squared back k times, each square
// renormalized: softmax(2x) = softmax(x)^2 / sum softmax(x)^2, whose denominators lie in [1 / n, 1] for n valid
// keys, however the scores spread (normalize-and-square).
//
// Scaling: a bootstrap's error is absolute (about 2^-17 of |x| <= 1 at N = 2^16; graph::Executor divides a larger
// value by a power of two first), so a value kept far below 1 pays it as a relative error. So:
//   - the scores are multiplied by score_scale = 2^-k in a mask (free); exp takes score - upper, upper in those
//     units, on [lower - upper, 0] (at most 1, unscaled): a row's first total lies in [lo, n] with
//     lo = exp(lowest row maximum - upper), and `reciprocal` is c / x on [lo, n]; the weights are then c times
//     the true ones (first_scale = 1 / c);
//   - each square's totals (in [1 / n, 1]) go through `renormalize`, c' / x on [1 / n, 1] (square_scale = 1 / c');
//   - then each row's weights times 2 - their true total, by the last scale (correct_totals): the weights are
//     the true ones, and a common relative error of a row (a reciprocal's, a total's) is squared.
// The reciprocals' iterations run on the weights (normalize: whatever error a bootstrap leaves in the guess is
// taken out), and each squaring's squares are never bootstrapped (a flat row's are 1 / n^2).
// calibrated_softmax picks c and c' as powers of two that keep the reciprocals' outputs at most 4. Both
// reciprocals must take 1 (the padding's total) inside their ranges.
template <class Exp, class Reciprocal>
struct AttentionSoftmax {
  double upper = 0;         // scores (times score_scale) are at most this, calibrated on plaintext data
  Exp exp;                  // exp(x) on [lower - upper, 0], scores in score_scale units
  Reciprocal reciprocal;    // c / x on the first totals' range
  double first_scale = 1;   // 1 / c
  double score_scale = 1;   // 2^-k
  int squarings = 0;        // k
  Reciprocal renormalize = reciprocal;  // c' / x on [1 / n, 1]; unused without squarings
  double square_scale = 1;  // 1 / c'
  // Where the planner refreshes a value between the scores and the weights, it does so precisely
  // (graph::bootstrap_precisely): one ciphertext holds rows whose weights are near 1 beside rows whose weights are
  // near 1 / keys, and one bootstrap's absolute error, made for the large ones, is a relative error up to keys
  // times larger on the small ones, doubled by each squaring after it. A Llama-3-8B block's outputs: 8.1 -> 10.2
  // bits (every bootstrap precise, graph::PlanOptions::precise_bootstraps: 18.1), half its bootstraps doubled.
  bool precise_bootstraps = false;
};

namespace attention_detail {

// The groups added up (at least one).
template <class Ops>
typename Ops::Value sum_of(Ops& ops, const std::vector<typename Ops::Value>& groups) {
  std::optional<typename Ops::Value> sum;
  for (const auto& g : groups) sum = sum ? ops.add(*sum, g) : graph::duplicate(g);
  return std::move(*sum);
}

// The groups times the reciprocal of their per-head sums (the padding slots' sums set to 1, inside the
// reciprocal's range: a polynomial far outside its range would blow up there, and a large slot spoils a later
// bootstrap's precision for all). The totals span the reciprocal's whole range across the rows of one ciphertext
// ([0.05, 128] in a Llama block), so a bootstrap's absolute error inside the reciprocal (on its mapped input, say)
// would be a relative error up to 2^11 times its own in the rows with small totals, different in every slot: the
// reciprocal's iterations run on the groups themselves (Reciprocal::multiply_inverse), which takes out whatever
// error its bootstrapped guess carries. (Keeping the totals exact as well, graph::keep_exact, cost a Llama-3-8B
// block 13 more bootstraps for no precision that showed; with the squares' totals too, 1,392 more, the planner
// then refreshing each piece of A V.)
template <class Ops, class Reciprocal>
void normalize(Ops& ops, std::vector<typename Ops::Value>& groups, const Reciprocal& reciprocal,
               const AttentionShape& shape) {
  using Value = typename Ops::Value;
  const Value totals = ops.add(segment_sum(ops, sum_of(ops, groups), shape.head_width(), shape.head_starts()),
                               shape.outside_heads());
  if constexpr (requires { reciprocal.multiply_inverse(ops, totals, groups); }) {
    reciprocal.multiply_inverse(ops, totals, groups);
  } else {  // a reciprocal with forward alone (an exact one)
    const Value inverse = reciprocal.forward(ops, totals);
    for (Value& g : groups) g = ops.multiply(g, inverse);
  }
}

// Weights whose true values (`scale` times them) should total 1 per query and head, made the true values times 2
// minus their total: one Newton step towards 1 / total, which squares a common relative error e of a row's
// weights (1 - e^2). A reciprocal's input and output span a wide range across the rows of one ciphertext, so a
// bootstrap's absolute error becomes a large relative one in the rows with the smallest values (2^-17 was 1.2 %
// in a Llama block's causal rows); this step takes it out. One level and a segment sum's rotations.
template <class Ops>
void correct_totals(Ops& ops, std::vector<typename Ops::Value>& weights, double scale, const AttentionShape& shape) {
  // scale (2 - scale total): the -scale^2 in the mask that keeps the heads' first slots.
  const auto factor = ops.add(
      segment_sum(ops, sum_of(ops, weights), shape.head_width(), shape.head_slot(0, -scale * scale)), 2 * scale);
  for (auto& w : weights) w = ops.multiply(w, factor);
}

// The softmax weights of one query block's score groups (those present), in place.
template <class Ops, class Exp, class Reciprocal>
void softmax_weights(Ops& ops, std::vector<typename Ops::Value>& weights, const std::vector<std::size_t>& groups,
                       std::size_t query_block, const AttentionShape& shape,
                       const AttentionSoftmax<Exp, Reciprocal>& softmax) {
  using Value = typename Ops::Value;
  // The scores, where the stretch bootstrapped precisely starts (traced programs only: a planner places bootstraps).
  std::vector<Value> scores;
  if constexpr (requires { ops.bootstrap_precisely(weights.front(), std::span<const Value>()); }) {
    if (softmax.precise_bootstraps) {
      for (const Value& w : weights) scores.push_back(graph::duplicate(w));
    }
  }
  // exp(score - upper) on the valid keys, normalized; then squared and renormalized `squarings` times.
  for (std::size_t i = 0; i < weights.size(); ++i) {
    ops.label(weights[i], "attention scores");
    weights[i] = ops.multiply(softmax.exp.forward(ops, ops.sub(weights[i], softmax.upper)),
                              shape.valid_scores(query_block, groups[i]));
  }
  normalize(ops, weights, softmax.reciprocal, shape);
  double weight_scale = softmax.first_scale;
  for (int i = 0; i < softmax.squarings; ++i) {
    for (Value& u : weights) u = ops.multiply(u, weight_scale);  // the true weights, within [0, 1]
    for (Value& u : weights) {
      // A row's squares are as small as 1 / keys^2 where its weights are flat: a bootstrap's absolute error on
      // them would be a relative one up to keys^2 times its own. Bootstrapped before the square instead.
      Value square = ops.multiply(u, u);
      graph::keep_exact(ops, square, std::span<const Value>(&u, 1));
      u = std::move(square);
    }
    normalize(ops, weights, softmax.renormalize, shape);
    weight_scale = softmax.square_scale;
  }
  correct_totals(ops, weights, weight_scale, shape);
  if (!scores.empty()) {
    for (const Value& w : weights) graph::bootstrap_precisely(ops, w, std::span<const Value>(scores));
  }
  ops.label(weights.front(), "softmax");
}

}  // namespace attention_detail

namespace attention_detail {

// x turned by s whole rows.
template <class Ops>
typename Ops::Value row_turn(Ops& ops, const typename Ops::Value& x, std::size_t s, const AttentionShape& shape) {
  return s == 0 ? graph::duplicate(x) : ops.rotate(x, static_cast<std::int64_t>(s * shape.layout.stride));
}

// e p slots (p = w / m), e in -(m - 1) .. m - 1 given as e + m - 1: a turn from part c to part d is index c + m - 1 - d.
inline std::int64_t part_steps(std::size_t index, const AttentionShape& shape) {
  const std::size_t m = shape.folds();
  return (static_cast<std::int64_t>(index) - static_cast<std::int64_t>(m - 1)) *
         static_cast<std::int64_t>(shape.head_width() / m);
}

// Whether any query block attends to key block b (its keys and values are turned only then).
inline bool key_block_read(std::size_t b, const AttentionShape& shape) {
  for (std::size_t a = 0; a < shape.blocks; ++a) {
    if (shape.blocks_meet(a, b)) return true;
  }
  return false;
}

// scores[a][g]: query block a's scores (times score_scale) of key indices g w + j at slot j of each head, where a
// meets some key of group g. Shifts are folded m at a time (AttentionShape::folds): shift index g w + j0 + d p
// (p = w / m) goes to part d of its heads. Its dot product is the sum over the m parts c of q's part c times the
// turned key, both moved from part c to part d (q is 0 outside part c, so only part d survives): one product sum
// of m^2 terms for m shifts (one relinearization), whose part sums (log2 p rotations) leave each shift's score at
// its part's first slot. Without folding each shift took a product and log2 w rotations.
//
// A score at the first slot of part d goes to slot d p + j0 by R^-j0; a key for each of those p - 1 steps would
// come on top of R^j0's (the values' picking), so each term turns by w - j0 instead and the group's sum of them
// by -w once, as two turns by -w/2 (whose key add_rotations has): a Llama-3-8B block 323 -> 203 rotation keys.
template <class Ops>
std::vector<std::vector<std::optional<typename Ops::Value>>> folded_scores(
    Ops& ops, std::span<const std::vector<typename Ops::Value>> q_parts, std::span<const typename Ops::Value> k,
    const AttentionShape& shape, double score_scale) {
  using Value = typename Ops::Value;
  const std::size_t rows = shape.layout.rows, w = shape.head_width(), blocks = shape.blocks;
  const std::size_t m = shape.folds(), p = w / m, groups = shape.score_groups();
  // Query parts and key blocks turned from part c to part d, made when first needed.
  std::vector<std::vector<std::optional<Value>>> q_turned(blocks, std::vector<std::optional<Value>>(m * (2 * m - 1)));
  const auto q_at = [&](std::size_t a, std::size_t c, std::size_t d) -> const Value& {
    std::optional<Value>& t = q_turned[a][c * (2 * m - 1) + c + m - 1 - d];
    if (!t) t = c == d ? graph::duplicate(q_parts[a][c]) : ops.rotate(q_parts[a][c], part_steps(c + m - 1 - d, shape));
    return *t;
  };
  std::vector<std::vector<std::optional<Value>>> key_turned(blocks, std::vector<std::optional<Value>>(2 * m - 1));
  const auto key_at = [&](std::size_t b, std::size_t c, std::size_t d) -> const Value& {
    std::optional<Value>& t = key_turned[b][c + m - 1 - d];
    if (!t) t = c == d ? graph::duplicate(k[b]) : ops.rotate(k[b], part_steps(c + m - 1 - d, shape));
    return *t;
  };
  std::vector<std::vector<std::optional<Value>>> scores(blocks, std::vector<std::optional<Value>>(groups));
  std::vector<std::vector<std::optional<Value>>> ahead(blocks, std::vector<std::optional<Value>>(groups));
  const auto accumulate = [&](std::optional<Value>& sum, Value term) {
    sum = sum ? ops.add(*sum, term) : std::move(term);
  };
  const graph::PlainVector part_starts = shape.part_slots(0, score_scale);
  for (std::size_t g = 0; g < groups; ++g) {
    for (std::size_t j0 = 0; j0 < p; ++j0) {
      // The folded shifts' key terms (turned by whole rows), for every query block that meets their blocks.
      std::vector<std::size_t> parts;             // d of the shifts present
      std::vector<std::vector<Value>> key_terms;  // per shift present: its m parts moved to part d
      for (std::size_t d = 0; d < m; ++d) {
        const std::size_t index = g * w + j0 + d * p;
        if (index >= shape.tokens() || !key_block_read(index / rows, shape)) continue;
        parts.push_back(d);
        key_terms.emplace_back();
        for (std::size_t c = 0; c < m; ++c) {
          key_terms.back().push_back(row_turn(ops, key_at(index / rows, c, d), index % rows, shape));
        }
      }
      for (std::size_t a = 0; a < blocks; ++a) {
        std::vector<Value> left, right;
        for (std::size_t i = 0; i < parts.size(); ++i) {
          if (!shape.blocks_meet(a, (g * w + j0 + parts[i] * p) / rows)) continue;
          for (std::size_t c = 0; c < m; ++c) {
            left.push_back(graph::duplicate(q_at(a, c, parts[i])));
            right.push_back(graph::duplicate(key_terms[i][c]));
          }
        }
        if (left.empty()) continue;
        const Value products = graph::product_sum(ops, std::span<const Value>(left), std::span<const Value>(right));
        Value at_starts = ops.multiply(add_rotations(ops, products, p, 1), part_starts);
        if (j0 == 0) {
          accumulate(scores[a][g], std::move(at_starts));
        } else {
          accumulate(ahead[a][g], turn_in_head(ops, at_starts, w - j0, shape.turn_split));
        }
      }
    }
  }
  const auto back = -static_cast<std::int64_t>(w / 2);
  for (std::size_t a = 0; a < blocks; ++a) {
    for (std::size_t g = 0; g < groups; ++g) {
      if (ahead[a][g]) accumulate(scores[a][g], ops.rotate(ops.rotate(*ahead[a][g], back), back));
    }
  }
  return scores;
}

// out[a] = sum over keys of query block a's weights times the values, folded alike: the weights of the m shifts
// j0 + d p picked, turned to the parts' first slots and spread over their parts (log2 p rotations) make R, whose
// part d holds shift d's weight. Part c of the output takes shift c + e's weight from R turned by e p, times that
// shift's values masked to part c: with M_e = sum_c mask_c V(c + e) (shared by every query block), out = sum_e
// R^(e p) M_e, one product sum a group. A query block's weights are 0 at the keys it may not attend to, so the
// values of every block enter M. weights[a][g]: query block a's weights of group g, or null where it has none.
template <class Ops>
std::vector<std::optional<typename Ops::Value>> weighted_values(
    Ops& ops, const std::vector<std::vector<const typename Ops::Value*>>& weights,
    std::span<const typename Ops::Value> v, const AttentionShape& shape) {
  using Value = typename Ops::Value;
  const std::size_t rows = shape.layout.rows, w = shape.head_width(), blocks = shape.blocks;
  const std::size_t m = shape.folds(), p = w / m;
  std::vector<std::optional<Value>> out(blocks);
  const auto accumulate = [&](std::optional<Value>& sum, Value term) {
    sum = sum ? ops.add(*sum, term) : std::move(term);
  };
  for (std::size_t g = 0; g < shape.score_groups(); ++g) {
    std::vector<std::vector<std::optional<Value>>> spread_values(p, std::vector<std::optional<Value>>(2 * m - 1));
    for (std::size_t j0 = 0; j0 < p; ++j0) {
      for (std::size_t d = 0; d < m; ++d) {
        const std::size_t index = g * w + j0 + d * p;
        if (index >= shape.tokens() || !key_block_read(index / rows, shape)) continue;
        const Value value = row_turn(ops, v[index / rows], index % rows, shape);
        for (std::size_t c = 0; c < m; ++c) {
          Value part = m == 1 ? graph::duplicate(value) : ops.multiply(value, shape.head_part(c));
          accumulate(spread_values[j0][d + m - 1 - c], std::move(part));  // e = d - c
        }
      }
    }
    for (std::size_t a = 0; a < blocks; ++a) {
      if (weights[a][g] == nullptr) continue;
      std::vector<Value> left, right;
      for (std::size_t j0 = 0; j0 < p; ++j0) {
        Value picked = ops.multiply(*weights[a][g], shape.part_slots(j0));
        if (j0 != 0) picked = turn_in_head(ops, picked, j0, shape.turn_split);
        const Value spread = add_rotations(ops, picked, p, -1);  // over each part
        for (std::size_t e = 0; e + 1 < 2 * m; ++e) {
          if (!spread_values[j0][e]) continue;
          const std::int64_t steps = part_steps(e, shape);
          left.push_back(steps == 0 ? graph::duplicate(spread) : ops.rotate(spread, steps));
          right.push_back(graph::duplicate(*spread_values[j0][e]));
        }
      }
      if (left.empty()) continue;
      accumulate(out[a], graph::product_sum(ops, std::span<const Value>(left), std::span<const Value>(right)));
    }
  }
  return out;
}

}  // namespace attention_detail

// Softmax over the keys of each query and head, then the weighted sum of the values, for rows spread over
// shape.blocks ciphertexts (k, v: one value per block; the result likewise), the queries given by parts:
// q_parts[a][c] is query block a with part c of every head kept and the rest 0 (AttentionShape::head_part, c <
// folds()), made where the mask costs no level (in the query projection's weights, in RoPE's masks), or see the
// overload below. The queries carry the 1 / sqrt(head width) already (fold it into the query weights).
//
// Every key block is turned once per shift and meets every query block that attends to it: blocks^2 x rows
// score terms and as many for the output (about half under a causal mask), folded into product sums
// (attention_detail::folded_scores, weighted_values), each query block's softmax over score groups covering all
// blocks' keys.
template <class Ops, class Exp, class Reciprocal>
std::vector<typename Ops::Value> self_attention(Ops& ops, std::span<const std::vector<typename Ops::Value>> q_parts,
                                                std::span<const typename Ops::Value> k,
                                                std::span<const typename Ops::Value> v, const AttentionShape& shape,
                                                const AttentionSoftmax<Exp, Reciprocal>& softmax) {
  using Value = typename Ops::Value;
  shape.validate();
  require(q_parts.size() == shape.blocks && k.size() == shape.blocks && v.size() == shape.blocks,
          "attention: {}, {} and {} blocks of queries, keys and values for a shape of {}", q_parts.size(), k.size(),
          v.size(), shape.blocks);
  require(softmax.squarings >= 0, "attention: {} squarings", softmax.squarings);
  for (const auto& parts : q_parts) {
    require(parts.size() == shape.folds(), "attention: {} query parts for a fold of {}", parts.size(), shape.folds());
  }
  auto scores = attention_detail::folded_scores(ops, q_parts, k, shape, softmax.score_scale);
  // Per query block: the weights of the groups it has.
  std::vector<std::vector<Value>> weights(shape.blocks);
  std::vector<std::vector<const Value*>> by_group(shape.blocks);
  for (std::size_t a = 0; a < shape.blocks; ++a) {
    std::vector<std::size_t> present;  // the groups' indices
    for (std::size_t g = 0; g < scores[a].size(); ++g) {
      if (!scores[a][g]) continue;
      present.push_back(g);
      weights[a].push_back(std::move(*scores[a][g]));
    }
    attention_detail::softmax_weights(ops, weights[a], present, a, shape, softmax);
    by_group[a].assign(scores[a].size(), nullptr);
    for (std::size_t i = 0; i < present.size(); ++i) by_group[a][present[i]] = &weights[a][i];
  }
  std::vector<std::optional<Value>> out = attention_detail::weighted_values(ops, by_group, v, shape);
  std::vector<Value> result;
  for (auto& o : out) {
    ops.label(*o, "attention");
    result.push_back(std::move(*o));
  }
  return result;
}

// The same with whole query blocks, split into their parts here (a mask each: one level more on the scores' path
// than parts made where the mask is free; none unfolded).
template <class Ops, class Exp, class Reciprocal>
std::vector<typename Ops::Value> self_attention(Ops& ops, std::span<const typename Ops::Value> q,
                                                std::span<const typename Ops::Value> k,
                                                std::span<const typename Ops::Value> v, const AttentionShape& shape,
                                                const AttentionSoftmax<Exp, Reciprocal>& softmax) {
  using Value = typename Ops::Value;
  shape.validate();
  std::vector<std::vector<Value>> parts(q.size());
  for (std::size_t a = 0; a < q.size(); ++a) {
    for (std::size_t c = 0; c < shape.folds(); ++c) {
      parts[a].push_back(shape.folds() == 1 ? graph::duplicate(q[a]) : ops.multiply(q[a], shape.head_part(c)));
    }
  }
  return self_attention(ops, std::span<const std::vector<Value>>(parts), k, v, shape, softmax);
}

// One ciphertext of rows (shape.blocks = 1).
template <class Ops, class Exp, class Reciprocal>
typename Ops::Value self_attention(Ops& ops, const typename Ops::Value& q, const typename Ops::Value& k,
                                   const typename Ops::Value& v, const AttentionShape& shape,
                                   const AttentionSoftmax<Exp, Reciprocal>& softmax) {
  using Value = typename Ops::Value;
  auto out = self_attention(ops, std::span<const Value>(&q, 1), std::span<const Value>(&k, 1),
                            std::span<const Value>(&v, 1), shape, softmax);
  return std::move(out.front());
}

}  // namespace cerium::nn
