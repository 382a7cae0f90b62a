#include "cerium/ckks/unscaled_plaintext.hpp"

#include <bit>
#include <cmath>

#include "cerium/core/check.hpp"

namespace cerium::ckks {

UnscaledPlaintext::UnscaledPlaintext(ContextPtr context, std::size_t slots, std::size_t period, double largest,
                                     DeviceWords coefficients)
    : context_(std::move(context)), slots_(slots), period_(period), largest_(largest), words_(std::move(coefficients)) {
  require(context_ != nullptr, "UnscaledPlaintext needs a context; got a null ContextPtr");
  const std::size_t max_slots = context_->parameters().max_slots();
  require(std::has_single_bit(slots_) && slots_ <= max_slots && std::has_single_bit(period_) && period_ <= slots_,
          "UnscaledPlaintext: a period of {} for {} slots; both must be powers of two with period <= slots <= N/2 "
          "= {}",
          period_, slots_, max_slots);
  require(words_.size() == 4 * period_,
          "UnscaledPlaintext: {} words for a period of {} (2 doubles a slot of the period: {} words)", words_.size(),
          period_, 4 * period_);
  require(std::isfinite(largest_) && largest_ >= 0, "UnscaledPlaintext: the largest magnitude {} is not finite",
          largest_);
}

std::span<const double> UnscaledPlaintext::host_coefficients() const {
  require(!empty(), "UnscaledPlaintext: empty (default-constructed or moved from)");
  require(words_.device().host_accessible(),
          "UnscaledPlaintext: the coefficients are in the memory of {}; copy_to(Device::cpu()) first",
          to_string(words_.device()));
  return {reinterpret_cast<const double*>(words_.data()), count()};
}

UnscaledPlaintext UnscaledPlaintext::copy_to(Device device) const {
  require(!empty(), "UnscaledPlaintext: empty (default-constructed or moved from)");
  return UnscaledPlaintext(context_, slots_, period_, largest_, words_.copy_to(device, words_.size()));
}

}  // namespace cerium::ckks
