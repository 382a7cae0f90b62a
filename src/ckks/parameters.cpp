#include "cerium/ckks/parameters.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "cerium/core/check.hpp"
#include "cerium/core/log.hpp"
#include "cerium/math/ntt.hpp"
#include "cerium/math/primes.hpp"

namespace cerium::ckks {
namespace {

using PrimeList = std::vector<std::uint32_t>;

bool taken(const PrimeList& primes, std::uint64_t q) { return std::find(primes.begin(), primes.end(), q) != primes.end(); }

// `count` NTT-friendly primes closest to 2^bits, alternately above and below it, so that the product of a level's
// primes (and the scale after rescaling) stays near 2^(bits * width). Never at or above 2^31.
PrimeList primes_near_power_of_two(int bits, std::size_t count, std::size_t n, const PrimeList& exclude) {
  const std::uint64_t step = 2 * n;
  const std::uint64_t target = std::uint64_t{1} << bits;
  const std::uint64_t limit = std::uint64_t{1} << 31;
  std::uint64_t up = target + 1;             // candidates = 1 mod 2N above the target
  std::uint64_t down = target - step + 1;    // and below it
  PrimeList primes;
  bool take_up = true;
  auto next_up = [&]() -> std::uint64_t {
    for (; up < limit; up += step) {
      if (math::is_prime(up) && !taken(exclude, up)) return std::exchange(up, up + step);
    }
    return 0;
  };
  auto next_down = [&]() -> std::uint64_t {
    for (; down > target / 2; down -= step) {
      if (math::is_prime(down) && !taken(exclude, down)) return std::exchange(down, down - step);
    }
    return 0;
  };
  while (primes.size() < count) {
    std::uint64_t q = take_up ? next_up() : next_down();
    if (q == 0) q = take_up ? next_down() : next_up();
    require<ParameterError>(q != 0, "not enough NTT-friendly primes near 2^{} for N = {} ({} found, {} needed); use "
                            "another prime size", bits, n, primes.size(), count);
    primes.push_back(static_cast<std::uint32_t>(q));
    take_up = !take_up;
  }
  return primes;
}

// The narrow levels' primes (see parameters.hpp): chosen from the top narrow level down, each the unused NTT prime
// (1 mod 2N, below 2^31) nearest the chain's scale there, Delta_top = 2^bits and Delta_(l-1) = Delta_l^2 / q_l.
// Returns them in limb order (level 1 first); scales gets Delta_0 .. Delta_top.
PrimeList narrow_primes(int bits, int count, std::size_t n, const PrimeList& exclude, std::vector<double>& scales) {
  const std::uint64_t step = 2 * n;
  const std::uint64_t limit = std::uint64_t{1} << 31;
  scales.assign(static_cast<std::size_t>(count) + 1, 0.0);
  scales[static_cast<std::size_t>(count)] = std::ldexp(1.0, bits);
  PrimeList primes(static_cast<std::size_t>(count));
  PrimeList used = exclude;
  for (int level = count; level >= 1; --level) {
    const double target = scales[static_cast<std::size_t>(level)];
    // Candidates k 2N + 1 outward from the target, the nearer of each pair first.
    const auto middle = static_cast<std::int64_t>(std::llround((target - 1) / static_cast<double>(step)));
    std::uint64_t found = 0;
    for (std::int64_t d = 0; found == 0 && d < (std::int64_t{1} << 20); ++d) {
      for (const std::int64_t k : {middle + d, middle - d - 1}) {
        if (k <= 0) continue;
        const std::uint64_t q = static_cast<std::uint64_t>(k) * step + 1;
        if (q >= limit || !math::is_prime(q) || taken(used, q)) continue;
        if (found == 0 || std::fabs(static_cast<double>(q) - target) < std::fabs(static_cast<double>(found) - target))
          found = q;
      }
    }
    require<ParameterError>(found != 0, "no NTT-friendly prime below 2^31 near 2^{:.2f} for N = {} (narrow level {})",
                            std::log2(target), n, level);
    primes[static_cast<std::size_t>(level) - 1] = static_cast<std::uint32_t>(found);
    used.push_back(static_cast<std::uint32_t>(found));
    scales[static_cast<std::size_t>(level) - 1] = target * (target / static_cast<double>(found));
  }
  return primes;
}

void validate(const CkksConfig& c) {
  require<ParameterError>(c.log_n >= 1 && c.log_n <= math::max_log_ring_degree,
                          "log_n = {} is out of range: N = 2^log_n needs 1 <= log_n <= {}", c.log_n,
                          math::max_log_ring_degree);
  require<ParameterError>(c.insecure_opt_out || c.log_n >= 10,
                          "N = 2^{} is too small to be secure; use log_n >= 10 (or set insecure_opt_out for tests)",
                          c.log_n);
  require<ParameterError>(c.levels >= 0, "levels = {} must not be negative", c.levels);
  require<ParameterError>(c.level_width == 1 || c.level_width == 2,
                          "level_width = {} must be 1 or 2 (primes per level)", c.level_width);
  require<ParameterError>(c.level_prime_bits >= 20 && c.level_prime_bits <= 31,
                          "level_prime_bits = {} must be within 20..31 (32-bit words, primes below 2^31)",
                          c.level_prime_bits);
  require<ParameterError>(c.narrow_levels >= 0 && c.narrow_levels <= c.levels,
                          "narrow_levels = {} must be between 0 and levels = {}", c.narrow_levels, c.levels);
  require<ParameterError>(c.narrow_prime_bits >= 20 && c.narrow_prime_bits <= 30,
                          "narrow_prime_bits = {} must be within 20..30 (one prime below 2^31 per narrow level)",
                          c.narrow_prime_bits);
  require<ParameterError>(c.base_primes >= 1, "base_primes = {} must be at least 1", c.base_primes);
  require<ParameterError>(c.base_prime_bits >= 20 && c.base_prime_bits <= 31,
                          "base_prime_bits = {} must be within 20..31", c.base_prime_bits);
  require<ParameterError>(c.special_prime_bits >= 20 && c.special_prime_bits <= 31,
                          "special_prime_bits = {} must be within 20..31", c.special_prime_bits);
  const int top_limbs = c.base_primes + c.narrow_levels + c.level_width * (c.levels - c.narrow_levels);
  require<ParameterError>(c.dnum >= 1 && c.dnum <= top_limbs,
                          "dnum = {} must be between 1 and the number of ciphertext primes ({})", c.dnum, top_limbs);
  if (c.secret == SecretDistribution::hamming_weight) {
    require<ParameterError>(c.hamming_weight >= 1 && c.hamming_weight <= (1 << c.log_n),
                            "hamming_weight = {} must be between 1 and N = {}", c.hamming_weight, 1 << c.log_n);
  }
}

double log2_product(const PrimeList& primes) {
  double sum = 0;
  for (auto q : primes) sum += std::log2(static_cast<double>(q));
  return sum;
}

// FNV-1a over the defining numbers: a fingerprint for equality checks and serialized headers.
std::uint64_t fingerprint_of(const CkksConfig& c, const PrimeList& q, const PrimeList& p) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  for (std::uint64_t v : {std::uint64_t(c.log_n), std::uint64_t(c.levels), std::uint64_t(c.level_width),
                          std::uint64_t(c.base_primes), std::uint64_t(c.dnum), std::uint64_t(c.secret),
                          std::uint64_t(c.hamming_weight)}) {
    mix(v);
  }
  if (c.narrow_levels > 0) {  // absent otherwise: parameters without narrow levels keep their fingerprints
    mix(std::uint64_t(c.narrow_levels));
    mix(std::uint64_t(c.narrow_prime_bits));
  }
  for (auto x : q) mix(x);
  mix(0xffffffffffffffffull);
  for (auto x : p) mix(x);
  return h;
}

}  // namespace

