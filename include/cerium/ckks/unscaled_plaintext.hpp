#pragma once
// A slot vector's special inverse FFT before the scale and the rounding: encoding's first half
// (Encoder::unscaled). A plaintext of any level and scale is one multiply, one rounding and one NTT a limb away
// from it, so a weight kept this way is encoded where and when it is used (BasicEvaluator::encode), at whatever
// level the plan needs, with Encoder::encode_periodic's words.
//
// Size: 2p doubles for a period of p slots (N doubles for a full slot vector), against limbs x N words encoded:
// smaller than the plaintext it stands for above 2 limbs, and the same whatever the level. A model whose encoded
// weights outgrow the GPU keeps them this way in device memory (graph::ExecutorOptions::keep_rest_unscaled)
// instead of encoding them on the host and copying them over PCIe at each use.

#include <cstddef>
#include <span>

#include "cerium/ckks/context.hpp"
#include "cerium/core/device.hpp"
#include "cerium/core/device_memory.hpp"

namespace cerium::ckks {

// The 2p unscaled coefficients of a slot vector of period p, on the host or a device (see the file comment).
// Move-only; copy_to copies the words to another device (or the host).
class UnscaledPlaintext {
 public:
  UnscaledPlaintext() = default;
  // coefficients: 2 period doubles (4 period words) on any device; largest: their largest magnitude. Checked:
  // InvalidArgument for a period or slot count that is not a power of two with period <= slots <= N/2, a word
  // count other than 4 period, or a negative or non-finite largest.
  UnscaledPlaintext(ContextPtr context, std::size_t slots, std::size_t period, double largest,
                    DeviceWords coefficients);

  bool empty() const { return context_ == nullptr; }      // default-made or moved
  const ContextPtr& context() const { return context_; }  // null when empty
  std::size_t slots() const { return slots_; }    // of the plaintexts it encodes to (a later encode may change it)
  std::size_t period() const { return period_; }  // p: the slot vector repeats every p slots
  // N / 2p: coefficient k of the 2p sits at m_(k gap); every other coefficient of the plaintext is zero.
  std::size_t gap() const { return context_->ring_degree() / (2 * period_); }
  std::size_t count() const { return 2 * period_; }  // coefficients: Re u_0 .. Re u_(p-1), Im u_0 .. Im u_(p-1)
  // The largest |coefficient|: encoding's range check (scale overflow) without reading them back.
  double largest() const { return largest_; }
  Device device() const { return words_.device(); }
  const DeviceWords& words() const { return words_; }  // the doubles' bytes, 2 words each
  std::size_t bytes() const { return count() * sizeof(double); }
  // The coefficients, in host memory only (InvalidArgument on a device: download them with Encoder's copy).
  std::span<const double> host_coefficients() const;
  // The same coefficients on another device (or the host).
  UnscaledPlaintext copy_to(Device device) const;

 private:
  ContextPtr context_;
  std::size_t slots_ = 0, period_ = 0;
  double largest_ = 0;
  DeviceWords words_;
};

}  // namespace cerium::ckks
