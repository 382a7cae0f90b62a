#pragma once
// Layers of encrypted models, each usable on any ops object (graph::Tracer to plan a model, graph::Eager to run it
// at once, graph::PlainOps for the plaintext twin with the same polynomial activations) and each with a direct
// plaintext reference on tensors (nested loops, exact activations) to check against.
//
// Linear layers are slot-linear maps between packings (nn/slot_map.hpp) applied by graph::multiply: one level
// each, their rotations hoisted by the planner. Batch normalization folds into the convolution before it.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cerium/circuits/bsgs.hpp"
#include "cerium/circuits/diagonal_matrix.hpp"
#include "cerium/circuits/minimax.hpp"
#include "cerium/circuits/polynomial.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/node.hpp"
#include "cerium/nn/slot_map.hpp"
#include "cerium/nn/tensor.hpp"

namespace cerium::nn {

// y = gamma (x - mean) / sqrt(var + eps) + beta, per channel.
struct BatchNorm {
  // One value per channel each (mean and var: the running statistics); eps guards the division.
  std::vector<double> gamma, beta, mean, var;
  double eps = 1e-5;
};

// A linear layer's map and bias, applied as graph::multiply then a bias add.
class LinearLayer {
 public:
  // map from `in` to `out`; bias_slots: the bias at the output's slots (empty: none). InvalidArgument for a map
  // without entries.
  LinearLayer(SlotMap map, std::vector<double> bias_slots, Packing in, Packing out);

  // The packings it maps between, and its map.
  const Packing& input_packing() const { return in_; }
  const Packing& output_packing() const { return out_; }
  const SlotMap& map() const { return *map_; }

  // The map's diagonals are made from its entries when the program encodes them (graph::DiagonalSource), once
  // for every ciphertext the layer multiplies (graph::BsgsProduct).
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    typename Ops::Value y = graph::multiply(ops, x, product_);
    return bias_.empty() ? std::move(y) : ops.add(y, bias_);
  }

 private:
  Packing in_, out_;
  std::shared_ptr<const SlotMap> map_;
  graph::BsgsProduct product_;  // the map's plan and plaintexts, shared by every product
  graph::PlainVector bias_;  // empty without a bias
};

// A convolution (any stride, zero padding) with its bias and an optional batch norm, as one LinearLayer.
class Conv2d {
 public:
  // weights[((o C_in + c) k + ky) k + kx]; bias per output channel (empty: none); an optional batch norm folded in.
  Conv2d(Conv2dSpec spec, std::vector<double> weights, std::vector<double> bias, const Packing& in,
         const BatchNorm* batch_norm = nullptr);

  // Its spec, and the linear layer it is applied as.
  const Conv2dSpec& spec() const { return spec_; }
  const LinearLayer& layer() const { return layer_; }
  // The layer on any ops: one level.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    return layer_.forward(ops, x);
  }
  Tensor reference(const Tensor& x) const;  // nested loops with the folded weights

 private:
  Conv2dSpec spec_;
  std::vector<double> weights_, bias_;  // batch norm folded in
  LinearLayer layer_;
};

// The mean of each channel's plane, into a channels x 1 x 1 packing, as one LinearLayer.
class GlobalAveragePool {
 public:
  // From the packing of its input.
  explicit GlobalAveragePool(const Packing& in);
  // The linear layer it is applied as.
  const LinearLayer& layer() const { return layer_; }
  // The layer on any ops: one level.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    return layer_.forward(ops, x);
  }
  // The channels' means by direct loops.
  Tensor reference(const Tensor& x) const;

 private:
  LinearLayer layer_;
};

// A dense layer over the input tensor's values in packing order, as one LinearLayer.
class Dense {
 public:
  // weights[k * inputs + i], bias[k]; the input is the tensor in packing order.
  Dense(std::size_t outputs, std::vector<double> weights, std::vector<double> bias, const Packing& in);
  // The linear layer it is applied as.
  const LinearLayer& layer() const { return layer_; }
  // The layer on any ops: one level.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    return layer_.forward(ops, x);
  }
  // outputs x 1 x 1 by direct loops.
  Tensor reference(const Tensor& x) const;

 private:
  std::vector<double> weights_, bias_;
  LinearLayer layer_;
};

// ReLU on [-bound, bound] as x (1 + sign(x)) / 2, with sign(x) ~ f_s(... f_1(x / bound)) for odd polynomials f_i
// (composite sign approximation: fixed stages, or minimax stages), or one polynomial approximating ReLU directly.
class Relu {
 public:
  // The composite: `stages` rounds of f(t) = (35 t - 35 t^3 + 21 t^5 - 5 t^7) / 16, which pushes |t| >= eps
  // towards sign(t) doubly exponentially (for |x| >= bound / 10: ReLU within 1e-3 bound / 4 after 4 stages, 1e-9
  // after 5); about 4 levels a stage plus 3. Near 0 the error is at most |x| / 2.
  static Relu composite(double bound, int stages);
  // A Chebyshev interpolant of max(x, 0) on [-bound, bound] of `degree` (cheap, coarse near 0).
  static Relu interpolated(double bound, int degree);
  // The minimax composite (circuits::composite_sign): odd stages of these degrees, each the best (Remez) for the
  // image the stages before it leave of [eps, 1]. For |x| >= eps bound the ReLU is within sign_design()->error |x| / 2
  // (degrees {15, 15, 27}, eps 2^-9: error 9.94e-5 = 2^-13.3, so within 2^-14.3 |x|); near 0 at most |x| / 2 (the
  // stages keep the sign of x and |sign| < 2). Levels: ceil(log2(d + 1)) or one more per stage (graph::evaluate's
  // Paterson-Stockmeyer; 5 + 5 + 5 for {15, 15, 27}), plus 2 (x / bound, the final product: the last stage carries
  // the 1/2). InvalidArgument for a bound <= 0, eps outside (0, 1) or a degree that is even or below 3.
  static Relu minimax(double bound, std::vector<int> degrees = {15, 15, 27}, double eps = 1.0 / 512);

  // Inputs must lie within [-bound, bound].
  double bound() const { return bound_; }
  // The minimax composite's design (stages, eps, sign error, peak) for minimax(); empty for the other kinds.
  const std::optional<circuits::CompositeSign>& sign_design() const { return sign_design_; }

  // The approximation on any ops: the direct polynomial, or x (1 + sign(x)) / 2 by the stages.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    if (direct_) return graph::evaluate(ops, x, *direct_);
    typename Ops::Value t = ops.multiply(x, 1.0 / bound_);
    for (const auto& stage : sign_stages_) t = graph::evaluate(ops, t, stage);
    if (!last_stage_halved_) t = ops.multiply(t, 0.5);
    return ops.multiply(x, ops.add(t, 0.5));  // x (1 + sign) / 2
  }
  // max(x, 0) elementwise; InvalidArgument naming `where` when a value leaves [-bound, bound] (the polynomial's
  // range: calibrate the bound on plaintext data).
  Tensor reference(const Tensor& x, const std::string& where) const;

 private:
  double bound_ = 1;
  std::vector<circuits::Polynomial> sign_stages_;
  bool last_stage_halved_ = false;  // the last stage computes sign / 2 (a level saved)
  std::optional<circuits::Polynomial> direct_;
  std::optional<circuits::CompositeSign> sign_design_;
};

}  // namespace cerium::nn
