#include "cerium/ckks/context.hpp"

#include <bit>

#include "cerium/core/check.hpp"

namespace cerium::ckks {

ContextPtr Context::create(Parameters parameters) { return std::make_shared<const Context>(std::move(parameters)); }

Context::Context(Parameters parameters) : params_(std::move(parameters)) {
  const std::size_t n = params_.ring_degree();
  const auto q_primes = params_.q_primes();
  p_ = ring::make_basis(n, params_.p_primes());
  const auto full_q = ring::make_basis(n, q_primes);

  levels_.resize(static_cast<std::size_t>(params_.max_level()) + 1);
  for (int level = 0; level <= params_.max_level(); ++level) {
    auto& tables = levels_[static_cast<std::size_t>(level)];
    const std::size_t limbs = params_.limbs_at(level);
    tables.q = ring::make_basis(full_q->sub_basis(0, limbs));
    tables.qp = ring::make_basis(tables.q->concat(*p_));
    if (level > 0) {
      const auto dropped = static_cast<std::size_t>(params_.level_width());
      tables.rescaler = std::make_unique<ring::Rescaler>(tables.q, dropped, ring::Rounding::nearest);
    }
    const std::size_t alpha = params_.alpha();
    for (std::size_t first = 0; first < limbs; first += alpha) {
      const std::size_t count = std::min(alpha, limbs - first);
      auto digit = ring::make_basis(tables.q->sub_basis(first, count));
      tables.mod_up.push_back(std::make_unique<ring::ModUp>(std::move(digit), tables.qp));
    }
    tables.mod_down = std::make_unique<ring::ModDown>(tables.qp, tables.q, ring::Rounding::nearest);
  }
  for (std::size_t slots = 1; slots <= n / 2; slots *= 2) fft_.push_back(std::make_unique<math::SpecialFftTables>(n, slots));
}

std::size_t Context::checked(int level) const {
  require<LevelError>(level >= 0 && level <= params_.max_level(), "level {} does not exist: levels run from 0 to {}",
                      level, params_.max_level());
  return static_cast<std::size_t>(level);
}

const ring::Rescaler& Context::rescaler(int level) const {
  require<LevelError>(level >= 1 && level <= params_.max_level(),
                      "cannot rescale at level {}: rescaling needs a level between 1 and {}", level,
                      params_.max_level());
  return *levels_[static_cast<std::size_t>(level)].rescaler;
}

const ring::ModUp& Context::mod_up(int level, std::size_t digit) const {
  const auto& tables = levels_.at(checked(level));
  require(digit < tables.mod_up.size(), "digit {} does not exist at level {} ({} digits)", digit, level,
          tables.mod_up.size());
  return *tables.mod_up[digit];
}

const ring::ModDown& Context::mod_down(int level) const { return *levels_.at(checked(level)).mod_down; }

const math::SpecialFftTables& Context::fft(std::size_t slots) const {
  require(slots >= 1 && slots <= ring_degree() / 2 && std::has_single_bit(slots),
          "slot count {} must be a power of two between 1 and N/2 = {}", slots, ring_degree() / 2);
  return *fft_[static_cast<std::size_t>(std::countr_zero(slots))];
}

const ring::Automorphism& Context::automorphism(std::uint32_t galois_element) const {
  std::lock_guard lock(automorphism_mutex_);
  auto& entry = automorphisms_[galois_element];
  if (!entry) entry = std::make_unique<ring::Automorphism>(ring_degree(), galois_element);
  return *entry;
}

void require_same_context(const ContextPtr& a, const ContextPtr& b, const char* what) {
  require<MismatchError>(a != nullptr && b != nullptr, "{}: an operand has no context (moved-from or empty)", what);
  require<MismatchError>(a == b || a->parameters() == b->parameters(),
                         "{}: operands belong to different CKKS contexts ({} vs {})", what,
                         a->parameters().describe(), b->parameters().describe());
}

}  // namespace cerium::ckks
