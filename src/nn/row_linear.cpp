#include "cerium/nn/row_linear.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "cerium/core/check.hpp"

namespace cerium::nn {

RowLinearMap::RowLinearMap(const RowLayout& in, const RowLayout& out, std::vector<double> weights)
    : in_(in), out_(out) {
  in_.validate();
  out_.validate();
  require(in_.rows == out_.rows && in_.stride == out_.stride,
          "row linear map: layouts of {} rows stride {} and {} rows stride {} (a token-wise map keeps both)",
          in_.rows, in_.stride, out_.rows, out_.stride);
  require(weights.size() == in_.features * out_.features,
          "row linear map: {} weights for {} outputs x {} inputs", weights.size(), out_.features, in_.features);
  const auto inputs = static_cast<std::int64_t>(in_.features), outputs = static_cast<std::int64_t>(out_.features);
  diagonals_.reserve(weights.size());
  start_.reserve(in_.features + out_.features);
  for (std::int64_t d = -(outputs - 1); d < inputs; ++d) {
    start_.push_back(diagonals_.size());
    for (std::size_t j = first_row(d); static_cast<std::int64_t>(j) < outputs && static_cast<std::int64_t>(j) + d < inputs;
         ++j) {
      diagonals_.push_back(weights[j * in_.features + static_cast<std::size_t>(static_cast<std::int64_t>(j) + d)]);
    }
  }
  start_.push_back(diagonals_.size());
}

std::size_t RowLinearMap::first_row(std::int64_t d) const { return d < 0 ? static_cast<std::size_t>(-d) : 0; }

std::vector<std::int64_t> RowLinearMap::offsets() const {
  std::vector<std::int64_t> offsets;
  const auto in = static_cast<std::int64_t>(in_.features), out = static_cast<std::int64_t>(out_.features);
  for (std::int64_t d = -(out - 1); d < in; ++d) offsets.push_back(circuits::wrap_offset(d, slots()));
  return offsets;
}

std::vector<circuits::Complex> RowLinearMap::diagonal(std::int64_t offset) const {
  require(offset >= 0 && static_cast<std::size_t>(offset) < slots(), "row linear map: offset {} outside [0, {})",
          offset, slots());
  // The signed shift i - j: offsets past the middle are negative ones wrapped.
  const auto n = static_cast<std::int64_t>(slots());
  const std::int64_t d = offset < n / 2 ? offset : offset - n;
  std::vector<circuits::Complex> values(in_.stride, 0.0);
  const auto outputs = static_cast<std::int64_t>(out_.features);
  if (d <= -outputs || d >= static_cast<std::int64_t>(in_.features)) return values;  // no weight on it
  const auto k = static_cast<std::size_t>(d + outputs - 1);
  const std::size_t first = first_row(d);
  for (std::size_t t = start_[k]; t < start_[k + 1]; ++t) values[first + (t - start_[k])] = diagonals_[t];
  return values;
}

std::vector<double> RowLinearMap::apply_row(const std::vector<double>& x) const {
  require(x.size() == in_.features, "row linear map: a row of {} values for {} inputs", x.size(), in_.features);
  std::vector<double> y(out_.features, 0.0);
  const auto outputs = static_cast<std::int64_t>(out_.features);
  for (std::size_t k = 0; k + 1 < start_.size(); ++k) {
    const std::int64_t d = static_cast<std::int64_t>(k) - (outputs - 1);
    const std::size_t first = first_row(d);
    for (std::size_t t = start_[k]; t < start_[k + 1]; ++t) {
      const std::size_t j = first + (t - start_[k]);
      y[j] += diagonals_[t] * x[static_cast<std::size_t>(static_cast<std::int64_t>(j) + d)];
    }
  }
  return y;
}

RowLinearMap RowLinearMap::masked_outputs(const std::vector<double>& mask) const {
  require(mask.size() == out_.features, "row linear map: an output mask of {} values for {} outputs", mask.size(),
          out_.features);
  RowLinearMap masked = *this;
  const auto outputs = static_cast<std::int64_t>(out_.features);
  for (std::size_t k = 0; k + 1 < start_.size(); ++k) {
    const std::size_t first = first_row(static_cast<std::int64_t>(k) - (outputs - 1));
    for (std::size_t t = start_[k]; t < start_[k + 1]; ++t) masked.diagonals_[t] *= mask[first + (t - start_[k])];
  }
  return masked;
}

RowLinear::RowLinear(const RowLayout& in, const RowLayout& out, std::vector<double> weights,
                     std::vector<double> bias)
    : RowLinear(in, out, std::make_shared<const RowLinearMap>(in, out, std::move(weights)), std::move(bias)) {}

RowLinear RowLinear::masked_outputs(const std::vector<double>& mask) const {
  auto map = std::make_shared<const RowLinearMap>(map_->masked_outputs(mask));  // checks the mask's size
  std::vector<double> bias = bias_values_;
  for (std::size_t j = 0; j < bias.size(); ++j) bias[j] *= mask[j];
  return RowLinear(in_, out_, std::move(map), std::move(bias));
}

RowLinear::RowLinear(const RowLayout& in, const RowLayout& out, std::shared_ptr<const RowLinearMap> map,
                     std::vector<double> bias)
    : in_(in),
      out_(out),
      map_(std::move(map)),
      product_(graph::prepare_product(map_)),
      bias_values_(std::move(bias)) {
  if (bias_values_.empty()) return;
  require(bias_values_.size() == out_.features, "row linear: {} biases for {} outputs", bias_values_.size(),
          out_.features);
  std::vector<double> period(out_.stride, 0.0);
  std::copy(bias_values_.begin(), bias_values_.end(), period.begin());
  bias_ = graph::PlainVector(period);
}

std::vector<double> RowLinear::reference(const std::vector<double>& x) const {
  require(x.size() % in_.features == 0, "row linear: {} values are not rows of {}", x.size(), in_.features);
  std::vector<double> y;
  for (std::size_t r = 0; r < x.size() / in_.features; ++r) {
    std::vector<double> row(x.begin() + static_cast<std::ptrdiff_t>(r * in_.features),
                            x.begin() + static_cast<std::ptrdiff_t>((r + 1) * in_.features));
    std::vector<double> out = map_->apply_row(row);
    for (std::size_t j = 0; j < out.size(); ++j) out[j] += bias_values_.empty() ? 0.0 : bias_values_[j];
    y.insert(y.end(), out.begin(), out.end());
  }
  return y;
}

}  // namespace cerium::nn
