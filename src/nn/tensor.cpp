#include "cerium/nn/tensor.hpp"

#include <algorithm>
#include <bit>

#include "cerium/core/check.hpp"

namespace cerium::nn {

Tensor::Tensor(Shape s, std::vector<double> v) : shape(s), values(std::move(v)) {
  require(values.size() == shape.size(), "tensor: {} values for a {}x{}x{} shape", values.size(), shape.channels,
          shape.height, shape.width);
}

Packing::Packing(Shape shape, std::size_t slots, std::size_t gap, std::size_t plane_h, std::size_t plane_w)
    : shape_(shape),
      slots_(slots),
      gap_(gap),
      plane_h_(plane_h != 0 ? plane_h : shape.height * gap),
      plane_w_(plane_w != 0 ? plane_w : shape.width * gap),
      block_(1) {
  require(std::has_single_bit(slots), "packing: {} slots; a power of two", slots);
  require(gap >= 1 && shape.size() >= 1, "packing: gap {} and a {}x{}x{} tensor", gap, shape.channels, shape.height,
          shape.width);
  require(shape.height * gap <= plane_h_ && shape.width * gap <= plane_w_,
          "packing: {}x{} pixels at gap {} do not fit planes of {}x{}", shape.height, shape.width, gap, plane_h_,
          plane_w_);
  const std::size_t planes = (shape.channels + gap * gap - 1) / (gap * gap);
  block_ = std::bit_ceil(planes * plane_h_ * plane_w_);
  require(block_ <= slots, "packing: a {}x{}x{} tensor at gap {} takes {} planes of {}x{} slots; {} slots hold fewer",
          shape.channels, shape.height, shape.width, gap, planes, plane_h_, plane_w_, slots);
}

std::vector<double> Packing::pack(const Tensor& t) const {
  require<MismatchError>(t.shape == shape_, "packing: a {}x{}x{} tensor for a {}x{}x{} packing", t.shape.channels,
                         t.shape.height, t.shape.width, shape_.channels, shape_.height, shape_.width);
  std::vector<double> out(slots_, 0.0);
  for (std::size_t c = 0; c < shape_.channels; ++c) {
    for (std::size_t y = 0; y < shape_.height; ++y) {
      for (std::size_t x = 0; x < shape_.width; ++x) {
        for (std::size_t copy = 0; copy < copies(); ++copy) out[copy * block_ + slot(c, y, x)] = t.at(c, y, x);
      }
    }
  }
  return out;
}

Tensor Packing::unpack(std::span<const double> slots) const {
  require<MismatchError>(slots.size() >= block_, "packing: {} slots hold no copy of {} slots", slots.size(), block_);
  Tensor t(shape_);
  for (std::size_t c = 0; c < shape_.channels; ++c) {
    for (std::size_t y = 0; y < shape_.height; ++y) {
      for (std::size_t x = 0; x < shape_.width; ++x) t.at(c, y, x) = slots[slot(c, y, x)];
    }
  }
  return t;
}

}  // namespace cerium::nn
