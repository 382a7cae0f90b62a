// Every SIMD level this CPU runs (core/simd.hpp) gives the baseline's words: the NTT whole and compressed, basis
// conversion at odd lengths, the limb-wise passes and multiply-accumulates, and the CKKS operations that run ModUp, the key-switch inner
// product, ModDown and rescale. Fresh random inputs, with the extreme residues 0, q - 1 (and 2q - 1 where the
// NTT allows inputs below 2q) planted among them.

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "cerium/core/simd.hpp"
#include "cerium/math/ntt.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "cerium/ring/limb_arithmetic.hpp"
#include "evaluator_test_support.hpp"
#include "support/catch.hpp"
#include "unit/ring/ring_test_support.hpp"

using namespace evaluator_test;

namespace {

std::vector<SimdLevel> levels_here() {
  std::vector<SimdLevel> levels;
  for (const SimdLevel l : {SimdLevel::baseline, SimdLevel::avx2, SimdLevel::avx512}) {
    if (l <= supported_simd_level()) levels.push_back(l);
  }
  return levels;
}

// Runs `compute` at every level; each result must equal the baseline's.
template <class Result>
void check_levels_agree(const std::function<Result()>& compute) {
  const SimdLevel before = simd_level();
  set_simd_level(SimdLevel::baseline);
  const Result baseline = compute();
  for (const SimdLevel level : levels_here()) {
    set_simd_level(level);
    INFO("SIMD level " << to_string(level));
    CHECK(compute() == baseline);
  }
  set_simd_level(before);
}

void plant_extremes(std::vector<std::uint32_t>& words, std::uint32_t q, std::uint32_t largest) {
  for (std::size_t k = 0; k < words.size(); k += 7) words[k] = (k / 7) % 3 == 0 ? 0 : (k / 7) % 3 == 1 ? q - 1 : largest;
}

}  // namespace

TEST_CASE("every SIMD level gives the baseline's NTT words", "[math][ntt][simd]") {
  INFO("supported here: " << to_string(supported_simd_level()));
  auto rng = cerium_test::make_rng(171);
  for (int log_n = 1; log_n <= 13; ++log_n) {
    const std::size_t n = std::size_t{1} << log_n;
    const std::uint32_t q = ring_test::mixed_primes(n, 1, rng, {}, 28 + log_n % 4)[0];
    const math::NttTables tables(q, n);
    INFO("N = " << n << ", q = " << q);
    std::vector<std::uint32_t> input = cerium_test::random_residues(rng, n, 2 * q);  // forward inputs below 2q
    plant_extremes(input, q, 2 * q - 1);
    check_levels_agree<std::vector<std::uint32_t>>([&] {
      auto a = input;
      math::ntt_forward(a, tables);
      return a;
    });
    std::vector<std::uint32_t> evaluations = cerium_test::random_residues(rng, n, q);
    plant_extremes(evaluations, q, q - 1);
    check_levels_agree<std::vector<std::uint32_t>>([&] {
      auto a = evaluations;
      math::ntt_inverse(a, tables);
      return a;
    });
    for (std::size_t size = 1; size < n; size *= 4) {  // the compressed transform's shorter runs
      std::vector<std::uint32_t> small(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(size));
      check_levels_agree<std::vector<std::uint32_t>>([&] {
        auto a = small;
        math::ntt_forward_compressed(a, tables);
        return a;
      });
    }
  }
}

TEST_CASE("every SIMD level gives the baseline's basis conversion and limb-wise words", "[ring][simd]") {
  auto rng = cerium_test::make_rng(172);
  const std::size_t n = 1024;
  for (const auto& [from_count, to_count] : {std::pair{1, 1}, {3, 5}, {9, 4}, {13, 17}}) {
    const auto from = ring_test::random_basis(n, static_cast<std::size_t>(from_count), rng);
    const auto to = ring_test::random_basis(n, static_cast<std::size_t>(to_count), rng,
                                            std::vector<std::uint32_t>(from->primes().begin(), from->primes().end()));
    const ring::BasisConverter converter(from, to);
    const ring::RnsPoly x = ring_test::random_poly(from, rng);
    INFO(from_count << " primes to " << to_count);
    for (const std::size_t len : {std::size_t{1}, std::size_t{17}, std::size_t{1000}}) {  // not whole vectors
      check_levels_agree<std::vector<std::uint32_t>>([&] {
        std::vector<std::uint32_t> words(len * to->size());
        std::vector<std::span<const std::uint32_t>> in;
        std::vector<std::span<std::uint32_t>> out;
        for (std::size_t i = 0; i < from->size(); ++i) in.push_back(x.limb(i).first(len));
        for (std::size_t j = 0; j < to->size(); ++j) out.emplace_back(words.data() + j * len, len);
        converter.convert(in, out);
        return words;
      });
    }
  }
  const auto basis = ring_test::random_basis(n, 6, rng);
  ring::RnsPoly a = ring_test::random_poly(basis, rng, ring::PolyForm::ntt);
  ring::RnsPoly b = ring_test::random_poly(basis, rng, ring::PolyForm::ntt);
  for (std::size_t i = 0; i < basis->size(); ++i) {
    auto words = a.limb(i);
    std::vector<std::uint32_t> planted(words.begin(), words.end());
    plant_extremes(planted, basis->prime(i), basis->prime(i) - 1);
    std::copy(planted.begin(), planted.end(), words.begin());
  }
  std::vector<std::uint32_t> scalars;
  for (const std::uint32_t q : basis->primes()) scalars.push_back(q - 2);
  check_levels_agree<std::vector<ring::RnsPoly>>([&] {
    std::vector<ring::RnsPoly> r;
    r.push_back(a + b);
    r.push_back(a - b);
    r.push_back(a * b);
    r.push_back(-a);
    r.push_back(a.clone());
    r.back().multiply_scalar(scalars);
    r.push_back(b.clone());  // b + a a + (q - 2) a, the fused sums' loops
    for (std::size_t i = 0; i < basis->size(); ++i) {
      ring::multiply_accumulate_limb(r.back().limb(i), std::as_const(a).limb(i), std::as_const(a).limb(i),
                                     basis->modulus(i));
      ring::multiply_accumulate_limb(r.back().limb(i), std::as_const(a).limb(i), scalars[i], basis->modulus(i));
    }
    return r;
  });
}

TEST_CASE("every SIMD level gives the baseline's ciphertext words", "[ckks][simd]") {
  Fixture f(toy(12, 4, 2, 3), {.relinearization = true, .rotations = {1, -5}});
  auto rng = cerium_test::make_rng(173);
  const Ciphertext x = f.encrypt(random_complex(rng, f.max_slots()));
  const Ciphertext y = f.encrypt(random_complex(rng, f.max_slots()));
  const SimdLevel before = simd_level();
  std::vector<std::vector<Ciphertext>> results;
  for (const SimdLevel level : levels_here()) {
    set_simd_level(level);
    results.push_back(key_switching_results(f, x, y));
  }
  set_simd_level(before);
  for (std::size_t l = 1; l < results.size(); ++l) {
    for (std::size_t i = 0; i < results[0].size(); ++i) {
      INFO("SIMD level " << to_string(levels_here()[l]) << ", result " << i);
      CHECK(same_words(results[l][i], results[0][i]));
    }
  }
  if (supported_simd_level() != SimdLevel::avx512) {
    CHECK_THROWS_AS(set_simd_level(SimdLevel::avx512), UnsupportedError);
  }
}
