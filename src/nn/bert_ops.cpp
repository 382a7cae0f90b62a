#include "cerium/nn/bert_ops.hpp"

#include <algorithm>
#include <cmath>

#include "cerium/core/check.hpp"

namespace cerium::nn::bert_ops {

Matrix linear(const LinearWeights& weights, const Matrix& x) {
  const Matrix& w = weights.weight;
  require<MismatchError>(x.cols == w.cols && (weights.bias.empty() || weights.bias.size() == w.rows),
                         "bert: a linear layer of {} x {} (bias {}) applied to rows of {}", w.rows, w.cols,
                         weights.bias.size(), x.cols);
  Matrix y = Matrix::zeros(x.rows, w.rows);
  // Rows on OpenMP's threads (a Llama block's reference is 128 rows through 4096 x 14336 maps); each sum in the
  // same order whatever the count.
  const auto rows = static_cast<std::ptrdiff_t>(x.rows);
#pragma omp parallel for schedule(static) if (x.rows * w.rows * w.cols >= (std::size_t{1} << 24))
  for (std::ptrdiff_t r = 0; r < rows; ++r) {
    const auto t = static_cast<std::size_t>(r);
    const double* in = x.values.data() + t * x.cols;
    const auto store = [&](std::size_t o, double sum) {
      y.at(t, o) = weights.bias.empty() ? sum : sum + weights.bias[o];
    };
    // Four outputs at a time: four independent chains of additions instead of one (each still summed in index
    // order, so every output is the one-at-a-time sum's double).
    std::size_t o = 0;
    for (; o + 4 <= w.rows; o += 4) {
      const double* r0 = w.values.data() + o * w.cols;
      const double* r1 = r0 + w.cols;
      const double* r2 = r1 + w.cols;
      const double* r3 = r2 + w.cols;
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (std::size_t i = 0; i < w.cols; ++i) {
        s0 += r0[i] * in[i];
        s1 += r1[i] * in[i];
        s2 += r2[i] * in[i];
        s3 += r3[i] * in[i];
      }
      store(o, s0);
      store(o + 1, s1);
      store(o + 2, s2);
      store(o + 3, s3);
    }
    for (; o < w.rows; ++o) {
      const double* row = w.values.data() + o * w.cols;
      double sum = 0;
      for (std::size_t i = 0; i < w.cols; ++i) sum += row[i] * in[i];
      store(o, sum);
    }
  }
  return y;
}

Matrix add(const Matrix& a, const Matrix& b) {
  require<MismatchError>(a.rows == b.rows && a.cols == b.cols, "bert: adding {} x {} to {} x {}", a.rows, a.cols,
                         b.rows, b.cols);
  Matrix sum = a;
  for (std::size_t i = 0; i < sum.values.size(); ++i) sum.values[i] += b.values[i];
  return sum;
}

Matrix layer_norm(const Matrix& x, const NormWeights& norm, double eps) {
  require<MismatchError>(norm.gamma.size() == x.cols && norm.beta.size() == x.cols,
                         "bert: a LayerNorm of {} (beta {}) applied to rows of {}", norm.gamma.size(),
                         norm.beta.size(), x.cols);
  Matrix y = Matrix::zeros(x.rows, x.cols);
  const double n = static_cast<double>(x.cols);
  for (std::size_t t = 0; t < x.rows; ++t) {
    double mean = 0;
    for (std::size_t c = 0; c < x.cols; ++c) mean += x.at(t, c);
    mean /= n;
    double variance = 0;
    for (std::size_t c = 0; c < x.cols; ++c) variance += (x.at(t, c) - mean) * (x.at(t, c) - mean);
    variance /= n;
    const double inverse = 1.0 / std::sqrt(variance + eps);
    for (std::size_t c = 0; c < x.cols; ++c) y.at(t, c) = (x.at(t, c) - mean) * inverse * norm.gamma[c] + norm.beta[c];
  }
  return y;
}

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

void softmax(std::span<double> row) {
  if (row.empty()) return;
  const double top = *std::max_element(row.begin(), row.end());  // exp of at most 0: no overflow
  double sum = 0;
  for (double& v : row) sum += (v = std::exp(v - top));
  for (double& v : row) v /= sum;
}

Matrix attention(const Matrix& q, const Matrix& k, const Matrix& v, std::size_t heads, std::size_t valid_tokens) {
  require<MismatchError>(k.rows == q.rows && v.rows == q.rows && k.cols == q.cols && v.cols == q.cols,
                         "bert: attention over q {} x {}, k {} x {}, v {} x {}", q.rows, q.cols, k.rows, k.cols,
                         v.rows, v.cols);
  require(heads >= 1 && q.cols % heads == 0, "bert: {} columns do not split into {} heads", q.cols, heads);
  require(valid_tokens <= q.rows, "bert: {} valid tokens of {}", valid_tokens, q.rows);
  const std::size_t keys = valid_tokens == 0 ? q.rows : valid_tokens;
  const std::size_t width = q.cols / heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(width));
  Matrix context = Matrix::zeros(q.rows, q.cols);
  std::vector<double> weights(keys);
  for (std::size_t h = 0; h < heads; ++h) {
    const std::size_t first = h * width;
    for (std::size_t t = 0; t < q.rows; ++t) {
      for (std::size_t s = 0; s < keys; ++s) {
        double dot = 0;
        for (std::size_t c = first; c < first + width; ++c) dot += q.at(t, c) * k.at(s, c);
        weights[s] = dot * scale;
      }
      softmax(weights);
      for (std::size_t s = 0; s < keys; ++s) {
        for (std::size_t c = first; c < first + width; ++c) context.at(t, c) += weights[s] * v.at(s, c);
      }
    }
  }
  return context;
}

}  // namespace cerium::nn::bert_ops
