#pragma once
// The polynomial pieces of a transformer layer chosen from calibrated ranges, shared by the encoder (BERT) and the
// decoder (Llama): attention's softmax (exp, the reciprocals and the normalize-and-square schedule of
// nn/attention.hpp) from the scores' range, and the activation's degree from its input bound.

#include <cstddef>

#include "cerium/nn/attention.hpp"
#include "cerium/nn/nonlinear.hpp"

namespace cerium::nn {

// Scores (q k / sqrt(head width)) over the keys each query attends to.
struct ScoreRange {
  // The least score.
  double lower = 0, upper = 0;  // the greatest
  double lowest_row_max = 0;    // the least, over queries and heads, of a query's largest score
};

// What calibrated_softmax aims at.
struct SoftmaxTolerances {
  double exp = 1e-5;          // absolute, on exp(score - upper) (at most 1)
  double reciprocal = 1e-4;   // relative
  // Softmax squares back from score / 2^k, k the least with (upper - lowest row maximum) / 2^k at most this (each
  // squaring costs about a reciprocal's depth; a wide spread costs precision).
  double spread = 3;
  // Bootstrap the stretch from the scores to the weights precisely (AttentionSoftmax::precise_bootstraps).
  bool precise_bootstraps = false;
};

// keys: the most keys a query attends to. InvalidArgument for an empty range or no keys.
AttentionSoftmax<Exp, Reciprocal> calibrated_softmax(const ScoreRange& scores, std::size_t keys,
                                                     const SoftmaxTolerances& tolerances = {});

// requested when positive; else the least of 16, 32, 64, 96, 128 at least 4 x bound, or 192 (a GELU or SiLU
// interpolant on [-bound, bound] whose error stays invisible on all-MiniLM-L6-v2).
int activation_degree(int requested, double bound);

}  // namespace cerium::nn
