#pragma once
// The RLWE context: a ring degree, the ladder of moduli Q_0 < Q_1 < ... < Q_L (each level a prefix of Q's primes)
// and the special primes P, with every table built from them: the bases of each level, the rescalers between
// levels, the digits of hybrid key switching (alpha = |P| primes each) with their ModUp and ModDown, and the
// automorphism maps. Nothing here knows about encoding: a scheme's context (ckks::Context) extends this one with
// its parameters and encoding tables, so the backends and key switching speak only this type.
//
// Immutable after creation and safe to share between threads; keys hold a ContextPtr, and two contexts are
// interchangeable when their ladders are equal (the same ring, primes and levels).

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cerium/ring/automorphism.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "cerium/ring/rns_basis.hpp"

namespace cerium::rlwe {

// What defines the moduli: Q's primes in limb order, P's primes, and how many of Q's primes each level keeps.
struct ModulusLadder {
  std::size_t ring_degree = 0;           // N
  std::vector<std::uint32_t> q_primes;   // all of Q, level 0's primes first
  std::vector<std::uint32_t> p_primes;   // the special primes; also the primes per key-switching digit (alpha)
  std::vector<std::size_t> level_limbs;  // limbs of Q_l for l = 0..L: increasing, the last one |Q|
  // The same N, primes and levels.
  friend bool operator==(const ModulusLadder&, const ModulusLadder&) = default;
};

class Context;
// How keys, ciphertexts and backends hold a context: shared and immutable.
using ContextPtr = std::shared_ptr<const Context>;

// The tables of one ModulusLadder (see the file comment); made by create().
class Context {
 public:
  // Throws InvalidArgument for an inconsistent ladder (no primes, levels not increasing, a level past |Q|).
  static ContextPtr create(ModulusLadder ladder);
  explicit Context(ModulusLadder ladder);  // use create(); public for std::make_shared and derived contexts
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const ModulusLadder& ladder() const { return ladder_; }                             // what it was built from
  std::size_t ring_degree() const { return ladder_.ring_degree; }                     // N
  int max_level() const { return static_cast<int>(ladder_.level_limbs.size()) - 1; }  // L: levels run 0 .. L
  // Limbs of Q_level (LevelError for a level that does not exist).
  std::size_t limbs_at(int level) const { return ladder_.level_limbs[checked(level)]; }
  // Primes per key-switching digit (= |P|).
  std::size_t alpha() const { return ladder_.p_primes.size(); }
  // "N = 2^16, 50 + 6 primes, 25 levels": for error messages.
  std::string describe() const;

  // Q_l: the first limbs_at(level) primes of Q.
  const ring::RnsBasisPtr& q_basis(int level) const { return levels_[checked(level)].q; }
  // P: the special primes.
  const ring::RnsBasisPtr& p_basis() const { return p_; }
  // Q_l followed by P: the basis of key-switching intermediates at a level.
  const ring::RnsBasisPtr& qp_basis(int level) const { return levels_[checked(level)].qp; }
  // Q_top followed by P: the basis keys are generated over.
  const ring::RnsBasisPtr& key_basis() const { return qp_basis(max_level()); }

  // Division by the primes of `level` (level >= 1), from Q_level to Q_{level-1}, rounding to nearest.
  const ring::Rescaler& rescaler(int level) const;

  // Key-switching digits at a level: digit d holds Q primes [d alpha, min((d + 1) alpha, limbs_at(level))).
  std::size_t digit_count(int level) const { return levels_[checked(level)].mod_up.size(); }
  std::size_t digit_first_prime(std::size_t digit) const { return digit * alpha(); }
  const ring::ModUp& mod_up(int level, std::size_t digit) const;  // digit basis -> qp_basis(level)
  const ring::ModDown& mod_down(int level) const;                 // qp_basis(level) -> q_basis(level)

  // The permutation tables of X -> X^galois_element; built on first use, then shared.
  const ring::Automorphism& automorphism(std::uint32_t galois_element) const;

 private:
  struct LevelTables {
    ring::RnsBasisPtr q, qp;
    std::unique_ptr<ring::Rescaler> rescaler;          // null at level 0
    std::vector<std::unique_ptr<ring::ModUp>> mod_up;  // one per digit
    std::unique_ptr<ring::ModDown> mod_down;
  };
  std::size_t checked(int level) const;

  ModulusLadder ladder_;
  ring::RnsBasisPtr p_;
  std::vector<LevelTables> levels_;
  mutable std::mutex automorphism_mutex_;
  mutable std::map<std::uint32_t, std::unique_ptr<ring::Automorphism>> automorphisms_;
};

// Throws MismatchError naming `what` unless a and b are the same context or have equal ladders.
void require_same_ladder(const Context* a, const Context* b, const char* what);

}  // namespace cerium::rlwe
