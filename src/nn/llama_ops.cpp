// The pieces of nn/llama.hpp's reference, exact in double precision, each on the rows of a Matrix (one row a token).

#include <cmath>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/nn/bert_ops.hpp"
#include "cerium/nn/llama.hpp"

namespace cerium::nn::llama_ops {
namespace {

void require_dense(const Matrix& m, const char* name) {
  require<MismatchError>(m.values.size() == m.rows * m.cols, "llama: {} is {} x {} but holds {} values", name, m.rows,
                         m.cols, m.values.size());
}

}  // namespace

Matrix linear(const LinearWeights& weights, const Matrix& x) { return bert_ops::linear(weights, x); }

Matrix rms_norm(const Matrix& x, std::span<const double> gamma, double eps) {
  require<MismatchError>(gamma.size() == x.cols, "llama: an RMSNorm of {} applied to rows of {}", gamma.size(), x.cols);
  require(eps > 0 && std::isfinite(eps), "llama: RMSNorm epsilon {} is not positive and finite", eps);
  require_dense(x, "the RMSNorm input");
  Matrix y = Matrix::zeros(x.rows, x.cols);
  for (std::size_t t = 0; t < x.rows; ++t) {
    double squares = 0;
    for (std::size_t c = 0; c < x.cols; ++c) squares += x.at(t, c) * x.at(t, c);
    const double inverse = 1.0 / std::sqrt(squares / static_cast<double>(x.cols) + eps);
    for (std::size_t c = 0; c < x.cols; ++c) y.at(t, c) = x.at(t, c) * inverse * gamma[c];
  }
  return y;
}

Matrix rope(const Matrix& x, std::size_t heads, double theta, std::size_t first_position) {
  require(heads >= 1 && x.cols % heads == 0 && (x.cols / heads) % 2 == 0,
          "llama: RoPE over {} columns in {} heads needs heads of even width", x.cols, heads);
  require(theta > 0 && std::isfinite(theta), "llama: RoPE theta {} is not positive and finite", theta);
  require_dense(x, "the RoPE input");
  const std::size_t d = x.cols / heads, half = d / 2;
  std::vector<double> frequency(half);
  for (std::size_t i = 0; i < half; ++i) {
    frequency[i] = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
  }
  Matrix y = Matrix::zeros(x.rows, x.cols);
  for (std::size_t t = 0; t < x.rows; ++t) {
    const double position = static_cast<double>(first_position + t);
    for (std::size_t i = 0; i < half; ++i) {
      const double angle = position * frequency[i], c = std::cos(angle), s = std::sin(angle);
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t lo = h * d + i, hi = lo + half;
        y.at(t, lo) = x.at(t, lo) * c - x.at(t, hi) * s;
        y.at(t, hi) = x.at(t, hi) * c + x.at(t, lo) * s;
      }
    }
  }
  return y;
}

double silu(double x) {
  // exp(-x) overflows for x below about -709: take exp(x) / (1 + exp(x)) there instead.
  if (x >= 0) return x / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return x * e / (1.0 + e);
}

Matrix causal_attention(const Matrix& q, const Matrix& k, const Matrix& v, std::size_t heads, std::size_t kv_heads) {
  require(heads >= 1 && kv_heads >= 1 && heads % kv_heads == 0,
          "llama: {} query heads do not share {} key-value heads evenly", heads, kv_heads);
  require(q.cols % heads == 0 && q.cols > 0, "llama: {} query columns do not split into {} heads", q.cols, heads);
  const std::size_t d = q.cols / heads, group = heads / kv_heads;
  require<MismatchError>(k.rows == q.rows && v.rows == q.rows && k.cols == kv_heads * d && v.cols == kv_heads * d,
                         "llama: attention over q {} x {} ({} heads), k {} x {}, v {} x {} ({} key-value heads of {})",
                         q.rows, q.cols, heads, k.rows, k.cols, v.rows, v.cols, kv_heads, d);
  require_dense(q, "q");
  require_dense(k, "k");
  require_dense(v, "v");
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  Matrix context = Matrix::zeros(q.rows, q.cols);
  std::vector<double> weights(q.rows);
  for (std::size_t h = 0; h < heads; ++h) {
    const std::size_t qc = h * d, kc = (h / group) * d;
    for (std::size_t t = 0; t < q.rows; ++t) {
      const std::span<double> seen(weights.data(), t + 1);  // causal: keys 0..t
      for (std::size_t s = 0; s <= t; ++s) {
        double dot = 0;
        for (std::size_t j = 0; j < d; ++j) dot += q.at(t, qc + j) * k.at(s, kc + j);
        seen[s] = dot * scale;
      }
      bert_ops::softmax(seen);
      for (std::size_t s = 0; s <= t; ++s) {
        for (std::size_t j = 0; j < d; ++j) context.at(t, qc + j) += seen[s] * v.at(s, kc + j);
      }
    }
  }
  return context;
}

}  // namespace cerium::nn::llama_ops
