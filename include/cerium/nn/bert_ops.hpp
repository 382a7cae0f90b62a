#pragma once
// The pieces of nn/bert.hpp's reference, exact in double precision, each on the rows of a Matrix (one row a token).
// In a namespace of their own: generic names (add, linear) that the encrypted layers may want too.

#include <cstddef>
#include <span>

#include "cerium/nn/bert.hpp"

namespace cerium::nn::bert_ops {

// x W^T + b per row (W out x in; b empty: no bias). MismatchError when x's columns are not W's inputs or b is
// neither empty nor one per output.
Matrix linear(const LinearWeights& weights, const Matrix& x);
// a + b, element by element. MismatchError for other shapes.
Matrix add(const Matrix& a, const Matrix& b);
// Per row: (x - mean) / sqrt(variance + eps) * gamma + beta, the variance biased (divided by the columns).
Matrix layer_norm(const Matrix& x, const NormWeights& norm, double eps);
// x Phi(x) with the normal distribution's exact CDF: BERT's "gelu", not the tanh approximation.
double gelu(double x);
// exp(v_i - max) / sum, in place.
void softmax(std::span<double> row);
// Multi-head scaled dot-product attention: q, k, v tokens x hidden, split into `heads` column blocks; each row
// attends to the first valid_tokens rows (0: all).
Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v, std::size_t heads, std::size_t valid_tokens = 0);

}  // namespace cerium::nn::bert_ops
