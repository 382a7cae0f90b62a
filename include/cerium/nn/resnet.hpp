#pragma once
// ResNet for CIFAR-style inputs (He et al.; ResNet-20 is 3 stages of 3 basic blocks with 16, 32 and 64 channels):
// a 3x3 stem convolution, basic blocks (conv-BN-ReLU-conv-BN plus the shortcut, then ReLU; a 1x1 stride-2
// convolution with BN where a stage halves the size), global average pooling and a dense classifier. Written once
// over any ops object: trace it to plan bootstraps and keys, or run it on graph::PlainOps for the reference with
// the same polynomial ReLUs; reference() runs it on tensors with the exact ReLU.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cerium/io/weights.hpp"
#include "cerium/nn/layers.hpp"
#include "cerium/nn/tensor.hpp"

namespace cerium::nn {

// The network's shape and its ReLU; ResNet-20 on 3 x 32 x 32 inputs by default.
struct ResNetConfig {
  Shape input{3, 32, 32};                         // channels x height x width
  std::vector<std::size_t> channels{16, 32, 64};  // per stage; every stage after the first halves the size
  std::size_t blocks = 3;                         // basic blocks per stage
  std::size_t classes = 10;                       // the classifier's outputs
  std::size_t slots = 16384;                      // of the ciphertext holding an activation
  double relu_bound = 8;                          // the ReLU polynomial's input range [-bound, bound]
  int relu_stages = 3;                            // composite sign stages; 0: an interpolated ReLU of relu_degree
  int relu_degree = 15;                           // used with relu_stages 0
  // Non-empty: the minimax composite ReLU (Relu::minimax) of these stage degrees and eps instead (relu_stages and
  // relu_degree are then unused).
  std::vector<int> relu_minimax_degrees{};
  double relu_minimax_eps = 1.0 / 512;
};

// The network of the header comment, its layers built from weights.
class ResNet {
 public:
  // From a weight file (io/weights.hpp) with the names and shapes of PyTorch's layout: "stem.weight"
  // [C, C_in, 3, 3] and "stem.bn.{gamma,beta,mean,var}" [C]; per stage s and block b, "stages.s.b.conv1.weight",
  // "stages.s.b.bn1.*", "stages.s.b.conv2.weight", "stages.s.b.bn2.*" and, where the block changes the shape,
  // "stages.s.b.shortcut.weight" [C, C_in, 1, 1] and "stages.s.b.shortcut_bn.*"; "fc.weight" [classes, C] and
  // "fc.bias" [classes]. MismatchError naming a tensor that is absent or has other dimensions.
  static ResNet from_weights(const ResNetConfig& config, const io::WeightFile& weights);
  // Weights drawn from a seed at the architecture's shapes (He-normal convolutions, batch norms near identity),
  // in the same file layout: for timings at full size and for tests.
  static io::WeightFile seeded_weights(const ResNetConfig& config, std::uint64_t seed);
  // The network on seeded_weights(config, seed).
  static ResNet seeded(const ResNetConfig& config, std::uint64_t seed) {
    return from_weights(config, seeded_weights(config, seed));
  }

  // Its config, the packings of its input and of its logits, and the ReLUs a forward pass evaluates.
  const ResNetConfig& config() const { return config_; }
  const Packing& input_packing() const { return stem_.layer().input_packing(); }
  const Packing& output_packing() const { return fc_.layer().output_packing(); }
  std::size_t relu_count() const { return 1 + 2 * blocks_.size(); }
  const Relu& relu() const { return relu_; }  // the one ReLU every activation uses

  // Each layer's output is labelled ("stem", "block 3 conv1", "block 3 relu2", ...) where the ops take labels,
  // so that explain() and a profiled run (ExecutorOptions::profile) can name the layers.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    const auto named = [&ops](typename Ops::Value v, const std::string& name) {
      if constexpr (requires { ops.label(v, name); }) ops.label(v, name);
      return v;
    };
    typename Ops::Value y = named(relu_.forward(ops, named(stem_.forward(ops, x), "stem conv")), "stem relu");
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const Block& b = blocks_[i];
      const std::string block = "block " + std::to_string(i + 1) + " ";
      typename Ops::Value h = named(b.conv1.forward(ops, y), block + "conv1");
      h = named(relu_.forward(ops, h), block + "relu1");
      h = named(b.conv2.forward(ops, h), block + "conv2");
      if (b.shortcut) h = ops.add(h, named(b.shortcut->forward(ops, y), block + "shortcut"));
      else h = ops.add(h, y);
      y = named(relu_.forward(ops, named(h, block + "residual")), block + "relu2");
    }
    return named(fc_.forward(ops, named(pool_.forward(ops, y), "avgpool")), "fc");
  }

  // Logits with the exact ReLU; InvalidArgument naming the layer when a ReLU input leaves [-bound, bound].
  Tensor reference(const Tensor& x) const;
  // The largest |ReLU input| over these inputs: what relu_bound must cover.
  double activation_range(const std::vector<Tensor>& inputs) const;
  // The same network with another ReLU bound (for example 1.25 x activation_range on calibration data).
  ResNet with_relu_bound(double bound) const;

 private:
  struct Block {
    Conv2d conv1, conv2;
    std::optional<Conv2d> shortcut;
  };
  ResNet(ResNetConfig config, Conv2d stem, std::vector<Block> blocks, GlobalAveragePool pool, Dense fc);
  Tensor run_reference(const Tensor& x, double* range) const;
  static Relu make_relu(const ResNetConfig& config);

  ResNetConfig config_;
  Conv2d stem_;
  std::vector<Block> blocks_;
  GlobalAveragePool pool_;
  Dense fc_;
  Relu relu_;
};

}  // namespace cerium::nn
