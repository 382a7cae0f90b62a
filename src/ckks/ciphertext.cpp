#include "cerium/ckks/ciphertext.hpp"

#include <bit>

#include "cerium/ckks/plaintext.hpp"
#include "cerium/ckks/scale.hpp"
#include "cerium/core/check.hpp"

namespace cerium::ckks {
namespace {

void require_valid_scale(const ContextPtr& context, double scale, int level, const char* what) {
  const std::string problem = scale_problem(scale, context->q_basis(level)->log2_product());
  require<LevelError>(problem.empty(), "{} at level {}: {}", what, level, problem);
}

void require_level_poly(const ContextPtr& context, ring::RnsPoly& poly, int level, const char* what) {
  require<MismatchError>(context != nullptr, "{}: no context given", what);
  require<LevelError>(level >= 0 && level <= context->max_level(),
                      "{}: level {} does not exist: levels run from 0 to {}", what, level, context->max_level());
  const auto& expected = context->q_basis(level);
  require<MismatchError>(!poly.empty() && poly.basis() == *expected,
                         "{}: a polynomial over {} cannot be at level {}, whose basis is {}", what,
                         poly.empty() ? std::string("nothing") : ring::describe(poly.basis()), level,
                         ring::describe(*expected));
  poly.to_ntt();
}

// The slot count every operation reduces rotations and FFTs by: 0 would divide by zero.
void require_valid_slots(const ContextPtr& context, std::size_t slots, const char* what) {
  const std::size_t max_slots = context->ring_degree() / 2;
  require(std::has_single_bit(slots) && slots <= max_slots,
          "{}: {} slots; the slot count must be a power of two between 1 and N/2 = {}", what, slots, max_slots);
}

}  // namespace

Plaintext::Plaintext(ContextPtr context, ring::RnsPoly poly, int level, double scale, std::size_t slots)
    : context_(std::move(context)), poly_(std::move(poly)), level_(level), scale_(scale), slots_(slots) {
  require_level_poly(context_, poly_, level_, "plaintext");
  require_valid_scale(context_, scale_, level_, "plaintext");
  require_valid_slots(context_, slots_, "plaintext");
}

Ciphertext::Ciphertext(ContextPtr context, std::vector<ring::RnsPoly> parts, int level, double scale,
                       std::size_t slots)
    : context_(std::move(context)), parts_(std::move(parts)), level_(level), scale_(scale), slots_(slots) {
  require(parts_.size() == 2 || parts_.size() == 3, "a ciphertext has 2 or 3 parts, not {}", parts_.size());
  for (auto& part : parts_) require_level_poly(context_, part, level_, "ciphertext");
  require_valid_scale(context_, scale_, level_, "ciphertext");
  require_valid_slots(context_, slots_, "ciphertext");
}

void Ciphertext::set_level(int level) {
  require<MismatchError>(!empty(), "Ciphertext::set_level({}): the ciphertext is empty", level);
  require<LevelError>(level >= 0 && level <= context_->max_level(),
                      "Ciphertext::set_level: level {} does not exist: levels run from 0 to {}", level,
                      context_->max_level());
  const auto& expected = context_->q_basis(level);
  for (const auto& part : parts_) {
    require<MismatchError>(part.basis() == *expected,
                           "Ciphertext::set_level: a part over {} cannot be at level {}, whose basis is {}; change "
                           "the parts' basis first (level_down, rescale)",
                           ring::describe(part.basis()), level, ring::describe(*expected));
  }
  level_ = level;
}

void Ciphertext::set_scale(double scale) {
  require<MismatchError>(!empty(), "Ciphertext::set_scale({}): the ciphertext is empty", scale);
  require_valid_scale(context_, scale, level_, "Ciphertext::set_scale");
  scale_ = scale;
}

void Ciphertext::set_slots(std::size_t slots) {
  require<MismatchError>(!empty(), "Ciphertext::set_slots({}): the ciphertext is empty", slots);
  require_valid_slots(context_, slots, "Ciphertext::set_slots");
  slots_ = slots;
}

void Ciphertext::throw_part_index(std::size_t i) const {
  throw InvalidArgument(fmt::format("Ciphertext::part({}): the ciphertext has {} parts{}", i, parts_.size(),
                                    empty() ? " (it is empty: default-constructed or moved from)" : ""));
}

Ciphertext Ciphertext::clone() const {
  // An empty ciphertext clones to an empty one, so that the out-of-place operations (which clone first) report it
  // as their own operand error (MismatchError: no context) rather than as a malformed construction.
  if (empty()) return Ciphertext{};
  std::vector<ring::RnsPoly> copies;
  copies.reserve(parts_.size());
  for (const auto& part : parts_) copies.push_back(part.clone());
  Ciphertext copy(context_, std::move(copies), level_, scale_, slots_);
  copy.c1_seed_ = c1_seed_;
  return copy;
}

}  // namespace cerium::ckks
