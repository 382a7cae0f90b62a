#pragma once
// A Llama decoder for encrypted inputs: the weights of nn/llama.hpp laid out on token-major rows over one or more
// ciphertexts (nn/row_layout.hpp), each layer an nn::DecoderLayer with polynomial RMSNorm, SiLU and causal
// softmax (nn/nonlinear.hpp) whose ranges come from plaintext calibration (nn/llama_ranges.hpp), RoPE by masks
// and rotations (nn/rotary_embedding.hpp) and grouped-query attention through repeated key-value heads. Written
// once over any ops object: trace it to plan its bootstraps and keys, or run it on graph::PlainOps for the twin.
//
//   const auto ranges = nn::llama_ranges(weights, calibration_inputs);
//   const nn::EncryptedLlama model(weights, ranges, {.rows = 8, .blocks = 2});
//   auto y = model.forward(tracer, inputs);       // one value per block of rows
//
// A full-size model (Llama-3-8B: 32 layers of 218M parameters) is built one layer at a time with
// encrypted_llama_layer, so that a layer's diagonals exist only while it is planned and run
// (graph::StagedPlanner).
//
// Every tensor keeps one stride, the next power of two of the wider of hidden and FFN / ffn_blocks. Padding
// tokens go last (copies of real ones): the mask is causal, so they never reach a real token.

#include <complex>
#include <cstddef>
#include <span>
#include <vector>

#include "cerium/nn/calibrated_softmax.hpp"
#include "cerium/nn/decoder_layer.hpp"
#include "cerium/nn/llama.hpp"
#include "cerium/nn/llama_ranges.hpp"
#include "cerium/nn/nonlinear.hpp"
#include "cerium/nn/row_layout.hpp"

namespace cerium::nn {

// How the decoder is laid out on rows and how its polynomial pieces are chosen.
struct EncryptedLlamaOptions {
  std::size_t rows = 8;            // token rows per ciphertext, a power of two
  std::size_t blocks = 1;          // ciphertexts of rows: rows x blocks tokens
  std::size_t ffn_blocks = 1;      // the FFN in this many column blocks (dividing it)
  std::size_t first_position = 0;  // RoPE's position of token 0
  double margin = 1.25;            // calibrated ranges widened by this
  SoftmaxTolerances softmax = {};  // calibrated_softmax's
  double norm_tolerance = 1e-4;  // the inverse square root's relative error
  int activation_degree = 0;     // the SiLU interpolant's (0: from its bound, nn::activation_degree)
  // AttentionShape::turn_split (0: none). At Llama-3-8B's shapes the matrices' baby steps (stride 128) already
  // have the heads' turns (w = 128); where they do not (stride s < w), s saves w - s keys for more key switches.
  std::size_t turn_split = 0;
};

// A decoder layer with polynomial pieces.
using LlamaDecoderLayer = DecoderLayer<Exp, Reciprocal, RmsNorm, Silu>;

// The layout of a model's activations (hidden features in a stride that also takes an FFN block).
// InvalidArgument for FFN blocks that do not divide the FFN.
RowLayout llama_layout(const LlamaConfig& config, const EncryptedLlamaOptions& options);
// One layer from its weights and (unwidened) ranges. MismatchError for weights of another shape, InvalidArgument
// for a layout that does not fit (head width not a power of two, rows not a power of two).
LlamaDecoderLayer encrypted_llama_layer(const LlamaLayerWeights& weights, const LlamaConfig& config,
                                        const LlamaLayerRanges& ranges, const EncryptedLlamaOptions& options);

// The decoder of the header comment: one LlamaDecoderLayer per layer, built from the weights and the calibrated
// ranges (encrypted_llama_layer for each).
class EncryptedLlama {
 public:
  // ranges: one per layer (llama_ranges).
  EncryptedLlama(const LlamaWeights& weights, const std::vector<LlamaLayerRanges>& ranges,
                 const EncryptedLlamaOptions& options);

  // The Llama configuration, the activations' layout, the ciphertexts of rows, the tokens they hold
  // (layout().rows x blocks()) and the layers.
  const LlamaConfig& config() const { return config_; }
  const RowLayout& layout() const { return layout_; }
  std::size_t blocks() const { return blocks_; }
  std::size_t tokens() const { return layout_.rows * blocks_; }
  const std::vector<LlamaDecoderLayer>& layers() const { return layers_; }

  // x: one value per block of rows; the result likewise.
  template <class Ops>
  std::vector<typename Ops::Value> forward(Ops& ops, std::span<const typename Ops::Value> x) const {
    std::vector<typename Ops::Value> y;
    for (const auto& block : x) y.push_back(graph::duplicate(block));
    for (const LlamaDecoderLayer& layer : layers_) y = layer.forward<Ops>(ops, y);
    return y;
  }

  // tokens() x hidden (row-major) into each block's slots; and back from each block's decoded slots.
  std::vector<std::vector<double>> pack_blocks(const Matrix& x) const;
  Matrix unpack_blocks(const std::vector<std::vector<std::complex<double>>>& blocks) const;

 private:
  LlamaConfig config_;
  RowLayout layout_;
  std::size_t blocks_ = 1;
  std::vector<LlamaDecoderLayer> layers_;
};

}  // namespace cerium::nn
