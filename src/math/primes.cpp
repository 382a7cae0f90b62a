#include "cerium/math/primes.hpp"

#include <algorithm>

#include "cerium/core/check.hpp"
#include "cerium/math/modarith.hpp"

namespace cerium::math {
namespace {

std::uint64_t mul_mod64(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
  return static_cast<std::uint64_t>(static_cast<u128>(a) * b % m);
}

std::uint64_t pow_mod64(std::uint64_t base, std::uint64_t exponent, std::uint64_t m) {
  std::uint64_t result = 1 % m;
  base %= m;
  while (exponent != 0) {
    if (exponent & 1) result = mul_mod64(result, base, m);
    base = mul_mod64(base, base, m);
    exponent >>= 1;
  }
  return result;
}

}  // namespace

bool is_prime(std::uint64_t n) {
  if (n < 2) return false;
  constexpr std::uint64_t small[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  for (auto p : small) {
    if (n % p == 0) return n == p;
  }
  std::uint64_t d = n - 1;
  int s = 0;
  while ((d & 1) == 0) {
    d >>= 1;
    ++s;
  }
  for (auto a : small) {
    std::uint64_t x = pow_mod64(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int r = 1; r < s; ++r) {
      x = mul_mod64(x, x, n);
      if (x == n - 1) {
        composite = false;
        break;
      }
    }
    if (composite) return false;
  }
  return true;
}

std::vector<std::uint64_t> prime_factors(std::uint64_t n) {
  std::vector<std::uint64_t> factors;
  for (std::uint64_t p = 2; p * p <= n; ++p) {
    if (n % p != 0) continue;
    factors.push_back(p);
    while (n % p == 0) n /= p;
  }
  if (n > 1) factors.push_back(n);
  return factors;
}

std::vector<std::uint32_t> generate_ntt_primes(const PrimeRequest& request) {
  require<ParameterError>(request.bits >= 20 && request.bits <= 31,
                          "prime size of {} bits is out of range: Cerium's primes have 20 to 31 bits", request.bits);
  const std::uint64_t n = request.ring_degree;
  require<ParameterError>(n >= 2 && (n & (n - 1)) == 0, "ring degree {} is not a power of two >= 2", n);
  const std::uint64_t step = 2 * n;
  const std::uint64_t upper = std::uint64_t{1} << request.bits;
  const std::uint64_t lower = upper >> 1;

  std::vector<std::uint32_t> primes;
  // Largest candidate below 2^bits with candidate = 1 mod 2N.
  std::uint64_t candidate = ((upper - 1) / step) * step + 1;
  if (candidate >= upper) candidate -= step;
  for (; candidate > lower && primes.size() < request.count; candidate -= step) {
    if (!is_prime(candidate)) continue;
    const auto q = static_cast<std::uint32_t>(candidate);
    if (std::find(request.exclude.begin(), request.exclude.end(), q) != request.exclude.end()) continue;
    primes.push_back(q);
  }
  require<ParameterError>(primes.size() == request.count,
                          "only {} primes of {} bits with q = 1 mod {} exist (besides {} excluded), {} were asked for; "
                          "use larger primes or a smaller ring degree",
                          primes.size(), request.bits, step, request.exclude.size(), request.count);
  return primes;
}

std::uint32_t primitive_root(std::uint32_t q) {
  require(is_prime(q), "{} is not prime, so it has no primitive root", q);
  if (q == 2) return 1;
  const auto factors = prime_factors(q - 1);
  for (std::uint32_t g = 2; g < q; ++g) {
    bool generator = std::all_of(factors.begin(), factors.end(),
                                 [&](std::uint64_t f) { return pow_mod(g, (q - 1) / f, q) != 1; });
    if (generator) return g;
  }
  throw InvalidArgument(fmt::format("no primitive root found for {}", q));
}

std::uint32_t minimal_primitive_root_of_unity(std::uint32_t q, std::uint64_t order) {
  require(order >= 2 && (order & (order - 1)) == 0, "root order {} must be a power of two >= 2", order);
  require((q - 1) % order == 0, "order {} does not divide q - 1 = {}: q is not NTT-friendly for it", order, q - 1);
  const std::uint32_t root = pow_mod(primitive_root(q), (q - 1) / order, q);
  // All primitive order-th roots are root^k for odd k; take the smallest so tables are canonical.
  std::uint32_t best = root;
  const std::uint32_t square = static_cast<std::uint32_t>(static_cast<std::uint64_t>(root) * root % q);
  std::uint64_t current = root;
  for (std::uint64_t k = 1; k < order; k += 2) {
    best = std::min(best, static_cast<std::uint32_t>(current));
    current = current * square % q;
  }
  return best;
}

}  // namespace cerium::math
