#include "cerium/rlwe/context.hpp"

#include <algorithm>
#include <bit>

#include "cerium/core/check.hpp"

namespace cerium::rlwe {
namespace {

void require_valid(const ModulusLadder& ladder) {
  require(ladder.ring_degree >= 2 && std::has_single_bit(ladder.ring_degree),
          "the ring degree {} must be a power of two of at least 2", ladder.ring_degree);
  require(!ladder.q_primes.empty() && !ladder.p_primes.empty(), "a modulus ladder needs Q and P primes; got {} and {}",
          ladder.q_primes.size(), ladder.p_primes.size());
  require(!ladder.level_limbs.empty() && ladder.level_limbs.front() >= 1 &&
              ladder.level_limbs.back() == ladder.q_primes.size(),
          "the levels' limb counts must start at 1 or more and end at |Q| = {}", ladder.q_primes.size());
  // A rescale divides by one or two primes (ring::Rescaler), so each level adds one or two limbs.
  const auto bad_step = std::adjacent_find(ladder.level_limbs.begin(), ladder.level_limbs.end(),
                                           [](std::size_t a, std::size_t b) { return b <= a || b > a + 2; });
  require(bad_step == ladder.level_limbs.end(),
          "each level must add one or two limbs to the one below it; level {} has {} limbs over level {}'s {}",
          bad_step - ladder.level_limbs.begin() + 1, bad_step == ladder.level_limbs.end() ? 0 : *(bad_step + 1),
          bad_step - ladder.level_limbs.begin(), bad_step == ladder.level_limbs.end() ? 0 : *bad_step);
}

}  // namespace

ContextPtr Context::create(ModulusLadder ladder) { return std::make_shared<const Context>(std::move(ladder)); }

Context::Context(ModulusLadder ladder) : ladder_(std::move(ladder)) {
  require_valid(ladder_);
  const std::size_t n = ladder_.ring_degree;
  p_ = ring::make_basis(n, ladder_.p_primes);
  const auto full_q = ring::make_basis(n, ladder_.q_primes);
  const std::size_t alpha = this->alpha();

  levels_.resize(ladder_.level_limbs.size());
  for (std::size_t level = 0; level < levels_.size(); ++level) {
    auto& tables = levels_[level];
    const std::size_t limbs = ladder_.level_limbs[level];
    tables.q = ring::make_basis(full_q->sub_basis(0, limbs));
    tables.qp = ring::make_basis(tables.q->concat(*p_));
    if (level > 0) {
      const std::size_t dropped = limbs - ladder_.level_limbs[level - 1];
      tables.rescaler = std::make_unique<ring::Rescaler>(tables.q, dropped, ring::Rounding::nearest);
    }
    for (std::size_t first = 0; first < limbs; first += alpha) {
      const std::size_t count = std::min(alpha, limbs - first);
      auto digit = ring::make_basis(tables.q->sub_basis(first, count));
      tables.mod_up.push_back(std::make_unique<ring::ModUp>(std::move(digit), tables.qp));
    }
    tables.mod_down = std::make_unique<ring::ModDown>(tables.qp, tables.q, ring::Rounding::nearest);
  }
}

std::string Context::describe() const {
  return fmt::format("N = 2^{}, {} + {} primes, {} levels", std::countr_zero(ring_degree()), ladder_.q_primes.size(),
                     ladder_.p_primes.size(), max_level());
}

std::size_t Context::checked(int level) const {
  require<LevelError>(level >= 0 && level <= max_level(), "level {} does not exist: levels run from 0 to {}", level,
                      max_level());
  return static_cast<std::size_t>(level);
}

const ring::Rescaler& Context::rescaler(int level) const {
  require<LevelError>(level >= 1 && level <= max_level(),
                      "cannot rescale at level {}: rescaling needs a level between 1 and {}", level, max_level());
  return *levels_[static_cast<std::size_t>(level)].rescaler;
}

const ring::ModUp& Context::mod_up(int level, std::size_t digit) const {
  const auto& tables = levels_[checked(level)];
  require(digit < tables.mod_up.size(), "digit {} does not exist at level {} ({} digits)", digit, level,
          tables.mod_up.size());
  return *tables.mod_up[digit];
}

const ring::ModDown& Context::mod_down(int level) const { return *levels_[checked(level)].mod_down; }

const ring::Automorphism& Context::automorphism(std::uint32_t galois_element) const {
  std::lock_guard lock(automorphism_mutex_);
  auto& entry = automorphisms_[galois_element];
  if (!entry) entry = std::make_unique<ring::Automorphism>(ring_degree(), galois_element);
  return *entry;
}

void require_same_ladder(const Context* a, const Context* b, const char* what) {
  require<MismatchError>(a != nullptr && b != nullptr, "{}: an operand has no context (moved-from or empty)", what);
  require<MismatchError>(a == b || a->ladder() == b->ladder(),
                         "{}: operands belong to different moduli ({} vs {})", what, a->describe(), b->describe());
}

}  // namespace cerium::rlwe
