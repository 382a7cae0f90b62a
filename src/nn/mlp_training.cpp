#include "cerium/nn/mlp_training.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>

#include "cerium/core/check.hpp"

namespace cerium::nn {

std::size_t MlpShape::blocks() const { return std::bit_ceil(std::max({inputs, hidden, outputs})); }

void MlpShape::validate() const {
  require(inputs >= 1 && hidden >= 1 && outputs >= 1 && std::has_single_bit(batch),
          "mlp: {} inputs, {} hidden, {} outputs and a batch of {} (a power of two is needed)", inputs, hidden,
          outputs, batch);
  require(std::isfinite(learning_rate) && learning_rate > 0, "mlp: a learning rate of {}", learning_rate);
  require(!compact_weights || (hidden <= batch && outputs <= batch),
          "mlp: compact weights keep row r in lane r, so hidden ({}) and outputs ({}) must be at most the batch ({})",
          hidden, outputs, batch);
}

MlpWeights MlpWeights::seeded(const MlpShape& shape, std::uint64_t seed) {
  shape.validate();
  std::mt19937_64 rng(seed);
  const auto draw = [&](std::size_t rows, std::size_t cols) {
    std::normal_distribution<double> d(0, 1 / std::sqrt(static_cast<double>(cols)));
    Matrix m = Matrix::zeros(rows, cols);
    for (double& v : m.values) v = d(rng);
    return m;
  };
  MlpWeights w;
  w.w1 = draw(shape.hidden, shape.inputs);
  w.w2 = draw(shape.outputs, shape.hidden);
  return w;
}

MlpTrainer::MlpTrainer(MlpShape shape) : shape_(shape) {
  shape_.validate();
  const std::size_t blocks = shape_.blocks(), batch = shape_.batch;
  const auto blockwise = [&](auto value_of_block) {
    std::vector<double> v(shape_.slots());
    for (std::size_t f = 0; f < blocks; ++f) std::fill_n(v.begin() + f * batch, batch, value_of_block(f));
    return graph::PlainVector(v);
  };
  // A class mask repeats every group of blocks: stored as one group's period.
  const auto classes = [&](std::size_t count) {
    const std::size_t group = std::bit_ceil(count);
    std::vector<graph::PlainVector> masks;
    for (std::size_t j = 0; j < count; ++j) {
      std::vector<double> period(group * batch, 0.0);
      std::fill_n(period.begin() + static_cast<std::ptrdiff_t>(j * batch), batch, 1.0);
      masks.emplace_back(period);
    }
    return masks;
  };
  hidden_classes_ = classes(shape_.hidden);
  output_classes_ = classes(shape_.outputs);
  std::vector<double> starts(batch, 0.0);  // one block's period: 1 at its first lane
  starts[0] = 1;
  lane_starts_ = graph::PlainVector(starts);
  const double rate = shape_.learning_rate / static_cast<double>(batch);
  input_rate_ = blockwise([&](std::size_t f) { return f < shape_.inputs ? rate : 0.0; });
  hidden_rate_ = blockwise([&](std::size_t f) { return f < shape_.hidden ? rate : 0.0; });
  if (shape_.compact_weights) {
    const auto at_first_lane = [&](std::size_t valid_blocks, double value) {
      std::vector<double> v(shape_.slots(), 0.0);
      for (std::size_t f = 0; f < valid_blocks; ++f) v[f * batch] = value;
      return graph::PlainVector(v);
    };
    input_rate_first_lane_ = at_first_lane(shape_.inputs, rate);
    hidden_rate_first_lane_ = at_first_lane(shape_.hidden, rate);
    half_input_lane_starts_ = at_first_lane(shape_.inputs, 0.5);
    half_hidden_lane_starts_ = at_first_lane(shape_.hidden, 0.5);
  } else {
    half_input_blocks_ = blockwise([&](std::size_t f) { return f < shape_.inputs ? 0.5 : 0.0; });
    half_hidden_blocks_ = blockwise([&](std::size_t f) { return f < shape_.hidden ? 0.5 : 0.0; });
  }
}

std::vector<double> MlpTrainer::pack_inputs(const Matrix& x) const {
  require(x.rows == shape_.batch && x.cols == shape_.inputs && x.values.size() == x.rows * x.cols,
          "mlp: a batch of {} x {} for {} examples of {} inputs", x.rows, x.cols, shape_.batch, shape_.inputs);
  std::vector<double> v(shape_.slots(), 0.0);
  for (std::size_t b = 0; b < x.rows; ++b) {
    for (std::size_t f = 0; f < x.cols; ++f) v[f * shape_.batch + b] = x.at(b, f);
  }
  return v;
}

std::vector<double> MlpTrainer::pack_targets(std::span<const std::uint8_t> labels) const {
  require(labels.size() == shape_.batch, "mlp: {} labels for a batch of {}", labels.size(), shape_.batch);
  std::vector<double> v(shape_.slots(), 0.0);
  for (std::size_t b = 0; b < labels.size(); ++b) {
    require(labels[b] < shape_.outputs, "mlp: label {} of example {} (outputs 0..{})", labels[b], b,
            shape_.outputs - 1);
    // Class k at block k of every group of bit_ceil(outputs) blocks, as the step's outputs hold it.
    const std::size_t group = std::bit_ceil(shape_.outputs);
    for (std::size_t block = labels[b]; block < shape_.blocks(); block += group) v[block * shape_.batch + b] = 1;
  }
  return v;
}

std::vector<std::vector<double>> MlpTrainer::pack_weights(const MlpWeights& w) const {
  require(w.w1.rows == shape_.hidden && w.w1.cols == shape_.inputs && w.w2.rows == shape_.outputs &&
              w.w2.cols == shape_.hidden,
          "mlp: weights of {} x {} and {} x {} for {} -> {} -> {}", w.w1.rows, w.w1.cols, w.w2.rows, w.w2.cols,
          shape_.inputs, shape_.hidden, shape_.outputs);
  std::vector<std::vector<double>> rows;
  if (shape_.compact_weights) {
    for (const Matrix* m : {&w.w1, &w.w2}) {
      std::vector<double> v(shape_.slots(), 0.0);
      for (std::size_t r = 0; r < m->rows; ++r) {
        for (std::size_t f = 0; f < m->cols; ++f) v[f * shape_.batch + r] = m->at(r, f);
      }
      rows.push_back(std::move(v));
    }
    return rows;
  }
  for (const Matrix* m : {&w.w1, &w.w2}) {
    for (std::size_t r = 0; r < m->rows; ++r) {
      std::vector<double> v(shape_.slots(), 0.0);
      for (std::size_t f = 0; f < m->cols; ++f) std::fill_n(v.begin() + f * shape_.batch, shape_.batch, m->at(r, f));
      rows.push_back(std::move(v));
    }
  }
  return rows;
}

MlpWeights MlpTrainer::unpack_weights(const std::vector<std::vector<std::complex<double>>>& rows) const {
  require(rows.size() == weight_count(), "mlp: {} weight ciphertexts for {}", rows.size(), weight_count());
  MlpWeights w{Matrix::zeros(shape_.hidden, shape_.inputs), Matrix::zeros(shape_.outputs, shape_.hidden)};
  if (shape_.compact_weights) {
    for (std::size_t part = 0; part < 2; ++part) {
      Matrix& m = part == 0 ? w.w1 : w.w2;
      require(rows[part].size() >= shape_.slots(), "mlp: compact weights {} have {} slots of {}", part,
              rows[part].size(), shape_.slots());
      for (std::size_t r = 0; r < m.rows; ++r) {
        for (std::size_t f = 0; f < m.cols; ++f) m.at(r, f) = rows[part][f * shape_.batch + r].real();
      }
    }
    return w;
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    Matrix& m = r < shape_.hidden ? w.w1 : w.w2;
    const std::size_t row = r < shape_.hidden ? r : r - shape_.hidden;
    require(rows[r].size() >= shape_.slots(), "mlp: weight row {} has {} slots of {}", r, rows[r].size(),
            shape_.slots());
    for (std::size_t f = 0; f < m.cols; ++f) m.at(row, f) = rows[r][f * shape_.batch].real();
  }
  return w;
}

namespace {

double activation(const MlpShape& s, double z) { return s.activation[0] + s.activation[1] * z + s.activation[2] * z * z; }
double slope(const MlpShape& s, double z) { return s.activation[1] + 2 * s.activation[2] * z; }

}  // namespace

Matrix mlp_forward_reference(const MlpShape& s, const MlpWeights& w, const Matrix& x) {
  Matrix y = Matrix::zeros(x.rows, s.outputs);
  for (std::size_t b = 0; b < x.rows; ++b) {
    std::vector<double> h(s.hidden);
    for (std::size_t j = 0; j < s.hidden; ++j) {
      double z = 0;
      for (std::size_t f = 0; f < s.inputs; ++f) z += w.w1.at(j, f) * x.at(b, f);
      h[j] = activation(s, z);
    }
    for (std::size_t k = 0; k < s.outputs; ++k) {
      for (std::size_t j = 0; j < s.hidden; ++j) y.at(b, k) += w.w2.at(k, j) * h[j];
    }
  }
  return y;
}

MlpWeights mlp_step_reference(const MlpShape& s, const MlpWeights& w, const Matrix& x,
                              std::span<const std::uint8_t> labels) {
  require(x.rows == labels.size() && x.cols == s.inputs, "mlp reference: {} x {} inputs with {} labels", x.rows,
          x.cols, labels.size());
  MlpWeights grad{Matrix::zeros(s.hidden, s.inputs), Matrix::zeros(s.outputs, s.hidden)};
  for (std::size_t b = 0; b < x.rows; ++b) {
    std::vector<double> z(s.hidden), h(s.hidden), y(s.outputs, 0.0), d1(s.hidden, 0.0);
    for (std::size_t j = 0; j < s.hidden; ++j) {
      for (std::size_t f = 0; f < s.inputs; ++f) z[j] += w.w1.at(j, f) * x.at(b, f);
      h[j] = activation(s, z[j]);
    }
    for (std::size_t k = 0; k < s.outputs; ++k) {
      for (std::size_t j = 0; j < s.hidden; ++j) y[k] += w.w2.at(k, j) * h[j];
      const double d2 = y[k] - (labels[b] == k ? 1.0 : 0.0);  // d(0.5 (y - t)^2) / dy
      for (std::size_t j = 0; j < s.hidden; ++j) {
        grad.w2.at(k, j) += d2 * h[j];
        d1[j] += d2 * w.w2.at(k, j);
      }
    }
    for (std::size_t j = 0; j < s.hidden; ++j) {
      for (std::size_t f = 0; f < s.inputs; ++f) grad.w1.at(j, f) += d1[j] * slope(s, z[j]) * x.at(b, f);
    }
  }
  MlpWeights out = w;
  const double rate = s.learning_rate / static_cast<double>(x.rows);
  for (std::size_t i = 0; i < out.w1.values.size(); ++i) out.w1.values[i] -= rate * grad.w1.values[i];
  for (std::size_t i = 0; i < out.w2.values.size(); ++i) out.w2.values[i] -= rate * grad.w2.values[i];
  return out;
}

}  // namespace cerium::nn