Parameters::Parameters(const CkksConfig& config) : config_(config) {
  validate(config_);
  const std::size_t n = ring_degree();
  const std::size_t top_limbs = limbs_at(config_.levels);

  q_primes_ = math::generate_ntt_primes(
      {.bits = config_.base_prime_bits, .count = static_cast<std::size_t>(config_.base_primes), .ring_degree = n});
  if (config_.narrow_levels > 0) {
    const auto narrow = narrow_primes(config_.narrow_prime_bits, config_.narrow_levels, n, q_primes_, narrow_scales_);
    q_primes_.insert(q_primes_.end(), narrow.begin(), narrow.end());
  }
  const auto level_primes =
      primes_near_power_of_two(config_.level_prime_bits, top_limbs - q_primes_.size(), n, q_primes_);
  q_primes_.insert(q_primes_.end(), level_primes.begin(), level_primes.end());

  const std::size_t alpha = (top_limbs + config_.dnum - 1) / config_.dnum;
  p_primes_ = math::generate_ntt_primes(
      {.bits = config_.special_prime_bits, .count = alpha, .ring_degree = n, .exclude = q_primes_});
  log_q_ = log2_product(q_primes_);
  log_p_ = log2_product(p_primes_);
  fingerprint_ = fingerprint_of(config_, q_primes_, p_primes_);

  verdict_ = check_security(config_.log_n, log_modulus(), config_.secret, config_.security);
  if (!verdict_.compliant) {
    if (!config_.insecure_opt_out) {
      throw SecurityError(fmt::format("insecure CKKS parameters ({}): {}", describe(), verdict_.explanation));
    }
    log(LogLevel::warn, "insecure CKKS parameters accepted by explicit opt-out ({}): {}", describe(),
        verdict_.explanation);
  }
}

