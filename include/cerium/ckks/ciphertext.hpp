#pragma once
// A CKKS ciphertext: 2 polynomials (c0, c1), or 3 after a tensor product before relinearization, each in NTT form
// over Q_level, with its level, exact scale (tracked as a double) and slot count. Decryption computes
// c0 + c1 s (+ c2 s^2). A value type that moves; copies are explicit (clone()).
//
// A secret-key encryption may record the seed its c1 was expanded from: serialization then stores the seed
// instead of c1 (half the size). Any operation that changes c1 drops the seed.

#include <cstddef>
#include <optional>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/math/chacha20.hpp"
#include "cerium/ring/rns_poly.hpp"

namespace cerium::ckks {

// The seed and stream that c1 of a fresh secret-key encryption was sampled from (uniform in NTT form).
struct PolySeed {
  math::Seed seed;           // the ChaCha20 key the uniform polynomial was expanded from
  std::uint64_t stream = 0;  // its stream (rlwe/uniform_stream.hpp)
};

// A value type: moves hand the polynomials over, copies are explicit (clone); an empty one (default-constructed
// or moved from) is refused by every operation with a MismatchError.
class Ciphertext {
 public:
  Ciphertext() = default;
  // parts.size() is 2 or 3; each part is over context->q_basis(level) in NTT form (InvalidArgument or
  // MismatchError otherwise, naming what is wrong).
  Ciphertext(ContextPtr context, std::vector<ring::RnsPoly> parts, int level, double scale, std::size_t slots);

  // Moves leave the source empty.
  Ciphertext(Ciphertext&&) noexcept = default;
  Ciphertext& operator=(Ciphertext&&) noexcept = default;
  // A deep copy, on the same devices as the parts (an empty one clones to an empty one).
  Ciphertext clone() const;

  const ContextPtr& context() const { return context_; }  // null when empty
  std::size_t size() const { return parts_.size(); }       // parts: 2, or 3 before relinearization
  // InvalidArgument for i >= size().
  const ring::RnsPoly& part(std::size_t i) const {
    if (i >= parts_.size()) throw_part_index(i);
    return parts_[i];
  }
  ring::RnsPoly& part(std::size_t i) {
    if (i >= parts_.size()) throw_part_index(i);
    return parts_[i];
  }
  std::vector<ring::RnsPoly>& parts() { return parts_; }
  const std::vector<ring::RnsPoly>& parts() const { return parts_; }
  int level() const { return level_; }
  double scale() const { return scale_; }
  std::size_t slots() const { return slots_; }
  bool empty() const { return context_ == nullptr; }

  // For the evaluator: after an operation changed the parts' basis or meaning. Checked as the constructor checks:
  // LevelError for a level that does not exist or a scale the level cannot carry (below 1, not below Q_level, not
  // finite), MismatchError for parts not over the level's basis, InvalidArgument for a slot count that is not a
  // power of two up to N/2. A failed call changes nothing.
  void set_level(int level);
  void set_scale(double scale);
  void set_slots(std::size_t slots);

  // The seed c1 was expanded from, when it still is that expansion (serialization then stores the seed instead).
  const std::optional<PolySeed>& c1_seed() const { return c1_seed_; }
  void set_c1_seed(std::optional<PolySeed> seed) { c1_seed_ = seed; }

 private:
  [[noreturn]] void throw_part_index(std::size_t i) const;

  ContextPtr context_;
  std::vector<ring::RnsPoly> parts_;
  int level_ = 0;
  double scale_ = 1.0;
  std::size_t slots_ = 0;
  std::optional<PolySeed> c1_seed_;
};

}  // namespace cerium::ckks
