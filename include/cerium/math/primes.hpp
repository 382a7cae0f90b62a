#pragma once
// NTT-friendly primes: q = 1 mod 2N, q < 2^31, found deterministically (the same primes on every machine).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace cerium::math {

// Deterministic Miller-Rabin for any 64-bit n (bases 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37).
bool is_prime(std::uint64_t n);

// Distinct prime factors of n (trial division; fine for n < 2^40).
std::vector<std::uint64_t> prime_factors(std::uint64_t n);

// What generate_ntt_primes looks for.
struct PrimeRequest {
  int bits = 30;                // each prime lies in [2^(bits-1), 2^bits); 20 <= bits <= 31
  std::size_t count = 1;        // how many
  std::size_t ring_degree = 0;  // N: primes satisfy q = 1 mod 2N
  std::span<const std::uint32_t> exclude = {};  // primes already taken (e.g. by another basis)
};

// The largest primes below 2^bits with q = 1 mod 2N that are not excluded, in descending order.
// Throws ParameterError when the range holds too few.
std::vector<std::uint32_t> generate_ntt_primes(const PrimeRequest& request);

// A generator of the multiplicative group mod the prime q (the smallest one).
std::uint32_t primitive_root(std::uint32_t q);

// The smallest primitive `order`-th root of unity mod q, where order divides q - 1 and is a power of two
// (smallest, so that tables are the same everywhere). Throws InvalidArgument when order does not divide q - 1.
std::uint32_t minimal_primitive_root_of_unity(std::uint32_t q, std::uint64_t order);

}  // namespace cerium::math
