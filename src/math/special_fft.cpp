#include "cerium/math/special_fft.hpp"

#include <bit>
#include <cmath>
#include <numbers>
#include <utility>

#include "cerium/core/check.hpp"

namespace cerium::math {

namespace {

// Reorders values by bit-reversed index (size a power of two).
void bit_reverse_permute(std::span<std::complex<double>> values) {
  const std::size_t n = values.size();
  for (std::size_t i = 1, j = 0; i < n; ++i) {
    std::size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j |= bit;
    if (i < j) std::swap(values[i], values[j]);
  }
}

// exp(2 pi i numerator / denominator), the angle taken in long double so the result is correctly rounded or
// nearly so.
std::complex<double> root_of_unity(std::uint64_t numerator, std::uint64_t denominator) {
  const long double angle = 2 * std::numbers::pi_v<long double> * static_cast<long double>(numerator) /
                            static_cast<long double>(denominator);
  return {static_cast<double>(std::cos(angle)), static_cast<double>(std::sin(angle))};
}

// a b without the NaN/infinity recovery of std::complex's operator* (a library call per product in GCC).
std::complex<double> multiply(std::complex<double> a, std::complex<double> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

}  // namespace

SpecialFftTables::SpecialFftTables(std::size_t ring_degree, std::size_t slots)
    : ring_degree_(ring_degree), slots_(slots) {
  require(ring_degree >= 2 && std::has_single_bit(ring_degree), "ring degree {} must be a power of two >= 2",
          ring_degree);
  require(slots >= 1 && std::has_single_bit(slots) && slots <= ring_degree / 2,
          "slot count {} must be a power of two between 1 and N/2 = {}", slots, ring_degree / 2);
  const std::uint64_t two_n = 2 * ring_degree;
  rotation_group_.resize(slots);
  std::uint64_t power = 1;
  for (auto& exponent : rotation_group_) {
    exponent = power;
    power = power * 5 % two_n;
  }
  // Stage h merges pairs of size-h transforms: twiddle j is xi_(2h)^(5^j) with xi_(2h) a primitive 8h-th root.
  // 8h divides 2N (8h <= 4 slots <= 2N, powers of two), so 5^j mod 8h comes from the rotation group mod 2N.
  twiddles_.resize(slots);
  for (std::size_t h = 1; h < slots; h <<= 1)
    for (std::size_t j = 0; j < h; ++j) twiddles_[h + j] = root_of_unity(rotation_group_[j] % (8 * h), 8 * h);
}

void special_fft(std::span<std::complex<double>> values, const SpecialFftTables& tables) {
  const std::size_t n = tables.slots();
  require(values.size() == n, "special FFT input has {} values, the tables are for {} slots", values.size(), n);
  const auto twiddles = tables.twiddles();
  // Decimation in time: z_j = E_j + w_j O_j and z_(j + h) = E_j - w_j O_j, where E and O are the transforms of
  // the even and odd coefficients, because 5^h = 1 + 4h mod 8h makes w_(j + h) = -w_j.
  bit_reverse_permute(values);
  for (std::size_t h = 1; h < n; h <<= 1) {
    for (std::size_t start = 0; start < n; start += 2 * h) {
      for (std::size_t j = 0; j < h; ++j) {
        const std::complex<double> even = values[start + j];
        const std::complex<double> odd = multiply(values[start + j + h], twiddles[h + j]);
        values[start + j] = even + odd;
        values[start + j + h] = even - odd;
      }
    }
  }
}

void special_ifft(std::span<std::complex<double>> values, const SpecialFftTables& tables) {
  const std::size_t n = tables.slots();
  require(values.size() == n, "special inverse FFT input has {} values, the tables are for {} slots", values.size(),
          n);
  const auto twiddles = tables.twiddles();
  // The forward stages undone in reverse order; each leaves a factor 2, removed once at the end.
  for (std::size_t h = n >> 1; h >= 1; h >>= 1) {
    for (std::size_t start = 0; start < n; start += 2 * h) {
      for (std::size_t j = 0; j < h; ++j) {
        const std::complex<double> a = values[start + j];
        const std::complex<double> b = values[start + j + h];
        values[start + j] = a + b;
        values[start + j + h] = multiply(a - b, std::conj(twiddles[h + j]));
      }
    }
  }
  bit_reverse_permute(values);
  const double inverse_n = 1.0 / static_cast<double>(n);
  for (auto& v : values) v *= inverse_n;
}

}  // namespace cerium::math
