#pragma once
// The input ranges an encrypted Llama decoder's polynomial pieces must cover, measured on plaintext inputs with
// the exact reference (nn/llama.hpp), then widened by a margin: the causal scores, the mean squares entering both
// RMSNorms and the SiLU's inputs.

#include <cstddef>
#include <vector>

#include "cerium/nn/calibrated_softmax.hpp"
#include "cerium/nn/llama.hpp"

namespace cerium::nn {

// One layer's measured ranges (llama_ranges).
struct LlamaLayerRanges {
  // The lower ends of the measured intervals; each upper end says what its interval bounds.
  ScoreRange scores;                                  // over the keys each row sees (causal)
  double input_mean_square_lower = 0, input_mean_square_upper = 0;  // rows entering input_norm
  double attention_mean_square_lower = 0, attention_mean_square_upper = 0;  // rows entering post_attention_norm
  double activation_bound = 0;                        // |SiLU input| at most

  // The union with another measurement.
  void cover(const LlamaLayerRanges& other);
  // Widened: the scores by `margin` times their half-width on each side, mean squares by margin^2 down and up,
  // the bound by margin. InvalidArgument for a margin below 1.
  LlamaLayerRanges widened(double margin) const;
};

// Per layer, over the inputs (each tokens x hidden, token t at position first_position + t).
std::vector<LlamaLayerRanges> llama_ranges(const LlamaWeights& weights, const std::vector<Matrix>& inputs,
                                           std::size_t first_position = 0);
// One layer's, on its inputs; `outputs` (when given) receives the layer's outputs for the next.
LlamaLayerRanges llama_layer_ranges(const LlamaLayerWeights& weights, const LlamaConfig& config,
                                    const std::vector<Matrix>& inputs, std::size_t first_position = 0,
                                    std::vector<Matrix>* outputs = nullptr);

}  // namespace cerium::nn
