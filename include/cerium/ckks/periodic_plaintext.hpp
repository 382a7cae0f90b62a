#pragma once
// A plaintext of a periodic slot vector kept compressed (Encoder::encode_periodic_compressed): a slot vector that
// repeats with period p encodes to m'(X^(N / 2p)), whose NTT words come in blocks of gap = N / 2p equal words
// (math::ntt_forward_compressed), so one word a block is kept: 2p words a limb instead of N. A transformer's
// token-wise weights (a period of one row) travel to the device this way and are expanded there.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/plaintext.hpp"

namespace cerium::ckks {

// The compressed words of a periodic plaintext and what its expansion needs (see the file comment).
struct PeriodicPlaintext {
  ContextPtr context;     // the plaintext's
  int level = 0;          // the plaintext's: words holds limbs_at(level) limbs
  double scale = 1.0;     // the plaintext's
  std::size_t slots = 0;  // of the plaintext it stands for
  std::size_t gap = 1;    // each word fills gap consecutive NTT words
  std::vector<std::uint32_t> words;  // limb i's words at [i N / gap, (i + 1) N / gap)

  std::size_t words_per_limb() const { return context->ring_degree() / gap; }  // N / gap: 2p
  // The full plaintext in host memory (encode_periodic's words). MismatchError for words that do not fit the level.
  Plaintext expand() const;
};

}  // namespace cerium::ckks
