#pragma once
// One grouped DFT stage as the bootstrapper applies it. Internal.

#include <cstdint>
#include <map>
#include <utility>

#include "cerium/ckks/bootstrap/bootstrapper.hpp"
#include "dft_matrices.hpp"

namespace cerium::ckks {

template <backend::PolyBackend B>
struct BasicBootstrapper<B>::Transform {
  int level = 0;                   // the ciphertext's level when the transform is applied
  double plaintext_scale = 0;      // encoding scale of the diagonals
  bootstrap_detail::DiagonalMatrix matrix;
  bootstrap_detail::BsgsPlan plan;
  std::map<std::pair<std::int64_t, std::int64_t>, Plaintext> cached;  // (giant, baby) -> diagonal
};

}  // namespace cerium::ckks
