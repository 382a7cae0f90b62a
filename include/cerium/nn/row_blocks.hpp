#pragma once
// A tokens x features matrix on token-major rows over several ciphertexts (nn/row_layout.hpp): token t is row
// t mod rows of block t / rows. The transformer models' pack and unpack.

#include <complex>
#include <cstddef>
#include <vector>

#include "cerium/nn/bert.hpp"  // Matrix
#include "cerium/nn/row_layout.hpp"

namespace cerium::nn {

// (rows x blocks) x features into each block's slots, padding 0. InvalidArgument for another shape.
std::vector<std::vector<double>> pack_row_blocks(const RowLayout& layout, std::size_t blocks, const Matrix& x);
// The matrix back from each block's decoded slots. InvalidArgument for another count or size of blocks.
Matrix unpack_row_blocks(const RowLayout& layout, const std::vector<std::vector<std::complex<double>>>& blocks);

}  // namespace cerium::nn
