#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/math/special_fft.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium::math;

namespace {

using Complex = std::complex<double>;
using WideComplex = std::complex<long double>;

struct Shape {
  std::size_t ring_degree, slots;
};

// Full and sparse packings, from the smallest ring up.
constexpr Shape shapes[] = {{2, 1},     {4, 1},    {4, 2},       {16, 1},      {16, 2},     {16, 8},
                            {256, 4},   {256, 64}, {256, 128},   {2048, 8},    {2048, 1024}, {4096, 2048},
                            {1 << 16, 4}, {1 << 16, 256}};

std::vector<Complex> random_complex(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> coordinate(-1.0, 1.0);
  std::vector<Complex> v(n);
  for (auto& x : v) x = {coordinate(rng), coordinate(rng)};
  return v;
}

// zeta^k, zeta = exp(i pi / N), for k < 2N, in long double.
std::vector<WideComplex> powers_of_zeta(std::size_t ring_degree) {
  std::vector<WideComplex> powers(2 * ring_degree);
  for (std::size_t k = 0; k < powers.size(); ++k) {
    const long double angle = std::numbers::pi_v<long double> * static_cast<long double>(k) /
                              static_cast<long double>(ring_degree);
    powers[k] = {std::cos(angle), std::sin(angle)};
  }
  return powers;
}

// 5^j mod 2N, counted up here rather than taken from the tables.
std::vector<std::uint64_t> powers_of_five(std::size_t count, std::size_t ring_degree) {
  std::vector<std::uint64_t> exponents(count);
  std::uint64_t e = 1;
  for (auto& x : exponents) {
    x = e;
    e = e * 5 % (2 * ring_degree);
  }
  return exponents;
}

// max |a - b| / max(1, max |b|).
double relative_error(const std::vector<Complex>& a, const std::vector<Complex>& b) {
  double difference = 0, scale = 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference = std::max(difference, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return difference / scale;
}

// The encoder's placement: m_(k gap) = Re u_k, m_(N/2 + k gap) = Im u_k.
std::vector<double> place_coefficients(const std::vector<Complex>& u, std::size_t ring_degree) {
  const std::size_t gap = ring_degree / (2 * u.size());
  std::vector<double> m(ring_degree, 0.0);
  for (std::size_t k = 0; k < u.size(); ++k) {
    m[k * gap] = u[k].real();
    m[ring_degree / 2 + k * gap] = u[k].imag();
  }
  return m;
}

}  // namespace

TEST_CASE("special FFT tables: gap and slot exponents 5^j mod 2N", "[math][special_fft]") {
  const SpecialFftTables tables(1024, 64);
  CHECK(tables.ring_degree() == 1024);
  CHECK(tables.slots() == 64);
  CHECK(tables.gap() == 8);
  const auto expected = powers_of_five(64, 1024);
  for (std::size_t j = 0; j < 64; ++j) CHECK(tables.slot_exponent(j) == expected[j]);
  CHECK(tables.slot_exponent(1) == 5);
  CHECK(tables.slot_exponent(2) == 25);
}

TEST_CASE("special FFT rejects bad shapes and sizes", "[math][special_fft]") {
  CHECK_THROWS_AS(SpecialFftTables(1024, 0), cerium::InvalidArgument);
  CHECK_THROWS_AS(SpecialFftTables(1024, 3), cerium::InvalidArgument);
  CHECK_THROWS_AS(SpecialFftTables(1024, 1024), cerium::InvalidArgument);
  CHECK_THROWS_AS(SpecialFftTables(1000, 4), cerium::InvalidArgument);
  CHECK_THROWS_AS(SpecialFftTables(1, 1), cerium::InvalidArgument);
  const SpecialFftTables tables(16, 4);
  std::vector<Complex> wrong(8);
  CHECK_THROWS_AS(special_fft(wrong, tables), cerium::InvalidArgument);
  CHECK_THROWS_AS(special_ifft(wrong, tables), cerium::InvalidArgument);
}

TEST_CASE("special FFT equals direct evaluation at xi^(5^j k) = zeta^(5^j k gap)", "[math][special_fft]") {
  auto rng = cerium_test::make_rng(40);
  for (const auto& [ring_degree, slots] : shapes) {
    if (slots > 2048) continue;  // the direct sum is quadratic
    INFO("N = " << ring_degree << ", slots = " << slots << ", seed = " << cerium_test::test_seed());
    const SpecialFftTables tables(ring_degree, slots);
    const auto u = random_complex(rng, slots);
    const auto zeta = powers_of_zeta(ring_degree);
    const auto exponents = powers_of_five(slots, ring_degree);
    const std::uint64_t gap = ring_degree / (2 * slots), two_n = 2 * ring_degree;
    std::vector<Complex> expected(slots);
    for (std::size_t j = 0; j < slots; ++j) {
      WideComplex sum = 0;
      for (std::size_t k = 0; k < slots; ++k) sum += WideComplex(u[k]) * zeta[exponents[j] * k * gap % two_n];
      expected[j] = Complex(sum);
    }
    auto z = u;
    special_fft(z, tables);
    CHECK(relative_error(z, expected) < 1e-12);
  }
}

TEST_CASE("special inverse FFT undoes the special FFT", "[math][special_fft]") {
  auto rng = cerium_test::make_rng(41);
  for (const auto& [ring_degree, slots] : {Shape{1 << 16, 1 << 15}, Shape{1 << 16, 1 << 9}, Shape{1 << 13, 1 << 12},
                                           Shape{64, 32}, Shape{64, 2}, Shape{2, 1}}) {
    INFO("N = " << ring_degree << ", slots = " << slots << ", seed = " << cerium_test::test_seed());
    const SpecialFftTables tables(ring_degree, slots);
    const auto original = random_complex(rng, slots);
    auto x = original;
    special_fft(x, tables);
    special_ifft(x, tables);
    CHECK(relative_error(x, original) < 1e-9);
    special_ifft(x, tables);
    special_fft(x, tables);
    CHECK(relative_error(x, original) < 1e-9);
  }
}

TEST_CASE("encoding through the special inverse FFT: m(zeta^(5^j)) = z_(j mod slots)", "[math][special_fft]") {
  auto rng = cerium_test::make_rng(42);
  for (const auto& [ring_degree, slots] : shapes) {
    if (ring_degree * slots > (std::size_t{1} << 22)) continue;  // the direct evaluation costs N/2 x 2 slots
    INFO("N = " << ring_degree << ", slots = " << slots << ", seed = " << cerium_test::test_seed());
    const SpecialFftTables tables(ring_degree, slots);
    const auto z = random_complex(rng, slots);
    auto u = z;
    special_ifft(u, tables);
    const auto m = place_coefficients(u, ring_degree);

    // Evaluate the real polynomial m at every point zeta^(5^j), j < N/2, and at the conjugates zeta^(-5^j).
    const auto zeta = powers_of_zeta(ring_degree);
    const std::uint64_t two_n = 2 * ring_degree;
    const auto exponents = powers_of_five(ring_degree / 2, ring_degree);
    std::vector<std::size_t> support;
    for (std::size_t i = 0; i < ring_degree; ++i)
      if (m[i] != 0) support.push_back(i);
    double error = 0, scale = 1;
    for (std::size_t j = 0; j < ring_degree / 2; ++j) {
      WideComplex at_point = 0, at_conjugate = 0;
      for (std::size_t i : support) {
        const std::uint64_t e = exponents[j] * i % two_n;
        at_point += static_cast<long double>(m[i]) * zeta[e];
        at_conjugate += static_cast<long double>(m[i]) * zeta[(two_n - e) % two_n];
      }
      const Complex target = z[j % slots];
      error = std::max({error, std::abs(Complex(at_point) - target), std::abs(Complex(at_conjugate) - std::conj(target))});
      scale = std::max(scale, std::abs(target));
    }
    CHECK(error / scale < 1e-9);

    // Decoding reads u back from the same positions and applies the special FFT.
    const std::size_t gap = tables.gap();
    std::vector<Complex> decoded(slots);
    for (std::size_t k = 0; k < slots; ++k) decoded[k] = {m[k * gap], m[ring_degree / 2 + k * gap]};
    special_fft(decoded, tables);
    CHECK(relative_error(decoded, z) < 1e-9);
  }
}

TEST_CASE("special FFT of real slots: a real slot vector encodes to a polynomial with the slots' symmetry",
          "[math][special_fft]") {
  // Full slots at N = 16: the constant polynomial c has every slot equal to c, and X^(N/2) has every slot i.
  const std::size_t ring_degree = 16, slots = 8;
  const SpecialFftTables tables(ring_degree, slots);
  std::vector<Complex> z(slots, Complex(2.5, 0));
  special_ifft(z, tables);
  CHECK(std::abs(z[0] - Complex(2.5, 0)) < 1e-12);
  for (std::size_t k = 1; k < slots; ++k) CHECK(std::abs(z[k]) < 1e-12);
  std::vector<Complex> imaginary(slots, Complex(0, 1));
  special_ifft(imaginary, tables);
  const auto m = place_coefficients(imaginary, ring_degree);
  for (std::size_t i = 0; i < ring_degree; ++i) CHECK(std::abs(m[i] - (i == ring_degree / 2 ? 1.0 : 0.0)) < 1e-12);
}
