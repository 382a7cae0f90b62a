#include "cerium/nn/slot_map.hpp"

#include "cerium/core/check.hpp"

namespace cerium::nn {

SlotMap::SlotMap(std::size_t slots) : slots_(slots) { require(slots >= 1, "slot map: no slots"); }

void SlotMap::add(std::size_t out_slot, std::size_t in_slot, double weight) {
  require(out_slot < slots_ && in_slot < slots_, "slot map: entry ({}, {}) outside {} slots", out_slot, in_slot,
          slots_);
  if (weight == 0) return;
  const auto offset = static_cast<std::int64_t>((in_slot + slots_ - out_slot) % slots_);
  entries_[offset].emplace_back(static_cast<std::uint32_t>(out_slot), weight);
  ++count_;
}

void SlotMap::add(const Packing& out, std::size_t out_index, const Packing& in, std::size_t in_index, double weight) {
  require<MismatchError>(out.slots() == slots_ && in.slots() == slots_, "slot map of {} slots: packings of {} and {}",
                         slots_, in.slots(), out.slots());
  const std::size_t block = in.block();
  for (std::size_t copy = 0; copy < out.copies(); ++copy) {
    const std::size_t q = copy * out.block() + out_index;
    const std::size_t offset = (in_index + block - q % block) % block;  // copies repeat with period block
    add(q, (q + offset) % slots_, weight);
  }
}

std::vector<std::int64_t> SlotMap::offsets() const {
  std::vector<std::int64_t> out;
  out.reserve(entries_.size());
  for (const auto& entry : entries_) out.push_back(entry.first);
  return out;
}

std::vector<circuits::Complex> SlotMap::diagonal(std::int64_t offset) const {
  const auto it = entries_.find(offset);
  require(it != entries_.end(), "slot map: no diagonal at offset {}", offset);
  std::vector<circuits::Complex> out(slots_, circuits::Complex(0.0));
  for (const auto& [slot, weight] : it->second) out[slot] += weight;
  return out;
}

circuits::DiagonalMatrix SlotMap::matrix() const {
  circuits::DiagonalMatrix m{slots_, {}};
  for (const auto& entry : entries_) m.diagonals.emplace(entry.first, diagonal(entry.first));
  return m;
}

Shape Conv2dSpec::output_shape(const Shape& input) const {
  require(input.channels == in_channels, "conv2d: the input has {} channels and the layer takes {}", input.channels,
          in_channels);
  require(kernel >= 1 && stride >= 1, "conv2d: kernel {} and stride {} must be positive", kernel, stride);
  require(input.height + 2 * padding >= kernel && input.width + 2 * padding >= kernel,
          "conv2d: a {}x{} kernel does not fit a {}x{} input padded by {}", kernel, kernel, input.height, input.width,
          padding);
  return {out_channels, (input.height + 2 * padding - kernel) / stride + 1,
          (input.width + 2 * padding - kernel) / stride + 1};
}

SlotMap conv2d_map(const Conv2dSpec& spec, const std::vector<double>& weights, const Packing& in, const Packing& out) {
  const Shape& is = in.shape();
  const Shape os = spec.output_shape(is);
  require<MismatchError>(out.shape() == os && out.slots() == in.slots(),
                         "conv2d: the output packing must hold {}x{}x{} in {} slots", os.channels, os.height, os.width,
                         in.slots());
  const std::size_t k = spec.kernel;
  require(weights.size() == spec.out_channels * spec.in_channels * k * k, "conv2d: {} weights for {}x{}x{}x{}",
          weights.size(), spec.out_channels, spec.in_channels, k, k);
  SlotMap map(in.slots());
  for (std::size_t o = 0; o < os.channels; ++o) {
    for (std::size_t y = 0; y < os.height; ++y) {
      for (std::size_t x = 0; x < os.width; ++x) {
        for (std::size_t c = 0; c < is.channels; ++c) {
          for (std::size_t ky = 0; ky < k; ++ky) {
            for (std::size_t kx = 0; kx < k; ++kx) {
              // Input position (y s + ky - p, x s + kx - p): outside the input it reads a padding zero.
              const auto iy = static_cast<std::ptrdiff_t>(y * spec.stride + ky) - static_cast<std::ptrdiff_t>(spec.padding);
              const auto ix = static_cast<std::ptrdiff_t>(x * spec.stride + kx) - static_cast<std::ptrdiff_t>(spec.padding);
              if (iy < 0 || ix < 0 || iy >= static_cast<std::ptrdiff_t>(is.height) ||
                  ix >= static_cast<std::ptrdiff_t>(is.width)) {
                continue;
              }
              map.add(out, out.slot(o, y, x), in, in.slot(c, static_cast<std::size_t>(iy), static_cast<std::size_t>(ix)),
                      weights[((o * is.channels + c) * k + ky) * k + kx]);
            }
          }
        }
      }
    }
  }
  return map;
}

SlotMap global_average_pool_map(const Packing& in, const Packing& out) {
  const Shape& is = in.shape();
  require<MismatchError>(out.shape() == Shape{is.channels, 1, 1} && out.slots() == in.slots(),
                         "average pool: the output packing must hold {}x1x1 in {} slots", is.channels, in.slots());
  SlotMap map(in.slots());
  const double w = 1.0 / static_cast<double>(is.height * is.width);
  for (std::size_t c = 0; c < is.channels; ++c) {
    for (std::size_t y = 0; y < is.height; ++y) {
      for (std::size_t x = 0; x < is.width; ++x) map.add(out, out.slot(c, 0, 0), in, in.slot(c, y, x), w);
    }
  }
  return map;
}

SlotMap dense_map(const std::vector<double>& weights, const Packing& in, const Packing& out) {
  const std::size_t n_in = in.shape().size(), n_out = out.shape().size();
  require(weights.size() == n_in * n_out, "dense: {} weights for {} outputs x {} inputs", weights.size(), n_out, n_in);
  require<MismatchError>(out.slots() == in.slots(), "dense: the packings have {} and {} slots", in.slots(),
                         out.slots());
  SlotMap map(in.slots());
  const Shape& is = in.shape();
  const Shape& os = out.shape();
  for (std::size_t k = 0; k < n_out; ++k) {
    const std::size_t out_slot = out.slot(k / (os.height * os.width), (k / os.width) % os.height, k % os.width);
    for (std::size_t i = 0; i < n_in; ++i) {  // i: the input tensor's value index (c H + y) W + x
      const std::size_t in_slot = in.slot(i / (is.height * is.width), (i / is.width) % is.height, i % is.width);
      map.add(out, out_slot, in, in_slot, weights[k * n_in + i]);
    }
  }
  return map;
}

}  // namespace cerium::nn
