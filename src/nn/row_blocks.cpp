#include "cerium/nn/row_blocks.hpp"

#include "cerium/core/check.hpp"

namespace cerium::nn {

std::vector<std::vector<double>> pack_row_blocks(const RowLayout& layout, std::size_t blocks, const Matrix& x) {
  require(x.rows == layout.rows * blocks && x.cols == layout.features && x.values.size() == x.rows * x.cols,
          "row blocks: a matrix of {} x {} for {} blocks of {} rows of {} features (pad the tokens to the rows)",
          x.rows, x.cols, blocks, layout.rows, layout.features);
  std::vector<std::vector<double>> out(blocks, std::vector<double>(layout.slots(), 0.0));
  for (std::size_t t = 0; t < x.rows; ++t) {
    for (std::size_t f = 0; f < x.cols; ++f) out[t / layout.rows][layout.slot(t % layout.rows, f)] = x.at(t, f);
  }
  return out;
}

Matrix unpack_row_blocks(const RowLayout& layout, const std::vector<std::vector<std::complex<double>>>& blocks) {
  require(!blocks.empty(), "row blocks: no blocks to unpack");
  Matrix m = Matrix::zeros(layout.rows * blocks.size(), layout.features);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    require(blocks[b].size() >= layout.slots(), "row blocks: {} slots in block {} for a layout of {}",
            blocks[b].size(), b, layout.slots());
    for (std::size_t r = 0; r < layout.rows; ++r) {
      for (std::size_t f = 0; f < m.cols; ++f) m.at(b * layout.rows + r, f) = blocks[b][layout.slot(r, f)].real();
    }
  }
  return m;
}

}  // namespace cerium::nn
