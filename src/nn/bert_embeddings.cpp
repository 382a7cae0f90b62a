#include "cerium/nn/bert_embeddings.hpp"

#include <string>

#include "cerium/core/check.hpp"
#include "cerium/nn/bert_ops.hpp"

namespace cerium::nn {
namespace {

// A table of the file's rows and `cols` columns.
Matrix read_table(const io::WeightFile& w, const std::string& name, std::size_t cols) {
  const auto it = w.tensors().find(name);
  const std::uint64_t rows = it != w.tensors().end() && it->second.dims.size() == 2 ? it->second.dims[0] : 0;
  return Matrix{rows, cols, w.values(name, {rows, cols})};  // MismatchError naming it when absent or misshapen
}

}  // namespace

BertEmbeddingWeights BertEmbeddingWeights::from_weights(const io::WeightFile& w, const BertConfig& config) {
  validate(config);
  const std::vector<std::uint64_t> hidden{config.hidden};
  return BertEmbeddingWeights{read_table(w, "embeddings.word", config.hidden),
                              read_table(w, "embeddings.position", config.hidden),
                              read_table(w, "embeddings.token_type", config.hidden),
                              NormWeights{w.values("embeddings.norm.gamma", hidden),
                                          w.values("embeddings.norm.beta", hidden)}};
}

Matrix bert_embed(const BertEmbeddingWeights& weights, const BertConfig& config,
                  std::span<const std::size_t> token_ids) {
  validate(config);
  require(!token_ids.empty() && token_ids.size() <= weights.position.rows,
          "bert: {} tokens; the embeddings have {} positions", token_ids.size(), weights.position.rows);
  require<MismatchError>(weights.word.cols == config.hidden && weights.position.cols == config.hidden &&
                             weights.token_type.cols == config.hidden && weights.token_type.rows >= 1,
                         "bert: embeddings of {}, {} and {} columns for hidden {}", weights.word.cols,
                         weights.position.cols, weights.token_type.cols, config.hidden);
  Matrix x = Matrix::zeros(token_ids.size(), config.hidden);
  for (std::size_t t = 0; t < token_ids.size(); ++t) {
    require(token_ids[t] < weights.word.rows, "bert: token id {} at {}; the vocabulary has {}", token_ids[t], t,
            weights.word.rows);
    for (std::size_t c = 0; c < config.hidden; ++c) {
      x.at(t, c) = weights.word.at(token_ids[t], c) + weights.position.at(t, c) + weights.token_type.at(0, c);
    }
  }
  return bert_ops::layer_norm(x, weights.norm, config.layer_norm_eps);
}

}  // namespace cerium::nn
