#pragma once
// An encoded message: one RNS polynomial in NTT form over Q_level, with the scale it was encoded at and its slot
// count. A value type that moves.

#include <cstddef>
#include <utility>

#include "cerium/ckks/context.hpp"
#include "cerium/ring/rns_poly.hpp"

namespace cerium::ckks {

// An encoded message (see the file comment): limbs x N words in NTT form, with its level, scale and slot count.
class Plaintext {
 public:
  Plaintext() = default;
  // poly must be over context->q_basis(level); it is stored in NTT form (converted if needed).
  Plaintext(ContextPtr context, ring::RnsPoly poly, int level, double scale, std::size_t slots);

  // Moves hand the polynomial over; copies are explicit (clone).
  Plaintext(Plaintext&&) noexcept = default;
  Plaintext& operator=(Plaintext&&) noexcept = default;
  Plaintext clone() const { return Plaintext(context_, poly_.clone(), level_, scale_, slots_); }  // a deep copy

  const ContextPtr& context() const { return context_; }  // null when empty
  const ring::RnsPoly& poly() const { return poly_; }     // over Q_level, NTT form
  // The polynomial itself, leaving this plaintext empty (for placement without a copy): like a moved-from one, it
  // has no context, so that every call given it throws MismatchError rather than reading a missing polynomial.
  ring::RnsPoly take_poly() && {
    context_ = nullptr;
    return std::move(poly_);
  }
  ring::RnsPoly& poly() { return poly_; }             // the same, writable
  int level() const { return level_; }                // l: the polynomial has limbs_at(l) limbs
  double scale() const { return scale_; }             // the factor the slot values were multiplied by
  std::size_t slots() const { return slots_; }        // the slot count it was encoded for
  bool empty() const { return context_ == nullptr; }  // no context: default-made, moved or taken

 private:
  ContextPtr context_;
  ring::RnsPoly poly_;
  int level_ = 0;
  double scale_ = 1.0;
  std::size_t slots_ = 0;
};

}  // namespace cerium::ckks
