#pragma once
// Tensors of a model (channel-major doubles) and how one is packed into the slots of a ciphertext: channel c's
// plane after channel c - 1's, row after row, index (c H + y) W + x, in a block of the next power of two of
// slots (zeros after the tensor), and the block repeated over all the slots. The copies make the slots cyclic in
// the tensor: a layer reading index i for the value at index j rotates by (i - j) mod block, a nonnegative offset
// below the block, so a convolution needs about C_in x k^2 diagonals instead of (2 C_in - 1) x k^2. Every layer maps
// one packing to another as a slot-linear map (nn/slot_map.hpp), so a stride or a pooling repacks without a
// separate step.

#include <cstddef>
#include <span>
#include <vector>

namespace cerium::nn {

struct Shape {
  std::size_t channels = 1, height = 1, width = 1;
  std::size_t size() const { return channels * height * width; }
  friend bool operator==(const Shape&, const Shape&) = default;
};

struct Tensor {
  Shape shape;
  std::vector<double> values;  // channel-major: (c, y, x) at (c H + y) W + x

  Tensor() = default;
  explicit Tensor(Shape s) : shape(s), values(s.size(), 0.0) {}
  Tensor(Shape s, std::vector<double> v);  // InvalidArgument unless v.size() == s.size()
  double& at(std::size_t c, std::size_t y, std::size_t x) { return values[(c * shape.height + y) * shape.width + x]; }
  double at(std::size_t c, std::size_t y, std::size_t x) const {
    return values[(c * shape.height + y) * shape.width + x];
  }
};

class Packing {
 public:
  // InvalidArgument when the tensor does not fit in `slots` (a power of two).
  Packing(Shape shape, std::size_t slots);

  const Shape& shape() const { return shape_; }
  std::size_t slots() const { return slots_; }
  std::size_t block() const { return block_; }    // the power of two a copy takes
  std::size_t copies() const { return slots_ / block_; }
  // The index of (c, y, x) in a block, which is also its slot in the first copy.
  std::size_t slot(std::size_t c, std::size_t y, std::size_t x) const {
    return (c * shape_.height + y) * shape_.width + x;
  }
  std::vector<double> pack(const Tensor& t) const;  // every copy; MismatchError for another shape
  Tensor unpack(std::span<const double> slots) const;  // from the first copy

 private:
  Shape shape_;
  std::size_t slots_, block_;
};

}  // namespace cerium::nn
