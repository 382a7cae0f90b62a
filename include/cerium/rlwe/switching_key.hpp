#pragma once
// A switching key from s' to s (hybrid key switching, digits of alpha primes, alpha special primes P): digit d is
// (b_d, a_d) = (-a_d s + e_d + P g_d s', a_d) over Q_top u P in NTT form, with the gadget
// g_d = (Q / Q_d) [(Q / Q_d)^{-1}]_{Q_d} for the digit's primes Q_d. The uniform halves a_d may be kept as a seed
// only (KeyStorage::seeded), halving key memory; they are expanded where they are used (the CUDA backend expands
// them on the device when a key is uploaded: half the transfer, the same words).
//
// A scheme builds its relinearization and rotation keys from these (ckks/keys.hpp); key switching
// (rlwe/key_switch.hpp) and the backends use only this type.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "cerium/math/chacha20.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "cerium/rlwe/context.hpp"

namespace cerium::rlwe {

// How a key keeps its uniform halves a_d: as polynomials, or only as the seed they expand from.
enum class KeyStorage { expanded, seeded };

// A switching key from s' to s (see the file comment): one pair (b_d, a_d) per digit of Q_top, over the context's
// key basis in NTT form.
class SwitchingKey {
 public:
  SwitchingKey() = default;
  // digits[d] = {b_d, a_d} over key_basis(); with storage seeded, a_d may be empty and is expanded from the seed
  // (stream base_stream + d). MismatchError for a digit count or basis that does not match the context.
  SwitchingKey(ContextPtr context, std::vector<std::array<ring::RnsPoly, 2>> digits, KeyStorage storage,
               std::optional<math::Seed> seed, std::uint64_t base_stream);
  // Moves hand the polynomials over; copies are explicit (clone).
  SwitchingKey(SwitchingKey&&) noexcept = default;
  SwitchingKey& operator=(SwitchingKey&&) noexcept = default;

  const ContextPtr& context() const { return context_; }                            // the context it was made for
  std::size_t digit_count() const { return digits_.size(); }                        // digits of Q_top
  KeyStorage storage() const { return storage_; }                                   // expanded or seeded
  // b_d, over key_basis(). The digit accessors throw InvalidArgument for digit >= digit_count().
  const ring::RnsPoly& b(std::size_t digit) const { return digit_pair(digit)[0]; }
  // a_d: the stored polynomial, or for seeded storage a fresh expansion of the seed.
  ring::RnsPoly a(std::size_t digit) const;
  // a_d without expansion: null for seeded storage that does not hold it.
  const ring::RnsPoly* stored_a(std::size_t digit) const;
  const std::optional<math::Seed>& seed() const { return seed_; }  // the seed of the a_d, when the key has one
  std::uint64_t base_stream() const { return base_stream_; }       // a_d is stream base_stream() + d of seed()
  // Limb `limb` of a_d (a position in key_basis()) into out (N words): a copy of the stored limb, or its
  // expansion from the seed, so that key switching at a low level expands only the limbs it reads.
  void a_limb(std::size_t digit, std::size_t limb, std::span<std::uint32_t> out) const;
  // A deep copy.
  SwitchingKey clone() const;

 private:
  ContextPtr context_;
  std::vector<std::array<ring::RnsPoly, 2>> digits_;
  const std::array<ring::RnsPoly, 2>& digit_pair(std::size_t digit) const;
  KeyStorage storage_ = KeyStorage::expanded;
  std::optional<math::Seed> seed_;
  std::uint64_t base_stream_ = 0;
};

// Where a new switching key's randomness comes from: its uniform halves from stream base_stream + d of `uniform`
// (a public seed: what a seeded key stores), its errors from the same streams of `noise` (secret).
struct SwitchingKeyDraw {
  math::Seed uniform;                         // seed of the a_d; public once a seeded key is stored
  math::Seed noise;                           // seed of the e_d; secret
  std::uint64_t base_stream = 0;              // digit d draws from stream base_stream + d of each
  KeyStorage storage = KeyStorage::expanded;  // seeded: the key keeps `uniform` instead of its a_d
};

// The switching key from `from_secret` (s') to `secret` (s), both over context->key_basis() in NTT form:
// digit d is (-a_d s + e_d + P g_d s', a_d). Deterministic in the draw's seeds and streams. MismatchError for a
// secret over another basis or form.
SwitchingKey make_switching_key(const ContextPtr& context, const ring::RnsPoly& secret,
                                const ring::RnsPoly& from_secret, const SwitchingKeyDraw& draw);
// make_switching_key's checks of its arguments (a maker of the same keys elsewhere runs them too): MismatchError
// for a null context or a secret that is empty, over another basis than context->key_basis() or not in NTT form.
void require_switching_key_secrets(const ContextPtr& context, const ring::RnsPoly& secret,
                                   const ring::RnsPoly& from_secret);
// [P g_d]_{q_i} for every limb i of context->key_basis(): the gadget g_d is 1 modulo digit d's primes and 0 modulo
// every other prime of Q, and P g_d vanishes modulo P, so [P]_{q_i} on the digit's limbs and 0 elsewhere. Digit d
// of a switching key adds these times s' (every maker of the keys uses it, so their words agree).
std::vector<std::uint32_t> gadget_factors(const Context& context, std::size_t digit);

}  // namespace cerium::rlwe
