// The GPU's two-pass NTT (kernels/ntt.cu) with twisted rows, emulated stage by stage with the CPU's lazy
// butterflies, against the CPU's one-loop transform.
#include <cstdint>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/math/ntt.hpp"
#include "cerium/math/ntt_butterfly.hpp"
#include "cerium/math/ntt_row_twist.hpp"
#include "cerium/math/primes.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium::math;

namespace {
struct Shape {
  int log_n;
  NttRowSplit split;
};

// Word p of a row times its twist factor, factors[p mod period] (lazily reduced, as the GPU does).
void twist(u32* row, std::size_t words, const ShoupConstant* factors, std::size_t period, u32 q) {
  for (std::size_t p = 0; p < words; ++p) {
    const ShoupConstant& b = factors[p % period];
    row[p] = mul_shoup_lazy(row[p], b.value, b.quotient, q);
  }
}

// Forward: the c = log_n - log_row column stages, then per row its stages, row r's own twiddles for the
// first direct_stages, the twist, row 0's twiddles for the rest.
std::vector<u32> two_pass_forward(std::vector<u32> a, const NttTables& tables, const NttRowSplit& split) {
  const u32 q = tables.modulus();
  const auto w = tables.forward_twiddles();
  const auto wq = tables.forward_twiddles_shoup();
  const auto twists = ntt_row_twists(tables, split, false);
  const std::size_t n = a.size(), row_words = std::size_t{1} << split.log_row;
  const int c = tables.log_degree() - split.log_row;
  std::size_t t = n;
  for (std::size_t m = 1; m < (std::size_t{1} << c); m <<= 1) {
    t >>= 1;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 2 * i * t; j < 2 * i * t + t; ++j) ct_butterfly(a[j], a[j + t], w[m + i], wq[m + i], q);
  }
  const std::size_t period = std::size_t{1} << split.log_twist_period();
  for (std::size_t r = 0; r < (n >> split.log_row); ++r) {
    u32* row = a.data() + r * row_words;
    for (int s = 0; s < split.log_row; ++s) {
      const std::size_t root = (std::size_t{1} << c) + (s < split.direct_stages ? r : 0);
      const std::size_t half = std::size_t{1} << (split.log_row - 1 - s);
      for (std::size_t p = 0; p < row_words; ++p) {
        if (p & half) continue;
        const std::size_t k = (root << s) + (p >> (split.log_row - s));
        ct_butterfly(row[p], row[p + half], w[k], wq[k], q);
      }
      if (s + 1 == split.direct_stages) twist(row, row_words, twists.data() + r * period, period, q);
    }
  }
  for (auto& x : a) x = csub(x, q);
  return a;
}

std::vector<u32> two_pass_inverse(std::vector<u32> a, const NttTables& tables, const NttRowSplit& split) {
  const u32 q = tables.modulus();
  const auto w = tables.inverse_twiddles();
  const auto wq = tables.inverse_twiddles_shoup();
  const auto twists = ntt_row_twists(tables, split, true);
  const std::size_t n = a.size(), row_words = std::size_t{1} << split.log_row;
  const int c = tables.log_degree() - split.log_row;
  const std::size_t period = std::size_t{1} << split.log_twist_period();
  for (std::size_t r = 0; r < (n >> split.log_row); ++r) {
    u32* row = a.data() + r * row_words;
    for (int s = split.log_row - 1; s >= 0; --s) {
      if (s + 1 == split.direct_stages) twist(row, row_words, twists.data() + r * period, period, q);
      const std::size_t root = (std::size_t{1} << c) + (s < split.direct_stages ? r : 0);
      const std::size_t half = std::size_t{1} << (split.log_row - 1 - s);
      for (std::size_t p = 0; p < row_words; ++p) {
        if (p & half) continue;
        const std::size_t k = (root << s) + (p >> (split.log_row - s));
        gs_butterfly(row[p], row[p + half], w[k], wq[k], q);
      }
    }
  }
  std::size_t t = row_words;
  for (std::size_t h = std::size_t{1} << (c - 1); h >= 1; h >>= 1, t <<= 1)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t j = 2 * i * t; j < 2 * i * t + t; ++j) gs_butterfly(a[j], a[j + t], w[h + i], wq[h + i], q);
  const ShoupConstant n_inv = tables.inverse_degree();
  for (auto& x : a) x = mul_shoup(x, n_inv, q);
  return a;
}
}  // namespace

TEST_CASE("two-pass NTT with twisted rows equals the one-loop NTT", "[math][ntt]") {
  // The GPU's shapes (rows of 2^11 words, 3 direct stages, N = 2^14 .. 2^17), the 16-words-a-thread split it was
  // measured with (rows of 2^12, 4 direct stages) and smaller ones that move the split around.
  const auto shape = GENERATE(Shape{14, {11, 3}}, Shape{15, {11, 3}}, Shape{16, {11, 3}}, Shape{17, {11, 3}},
                              Shape{14, {12, 4}}, Shape{16, {12, 4}}, Shape{8, {5, 1}}, Shape{9, {5, 5}},
                              Shape{10, {4, 2}}, Shape{12, {11, 3}});
  const std::size_t n = std::size_t{1} << shape.log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(shape.log_n * 64 + shape.split.log_row));
  for (int bits : {28, 31}) {
    const auto q = generate_ntt_primes({.bits = bits, .count = 1, .ring_degree = n})[0];
    INFO("N = 2^" << shape.log_n << ", rows of 2^" << shape.split.log_row << ", " << shape.split.direct_stages
                  << " direct stages, q = " << q << ", seed = " << cerium_test::test_seed());
    NttTables tables(q, n);
    const auto original = cerium_test::random_residues(rng, n, q);
    auto expected = original;
    ntt_forward(expected, tables);
    const auto transformed = two_pass_forward(original, tables, shape.split);
    CHECK(transformed == expected);
    CHECK(two_pass_inverse(transformed, tables, shape.split) == original);
  }
}

TEST_CASE("NTT row twists: row 0 is all ones; a split that does not fit is refused", "[math][ntt]") {
  const std::size_t n = 1 << 12;
  NttTables tables(generate_ntt_primes({.bits = 30, .count = 1, .ring_degree = n})[0], n);
  const NttRowSplit split{9, 3};
  const auto twists = ntt_row_twists(tables, split, false);
  REQUIRE(twists.size() == (n >> 9) << 6);
  for (std::size_t k = 0; k < 64; ++k) CHECK(twists[k].value == 1);
  CHECK(twists[64 + 1].value != 1);
  CHECK_THROWS_AS(ntt_row_twists(tables, NttRowSplit{12, 3}, false), cerium::InvalidArgument);
  CHECK_THROWS_AS(ntt_row_twists(tables, NttRowSplit{9, 0}, true), cerium::InvalidArgument);
}
