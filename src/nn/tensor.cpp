#include "cerium/nn/tensor.hpp"

#include <algorithm>
#include <bit>

#include "cerium/core/check.hpp"

namespace cerium::nn {

Tensor::Tensor(Shape s, std::vector<double> v) : shape(s), values(std::move(v)) {
  require(values.size() == shape.size(), "tensor: {} values for a {}x{}x{} shape", values.size(), shape.channels,
          shape.height, shape.width);
}

Packing::Packing(Shape shape, std::size_t slots)
    : shape_(shape), slots_(slots), block_(std::bit_ceil(std::max<std::size_t>(shape.size(), 1))) {
  require(std::has_single_bit(slots), "packing: {} slots; a power of two", slots);
  require(shape.size() >= 1 && shape.size() <= slots, "packing: a {}x{}x{} tensor ({} values) does not fit in {} slots",
          shape.channels, shape.height, shape.width, shape.size(), slots);
}

std::vector<double> Packing::pack(const Tensor& t) const {
  require<MismatchError>(t.shape == shape_, "packing: a {}x{}x{} tensor for a {}x{}x{} packing", t.shape.channels,
                         t.shape.height, t.shape.width, shape_.channels, shape_.height, shape_.width);
  std::vector<double> out(slots_, 0.0);
  for (std::size_t copy = 0; copy < copies(); ++copy) {
    for (std::size_t i = 0; i < t.values.size(); ++i) out[copy * block_ + i] = t.values[i];
  }
  return out;
}

Tensor Packing::unpack(std::span<const double> slots) const {
  require<MismatchError>(slots.size() >= shape_.size(), "packing: {} slots hold no {}-value tensor", slots.size(),
                         shape_.size());
  return Tensor(shape_, std::vector<double>(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(shape_.size())));
}

}  // namespace cerium::nn
