#include "cerium/ckks/context.hpp"

#include <bit>

#include "cerium/core/check.hpp"

namespace cerium::ckks {

ContextPtr Context::create(Parameters parameters) { return std::make_shared<const Context>(std::move(parameters)); }

rlwe::ModulusLadder modulus_ladder(const Parameters& parameters) {
  rlwe::ModulusLadder ladder{.ring_degree = parameters.ring_degree(),
                             .q_primes = {parameters.q_primes().begin(), parameters.q_primes().end()},
                             .p_primes = {parameters.p_primes().begin(), parameters.p_primes().end()},
                             .level_limbs = {}};
  for (int level = 0; level <= parameters.max_level(); ++level) ladder.level_limbs.push_back(parameters.limbs_at(level));
  return ladder;
}

Context::Context(Parameters parameters) : rlwe::Context(modulus_ladder(parameters)), params_(std::move(parameters)) {
  for (std::size_t slots = 1; slots <= ring_degree() / 2; slots *= 2) {
    fft_.push_back(std::make_unique<math::SpecialFftTables>(ring_degree(), slots));
  }
}

const math::SpecialFftTables& Context::fft(std::size_t slots) const {
  require(slots >= 1 && slots <= ring_degree() / 2 && std::has_single_bit(slots),
          "slot count {} must be a power of two between 1 and N/2 = {}", slots, ring_degree() / 2);
  return *fft_[static_cast<std::size_t>(std::countr_zero(slots))];
}

void require_same_context(const ContextPtr& a, const ContextPtr& b, const char* what) {
  require<MismatchError>(a != nullptr && b != nullptr, "{}: an operand has no context (moved-from or empty)", what);
  require<MismatchError>(a == b || a->parameters() == b->parameters(),
                         "{}: operands belong to different CKKS contexts ({} vs {})", what,
                         a->parameters().describe(), b->parameters().describe());
}

}  // namespace cerium::ckks
