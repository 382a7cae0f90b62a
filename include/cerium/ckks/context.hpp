#pragma once
// The CKKS context: parameters plus every table derived from them (RNS bases per level, rescalers, the ModUp and
// ModDown of hybrid key switching, special-FFT tables, automorphism maps). Immutable after creation and safe to
// share between threads; objects (keys, ciphertexts) hold a ContextPtr, and operations check that their operands
// share one context.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cerium/ckks/parameters.hpp"
#include "cerium/math/special_fft.hpp"
#include "cerium/ring/automorphism.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "cerium/ring/rns_basis.hpp"

namespace cerium::ckks {

class Context;
using ContextPtr = std::shared_ptr<const Context>;

class Context {
 public:
  static ContextPtr create(const CkksConfig& config) { return create(Parameters(config)); }
  static ContextPtr create(Parameters parameters);

  const Parameters& parameters() const { return params_; }
  std::size_t ring_degree() const { return params_.ring_degree(); }
  int max_level() const { return params_.max_level(); }

  // Q_l: the first limbs_at(level) primes of Q.
  const ring::RnsBasisPtr& q_basis(int level) const { return levels_.at(checked(level)).q; }
  // P: the special primes.
  const ring::RnsBasisPtr& p_basis() const { return p_; }
  // Q_l followed by P: the basis of key-switching intermediates at a level.
  const ring::RnsBasisPtr& qp_basis(int level) const { return levels_.at(checked(level)).qp; }
  // Q_top followed by P: the basis keys are generated over.
  const ring::RnsBasisPtr& key_basis() const { return qp_basis(max_level()); }

  // Division by the primes of `level` (level >= 1), from Q_level to Q_{level-1}, rounding to nearest.
  const ring::Rescaler& rescaler(int level) const;

  // Key-switching digits at a level: digit d holds Q primes [d alpha, min((d + 1) alpha, limbs_at(level))).
  std::size_t digit_count(int level) const { return levels_.at(checked(level)).mod_up.size(); }
  std::size_t digit_first_prime(std::size_t digit) const { return digit * params_.alpha(); }
  const ring::ModUp& mod_up(int level, std::size_t digit) const;  // digit basis -> qp_basis(level)
  const ring::ModDown& mod_down(int level) const;                 // qp_basis(level) -> q_basis(level)

  // Special-FFT tables for a power-of-two slot count in [1, N/2].
  const math::SpecialFftTables& fft(std::size_t slots) const;
  // The permutation tables of X -> X^galois_element; built on first use, then shared.
  const ring::Automorphism& automorphism(std::uint32_t galois_element) const;

  explicit Context(Parameters parameters);  // use create(); public for std::make_shared

 private:
  struct LevelTables {
    ring::RnsBasisPtr q, qp;
    std::unique_ptr<ring::Rescaler> rescaler;          // null at level 0
    std::vector<std::unique_ptr<ring::ModUp>> mod_up;  // one per digit
    std::unique_ptr<ring::ModDown> mod_down;
  };
  std::size_t checked(int level) const;

  Parameters params_;
  ring::RnsBasisPtr p_;
  std::vector<LevelTables> levels_;
  std::vector<std::unique_ptr<math::SpecialFftTables>> fft_;  // index log2(slots)
  mutable std::mutex automorphism_mutex_;
  mutable std::map<std::uint32_t, std::unique_ptr<ring::Automorphism>> automorphisms_;
};

// Throws MismatchError naming `what` unless a and b are the same context or have equal parameters.
void require_same_context(const ContextPtr& a, const ContextPtr& b, const char* what);

}  // namespace cerium::ckks
