#pragma once
// BERT's input embeddings (BertModel's BertEmbeddings): the token ids of one sentence to the encoder's input,
// word + position + token type (0: one segment) embeddings, then a LayerNorm. Plaintext: the client computes this
// before encrypting the encoder's input.

#include <cstddef>
#include <span>

#include "cerium/io/weights.hpp"
#include "cerium/nn/bert.hpp"

namespace cerium::nn {

// The embedding tables and the LayerNorm after their sum.
struct BertEmbeddingWeights {
  Matrix word;        // vocabulary x hidden
  Matrix position;    // positions x hidden
  Matrix token_type;  // types x hidden
  NormWeights norm;   // gamma and beta, hidden each

  // scripts/export_minilm.py's minilm_embeddings.crwt: "embeddings.word", "embeddings.position",
  // "embeddings.token_type" (the file's row counts; hidden columns) and "embeddings.norm.{gamma,beta}" [hidden].
  // MismatchError naming a tensor that is absent or has other columns.
  static BertEmbeddingWeights from_weights(const io::WeightFile& weights, const BertConfig& config);
};

// tokens x hidden. InvalidArgument for no tokens, an id beyond the vocabulary or more tokens than positions.
Matrix bert_embed(const BertEmbeddingWeights& weights, const BertConfig& config,
                  std::span<const std::size_t> token_ids);

}  // namespace cerium::nn
