#pragma once
// Whether two ciphertexts (on the host) hold the same words: the examples' check that a replayed, fused or
// side-by-side run computed exactly what the plain run did.

#include <cstddef>

#include "cerium/ckks/ciphertext.hpp"

inline bool same_words(const cerium::ckks::Ciphertext& a, const cerium::ckks::Ciphertext& b) {
  bool same = a.size() == b.size() && a.level() == b.level() && a.scale() == b.scale();
  for (std::size_t i = 0; same && i < a.size(); ++i) same = a.part(i) == b.part(i);
  return same;
}
