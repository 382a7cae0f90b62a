#pragma once
// The input ranges an encrypted BERT's polynomial pieces must cover, measured on plaintext inputs with the exact
// reference (nn/bert.hpp): a polynomial is only right inside its range, so these are calibrated on data like the
// data to be encrypted, then widened by a margin.

#include <cstddef>
#include <vector>

#include "cerium/nn/bert.hpp"

namespace cerium::nn {

// One layer's measured ranges (bert_ranges).
struct BertLayerRanges {
  // The lower ends of the measured intervals; each upper end says what its interval bounds.
  double score_lower = 0, score_upper = 0;  // q k / sqrt(head width) over the valid keys
  double lowest_row_max = 0;                // the least, over rows and heads, of a row's largest score
  double attention_variance_lower = 0, attention_variance_upper = 0;  // of the rows entering attention_norm
  double activation_bound = 0;                                        // |GELU input| at most
  double output_variance_lower = 0, output_variance_upper = 0;        // of the rows entering output_norm

  // The union with another measurement.
  void cover(const BertLayerRanges& other);
  // Widened: intervals by `margin` times their half-width on each side, variance intervals by the factor
  // margin^2 down and up, the bound by margin.
  BertLayerRanges widened(double margin) const;
};

// Per layer, over the inputs (each tokens x hidden, its first valid_tokens rows attended; 0: all).
std::vector<BertLayerRanges> bert_ranges(const BertWeights& weights, const std::vector<Matrix>& inputs,
                                         std::size_t valid_tokens = 0);

}  // namespace cerium::nn
