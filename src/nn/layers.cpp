#include "cerium/nn/layers.hpp"

#include <algorithm>
#include <cmath>

#include "cerium/core/check.hpp"

namespace cerium::nn {
namespace {

std::vector<double> bias_slots(const Packing& out, const std::vector<double>& per_channel) {
  if (per_channel.empty()) return {};
  const Shape& s = out.shape();
  require(per_channel.size() == s.channels, "bias: {} values for {} channels", per_channel.size(), s.channels);
  Tensor bias(s);
  for (std::size_t c = 0; c < s.channels; ++c) {
    for (std::size_t y = 0; y < s.height; ++y) {
      for (std::size_t x = 0; x < s.width; ++x) bias.at(c, y, x) = per_channel[c];
    }
  }
  return out.pack(bias);  // every copy
}

}  // namespace

LinearLayer::LinearLayer(SlotMap map, std::vector<double> bias, Packing in, Packing out)
    : in_(std::move(in)), out_(std::move(out)), map_(std::make_shared<const SlotMap>(std::move(map))) {
  require(map_->diagonals() > 0, "linear layer: the map has no entry");
  product_ = graph::prepare_product(map_);
  if (!bias.empty()) bias_ = graph::PlainVector(bias);
}

Conv2d::Conv2d(Conv2dSpec spec, std::vector<double> weights, std::vector<double> bias, const Packing& in,
               const BatchNorm* bn)
    : spec_(spec),
      weights_(std::move(weights)),
      bias_(bias.empty() ? std::vector<double>(spec.out_channels, 0.0) : std::move(bias)),
      layer_([&] {
        const std::size_t per_output = spec.in_channels * spec.kernel * spec.kernel;
        require(weights_.size() == spec.out_channels * per_output, "conv2d: {} weights for {}x{}x{}x{}",
                weights_.size(), spec.out_channels, spec.in_channels, spec.kernel, spec.kernel);
        require(bias_.size() == spec.out_channels, "conv2d: {} biases for {} channels", bias_.size(),
                spec.out_channels);
        if (bn != nullptr) {  // y = g (Wx + b - m) / sqrt(v + eps) + beta: scale W and b per output channel
          for (const auto* v : {&bn->gamma, &bn->beta, &bn->mean, &bn->var}) {
            require(v->size() == spec.out_channels, "batch norm: {} values for {} channels", v->size(),
                    spec.out_channels);
          }
          for (std::size_t o = 0; o < spec.out_channels; ++o) {
            const double s = bn->gamma[o] / std::sqrt(bn->var[o] + bn->eps);
            for (std::size_t i = 0; i < per_output; ++i) weights_[o * per_output + i] *= s;
            bias_[o] = (bias_[o] - bn->mean[o]) * s + bn->beta[o];
          }
        }
        // A stride s multiplies the gap: the output stays where its input pixels were (multiplexed packing).
        const Packing out = in.with(spec.output_shape(in.shape()), in.gap() * spec.stride);
        return LinearLayer(conv2d_map(spec, weights_, in, out), bias_slots(out, bias_), in, out);
      }()) {}

Tensor Conv2d::reference(const Tensor& x) const {
  const Shape os = spec_.output_shape(x.shape);
  Tensor y(os);
  const std::size_t k = spec_.kernel;
  for (std::size_t o = 0; o < os.channels; ++o) {
    for (std::size_t oy = 0; oy < os.height; ++oy) {
      for (std::size_t ox = 0; ox < os.width; ++ox) {
        double sum = bias_[o];
        for (std::size_t c = 0; c < spec_.in_channels; ++c) {
          for (std::size_t ky = 0; ky < k; ++ky) {
            for (std::size_t kx = 0; kx < k; ++kx) {
              const auto iy = static_cast<std::ptrdiff_t>(oy * spec_.stride + ky) - static_cast<std::ptrdiff_t>(spec_.padding);
              const auto ix = static_cast<std::ptrdiff_t>(ox * spec_.stride + kx) - static_cast<std::ptrdiff_t>(spec_.padding);
              if (iy < 0 || ix < 0 || iy >= static_cast<std::ptrdiff_t>(x.shape.height) ||
                  ix >= static_cast<std::ptrdiff_t>(x.shape.width)) {
                continue;
              }
              sum += weights_[((o * spec_.in_channels + c) * k + ky) * k + kx] *
                     x.at(c, static_cast<std::size_t>(iy), static_cast<std::size_t>(ix));
            }
          }
        }
        y.at(o, oy, ox) = sum;
      }
    }
  }
  return y;
}

GlobalAveragePool::GlobalAveragePool(const Packing& in)
    : layer_([&] {
        // Each channel's mean where its pixel (0, 0) was: offsets depend on the pixel only (few diagonals).
        const Packing out = in.with(Shape{in.shape().channels, 1, 1}, in.gap());
        return LinearLayer(global_average_pool_map(in, out), {}, in, out);
      }()) {}

Tensor GlobalAveragePool::reference(const Tensor& x) const {
  Tensor y(Shape{x.shape.channels, 1, 1});
  for (std::size_t c = 0; c < x.shape.channels; ++c) {
    double sum = 0;
    for (std::size_t i = 0; i < x.shape.height * x.shape.width; ++i) sum += x.values[c * x.shape.height * x.shape.width + i];
    y.values[c] = sum / static_cast<double>(x.shape.height * x.shape.width);
  }
  return y;
}

Dense::Dense(std::size_t outputs, std::vector<double> weights, std::vector<double> bias, const Packing& in)
    : weights_(std::move(weights)),
      bias_(bias.empty() ? std::vector<double>(outputs, 0.0) : std::move(bias)),
      layer_([&] {
        require(bias_.size() == outputs, "dense: {} biases for {} outputs", bias_.size(), outputs);
        // The outputs in the input's planes and gap: the offsets are differences of multiplexed positions.
        const Packing out = in.with(Shape{outputs, 1, 1}, in.gap());
        return LinearLayer(dense_map(weights_, in, out), bias_slots(out, bias_), in, out);
      }()) {}

Tensor Dense::reference(const Tensor& x) const {
  const std::size_t n_out = bias_.size(), n_in = x.values.size();
  Tensor y(Shape{n_out, 1, 1});
  for (std::size_t k = 0; k < n_out; ++k) {
    double sum = bias_[k];
    for (std::size_t i = 0; i < n_in; ++i) sum += weights_[k * n_in + i] * x.values[i];
    y.values[k] = sum;
  }
  return y;
}

Relu Relu::composite(double bound, int stages) {
  require(bound > 0 && stages >= 1, "relu: bound {} and {} stages must be positive", bound, stages);
  Relu r;
  r.bound_ = bound;
  const auto f = circuits::Polynomial::power({0, 35.0 / 16, 0, -35.0 / 16, 0, 21.0 / 16, 0, -5.0 / 16});
  r.sign_stages_.assign(static_cast<std::size_t>(stages), f);
  return r;
}

Relu Relu::interpolated(double bound, int degree) {
  require(bound > 0 && degree >= 2, "relu: bound {} and degree {} (at least 2)", bound, degree);
  Relu r;
  r.bound_ = bound;
  r.direct_ = circuits::Polynomial::chebyshev_interpolant(
      [](long double t) { return t > 0 ? t : 0.0L; }, degree, -bound, bound);
  return r;
}

Relu Relu::minimax(double bound, std::vector<int> degrees, double eps) {
  require(std::isfinite(bound) && bound > 0, "relu: bound {} must be positive", bound);
  Relu r;
  r.bound_ = bound;
  r.sign_design_ = circuits::composite_sign(degrees, eps);
  for (const auto& stage : r.sign_design_->stages) r.sign_stages_.push_back(stage.polynomial);
  for (double& c : r.sign_stages_.back().coefficients) c /= 2;  // exact: a power of two
  r.last_stage_halved_ = true;
  return r;
}

Tensor Relu::reference(const Tensor& x, const std::string& where) const {
  Tensor y = x;
  for (auto& v : y.values) {
    require(std::abs(v) <= bound_, "{}: a ReLU input {} leaves the polynomial's range [-{}, {}]; calibrate the bound "
                                   "on plaintext data",
            where, v, bound_, bound_);
    v = std::max(v, 0.0);
  }
  return y;
}

}  // namespace cerium::nn
