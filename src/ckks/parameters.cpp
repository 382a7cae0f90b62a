#include "cerium/ckks/parameters.hpp"

#include <algorithm>
#include <cmath>
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
  require<ParameterError>(c.base_primes >= 1, "base_primes = {} must be at least 1", c.base_primes);
  require<ParameterError>(c.base_prime_bits >= 20 && c.base_prime_bits <= 31,
                          "base_prime_bits = {} must be within 20..31", c.base_prime_bits);
  require<ParameterError>(c.special_prime_bits >= 20 && c.special_prime_bits <= 31,
                          "special_prime_bits = {} must be within 20..31", c.special_prime_bits);
  const int top_limbs = c.base_primes + c.level_width * c.levels;
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
  for (auto x : q) mix(x);
  mix(0xffffffffffffffffull);
  for (auto x : p) mix(x);
  return h;
}

}  // namespace

Parameters::Parameters(const CkksConfig& config) : config_(config) {
  validate(config_);
  const std::size_t n = ring_degree();
  const auto top_limbs = static_cast<std::size_t>(config_.base_primes + config_.level_width * config_.levels);

  q_primes_ = math::generate_ntt_primes(
      {.bits = config_.base_prime_bits, .count = static_cast<std::size_t>(config_.base_primes), .ring_degree = n});
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
  return static_cast<std::size_t>(config_.base_primes + config_.level_width * level);
}

int Parameters::level_of(std::size_t limbs) const {
  const auto above_base = static_cast<long>(limbs) - config_.base_primes;
  const bool valid = above_base >= 0 && above_base % config_.level_width == 0 &&
                     above_base / config_.level_width <= config_.levels;
  require<LevelError>(valid, "{} limbs is no level of these parameters ({} base primes + {} per level, up to level {})",
                      limbs, config_.base_primes, config_.level_width, config_.levels);
  return static_cast<int>(above_base / config_.level_width);
}

double Parameters::default_scale() const {
  return std::ldexp(1.0, config_.level_prime_bits * config_.level_width);
}

std::string Parameters::describe() const {
  return fmt::format("N = 2^{}, {} levels x {} primes of ~{} bits, {} base primes, dnum {}, alpha {}, log2(QP) = {:.1f}",
                     config_.log_n, config_.levels, config_.level_width, config_.level_prime_bits, config_.base_primes,
                     config_.dnum, alpha(), log_modulus());
}

namespace presets {
CkksConfig leveled_n14() { return {.log_n = 14, .levels = 4, .dnum = 3}; }
CkksConfig leveled_n15() { return {.log_n = 15, .levels = 11, .dnum = 4}; }
CkksConfig leveled_n16() { return {.log_n = 16, .levels = 24, .dnum = 5}; }
CkksConfig bootstrappable_n16() { return {.log_n = 16, .levels = 25, .dnum = 6}; }
CkksConfig bootstrappable_toy(int log_n, int levels) {
  return {.log_n = log_n, .levels = levels, .dnum = 4, .insecure_opt_out = true};
}
}  // namespace presets

}  // namespace cerium::ckks
