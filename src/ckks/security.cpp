#include "cerium/ckks/security.hpp"

#include <fmt/format.h>

#include <array>

namespace cerium::ckks {
namespace {

constexpr int first_log_n = 10;
constexpr int last_log_n = 17;
// Rows indexed by log2(N) - 10; see the header for where each number comes from.
constexpr std::array<int, 8> bound128 = {26, 52, 106, 214, 430, 868, 1747, 3523};
constexpr std::array<int, 8> bound192 = {18, 35, 72, 149, 299, 601, 1210, 2420};
constexpr std::array<int, 8> bound256 = {13, 28, 56, 115, 232, 468, 942, 1884};

}  // namespace

std::optional<int> max_log_modulus(int log_n, SecurityLevel level) {
  if (log_n < first_log_n || log_n > last_log_n) return std::nullopt;
  const auto i = static_cast<std::size_t>(log_n - first_log_n);
  switch (level) {
    case SecurityLevel::classical128: return bound128[i];
    case SecurityLevel::classical192: return bound192[i];
    case SecurityLevel::classical256: return bound256[i];
  }
  return std::nullopt;
}

SecurityVerdict check_security(int log_n, double log_modulus, SecretDistribution secret, SecurityLevel level) {
  const int bits = static_cast<int>(level);
  if (secret == SecretDistribution::hamming_weight) {
    return {false, fmt::format("sparse (fixed Hamming weight) secrets are not covered by the standard's tables, so "
                               "no {}-bit claim is made for them; use a uniform ternary secret for the "
                               "application key",
                               bits)};
  }
  const auto bound = max_log_modulus(log_n, level);
  if (!bound) {
    return {false, fmt::format("no security bound is tabulated for N = 2^{}; use N between 2^{} and 2^{}", log_n,
                               first_log_n, last_log_n)};
  }
  if (log_modulus > *bound) {
    return {false, fmt::format("log2(QP) = {:.1f} exceeds the {}-bit bound of {} for N = 2^{}: use fewer or smaller "
                               "primes (levels, special primes) or a larger ring degree",
                               log_modulus, bits, *bound, log_n)};
  }
  return {true, fmt::format("log2(QP) = {:.1f} is within the {}-bit bound of {} for N = 2^{}", log_modulus, bits,
                            *bound, log_n)};
}

}  // namespace cerium::ckks
