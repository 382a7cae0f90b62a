#pragma once
// A BERT encoder for encrypted inputs: the weights of nn/bert.hpp laid out on token-major rows
// (nn/row_layout.hpp), each layer an nn::EncoderLayer with polynomial non-linear pieces (nn/nonlinear.hpp) whose
// ranges come from plaintext calibration (nn/bert_ranges.hpp). Written once over any ops object: trace it to plan
// its bootstraps and keys, or run it on graph::PlainOps for the twin with the same polynomials.
//
//   const auto ranges = nn::bert_ranges(weights, calibration_inputs, valid);
//   const nn::EncryptedBert model(weights, ranges, {.rows = 16, .valid_tokens = valid});
//   tracer.output(model.forward(tracer, tracer.input("x", model.layout().slots())), "hidden");
//
// Every tensor keeps one stride, the next power of two of the wider of hidden and FFN (or an FFN block), so a
// ciphertext holds rows = slots / stride tokens; more tokens take several ciphertexts of rows (blocks), which
// attention turns across. Valid tokens and padding rows follow BertModel's attention mask: every row attends
// to the first valid_tokens rows only (the padding rows carry their own embeddings, as BERT's [PAD] tokens do).

#include <complex>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "cerium/nn/bert.hpp"
#include "cerium/nn/bert_ranges.hpp"
#include "cerium/nn/encoder_layer.hpp"
#include "cerium/nn/nonlinear.hpp"
#include "cerium/nn/row_layout.hpp"

namespace cerium::nn {

// How the encoder is laid out on rows and how its polynomial pieces are chosen.
struct EncryptedBertOptions {
  std::size_t rows = 16;          // token rows per ciphertext, a power of two
  std::size_t blocks = 1;         // ciphertexts of rows: rows x blocks tokens
  std::size_t valid_tokens = 0;   // the tokens attended to; 0: all
  std::size_t ffn_blocks = 1;     // the FFN in this many column blocks (dividing it): the stride is the next
                                  // power of two of the wider of hidden and FFN / blocks
  double margin = 1.25;           // calibrated ranges widened by this (BertLayerRanges::widened)
  double exp_tolerance = 1e-5;    // absolute, on exp(score - upper) / valid
  double reciprocal_tolerance = 1e-4;  // relative
  double norm_tolerance = 1e-4;        // the inverse square root's relative error
  // Of the GELU interpolant; 0: the least of 16, 32, 64, 96, 128, 192 at least 4 x its bound (on
  // all-MiniLM-L6-v2, whose GELU inputs reach 25, degree 48 costs 0.3 percent of cosine, 96 nothing visible).
  int activation_degree = 0;
  // Softmax squares back from score / 2^k, k the least with (score bound - lowest row maximum) / 2^k at most
  // this (nn/attention.hpp: each squaring costs about a reciprocal's depth; a wide spread costs precision).
  double softmax_spread = 3;
  // Softmax's stretch from the scores to the weights bootstrapped precisely (SoftmaxTolerances).
  bool precise_softmax = false;
};

// The encoder of the header comment: one EncoderLayer per BERT layer, built from the weights and the calibrated
// ranges.
class EncryptedBert {
 public:
  using Layer = EncoderLayer<Exp, Reciprocal, LayerNorm, Gelu>;  // with polynomial pieces

  // ranges: one per layer (bert_ranges). InvalidArgument for a layout that does not fit (rows not a power of
  // two, valid tokens beyond rows, head width not a power of two), MismatchError for weights of another shape.
  EncryptedBert(const BertWeights& weights, const std::vector<BertLayerRanges>& ranges,
                const EncryptedBertOptions& options);

  // The BERT configuration and the layers built from it.
  const BertConfig& config() const { return config_; }
  const RowLayout& layout() const { return layout_; }  // of the inputs and outputs (hidden features)
  const std::vector<Layer>& layers() const { return layers_; }
  const std::vector<BertLayerRanges>& ranges() const { return ranges_; }  // widened

  // Ciphertexts of rows, and the tokens they hold (layout().rows x blocks()).
  std::size_t blocks() const { return blocks_; }
  std::size_t tokens() const { return layout_.rows * blocks_; }

  // x: one value per block of rows; the result likewise.
  template <class Ops>
  std::vector<typename Ops::Value> forward(Ops& ops, std::span<const typename Ops::Value> x) const {
    std::vector<typename Ops::Value> y;
    for (const auto& block : x) y.push_back(graph::duplicate(block));
    for (const Layer& layer : layers_) y = layer.forward<Ops>(ops, y);
    return y;
  }
  // One block of rows (blocks() = 1).
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    auto y = forward(ops, std::span<const typename Ops::Value>(&x, 1));
    return std::move(y.front());
  }

  // tokens() x hidden (row-major) into each block's slots, padding 0; InvalidArgument for another shape.
  std::vector<std::vector<double>> pack_blocks(const Matrix& x) const;
  // The hidden states back from each block's decoded slots.
  Matrix unpack_blocks(const std::vector<std::vector<std::complex<double>>>& blocks) const;
  // The same for one block (blocks() = 1).
  std::vector<double> pack(const Matrix& x) const;
  Matrix unpack(std::span<const std::complex<double>> slots) const;

 private:
  BertConfig config_;
  RowLayout layout_;
  std::size_t blocks_ = 1;
  std::vector<BertLayerRanges> ranges_;
  std::vector<Layer> layers_;
};

}  // namespace cerium::nn