std::size_t Parameters::limbs_at(int level) const {
  require<LevelError>(level >= 0 && level <= config_.levels, "level {} does not exist: levels run from 0 to {}", level,
                      config_.levels);
  const int narrow = std::min(level, config_.narrow_levels);
  return static_cast<std::size_t>(config_.base_primes + narrow + config_.level_width * (level - narrow));
}

int Parameters::level_of(std::size_t limbs) const {
  const auto above_base = static_cast<long>(limbs) - config_.base_primes;
  const long narrow = config_.narrow_levels;
  const long above_narrow = above_base - narrow;
  const bool valid = above_base >= 0 && (above_base <= narrow || (above_narrow % config_.level_width == 0 &&
                                                                  narrow + above_narrow / config_.level_width <=
                                                                      config_.levels));
  require<LevelError>(valid,
                      "{} limbs is no level of these parameters ({} base primes, {} narrow levels of one prime, then "
                      "{} per level, up to level {})",
                      limbs, config_.base_primes, config_.narrow_levels, config_.level_width, config_.levels);
  return static_cast<int>(above_base <= narrow ? above_base : narrow + above_narrow / config_.level_width);
}

int Parameters::primes_at(int level) const {
  require<LevelError>(level >= 1 && level <= config_.levels, "level {} has no primes to rescale by: levels 1 to {} do",
                      level, config_.levels);
  return level <= config_.narrow_levels ? 1 : config_.level_width;
}

double Parameters::default_scale() const {
  return std::ldexp(1.0, config_.level_prime_bits * config_.level_width);
}

double Parameters::default_scale_at(int level) const {
  require<LevelError>(level >= 0 && level <= config_.levels, "level {} does not exist: levels run from 0 to {}", level,
                      config_.levels);
  return level <= config_.narrow_levels && config_.narrow_levels > 0 ? narrow_scales_[static_cast<std::size_t>(level)]
                                                                      : default_scale();
}

std::string Parameters::describe() const {
  const std::string narrow =
      config_.narrow_levels == 0
          ? std::string()
          : fmt::format(" (the lowest {} of one prime of ~{} bits)", config_.narrow_levels, config_.narrow_prime_bits);
  return fmt::format(
      "N = 2^{}, {} levels x {} primes of ~{} bits{}, {} base primes, dnum {}, alpha {}, log2(QP) = {:.1f}",
      config_.log_n, config_.levels, config_.level_width, config_.level_prime_bits, narrow, config_.base_primes,
      config_.dnum, alpha(), log_modulus());
}

namespace presets {
CkksConfig leveled_n14() { return {.log_n = 14, .levels = 4, .dnum = 3}; }
CkksConfig leveled_n15() { return {.log_n = 15, .levels = 11, .dnum = 4}; }
CkksConfig leveled_n16() { return {.log_n = 16, .levels = 24, .dnum = 5}; }
CkksConfig bootstrappable_n16() { return {.log_n = 16, .levels = 25, .dnum = 6}; }
CkksConfig bootstrappable_n16_narrow() {
  return {.log_n = 16, .levels = 32, .dnum = 6, .narrow_levels = 16, .narrow_prime_bits = 30};
}
CkksConfig bootstrappable_toy(int log_n, int levels) {
  return {.log_n = log_n, .levels = levels, .dnum = 4, .insecure_opt_out = true};
}
}  // namespace presets

}  // namespace cerium::ckks
