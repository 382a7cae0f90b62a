#pragma once
// Tensors of a model (channel-major doubles) and how one is packed into the slots of a ciphertext.
//
// Multiplexed packing (Lee et al., ICML 2022), with a gap k: channel planes of plane_h x plane_w slots, each
// holding k^2 channels interleaved, (c, y, x) at plane c / k^2, row y k + (c mod k^2) / k, column x k + c mod k;
// with k = 1 a plane is one channel, row after row. A stride-2 convolution then writes its output where its
// input pixels were (the gap doubles, the plane stays), so every layer's map is shift-invariant: its diagonals
// depend on the kernel and the channels, not on the pixel, and stay few.
//
// The planes take a block of the next power of two of slots, repeated over all the slots: the copies make the
// slots cyclic in the tensor, so a layer reading slot i for the value at slot j rotates by (i - j) mod block, an
// offset below the block. Every layer maps one packing to another as a slot-linear map (nn/slot_map.hpp).

#include <cstddef>
#include <span>
#include <vector>

namespace cerium::nn {

// A tensor's dimensions.
struct Shape {
  // channels x height x width; size() is their product, == compares all three.
  std::size_t channels = 1, height = 1, width = 1;
  std::size_t size() const { return channels * height * width; }
  friend bool operator==(const Shape&, const Shape&) = default;
};

// A model's tensor: its shape and its values.
struct Tensor {
  Shape shape;                 // C x H x W
  std::vector<double> values;  // channel-major: (c, y, x) at (c H + y) W + x

  Tensor() = default;
  // Zeros of this shape.
  explicit Tensor(Shape s) : shape(s), values(s.size(), 0.0) {}
  Tensor(Shape s, std::vector<double> v);  // InvalidArgument unless v.size() == s.size()
  // The value at (c, y, x), unchecked.
  double& at(std::size_t c, std::size_t y, std::size_t x) { return values[(c * shape.height + y) * shape.width + x]; }
  // The same, read-only.
  double at(std::size_t c, std::size_t y, std::size_t x) const {
    return values[(c * shape.height + y) * shape.width + x];
  }
};

// Where a tensor's values sit in a ciphertext's slots: the multiplexed packing of the header comment.
class Packing {
 public:
  // gap k >= 1; plane_h / plane_w 0: height k / width k. InvalidArgument when the tensor does not fit in `slots`
  // (a power of two) or its rows and columns do not fit the plane.
  Packing(Shape shape, std::size_t slots, std::size_t gap = 1, std::size_t plane_h = 0, std::size_t plane_w = 0);

  // The tensor's shape, the slot count, the gap k, a plane's height and width, and how many copies of the block
  // fill the slots.
  const Shape& shape() const { return shape_; }
  std::size_t slots() const { return slots_; }
  std::size_t gap() const { return gap_; }
  std::size_t plane_h() const { return plane_h_; }
  std::size_t plane_w() const { return plane_w_; }
  std::size_t block() const { return block_; }    // the power of two a copy takes
  std::size_t copies() const { return slots_ / block_; }
  // The slot of (c, y, x) in the first copy.
  std::size_t slot(std::size_t c, std::size_t y, std::size_t x) const {
    const std::size_t per_plane = gap_ * gap_, sub = c % per_plane;
    return (c / per_plane) * plane_h_ * plane_w_ + (y * gap_ + sub / gap_) * plane_w_ + x * gap_ + sub % gap_;
  }
  // The packing of a tensor of `shape` in this one's planes with gap `gap` (a convolution's output, a pool's).
  Packing with(Shape shape, std::size_t gap) const { return Packing(shape, slots_, gap, plane_h_, plane_w_); }
  std::vector<double> pack(const Tensor& t) const;  // every copy; MismatchError for another shape
  Tensor unpack(std::span<const double> slots) const;  // from the first copy

 private:
  Shape shape_;
  std::size_t slots_, gap_, plane_h_, plane_w_, block_;
};

}  // namespace cerium::nn
