#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/math/os_random.hpp"
#include "cerium/math/sampler.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium::math;

// Statistical tests draw from FIXED seeds: each statistic is then a fixed number, so the tests never flake, and
// the thresholds (tail probability about 1e-5 under the null hypothesis) still catch a real bias.

namespace {

Seed fixed_seed(std::uint32_t tag) {
  Seed seed;
  for (std::uint32_t i = 0; i < 8; ++i) seed.words[i] = 0x9e3779b9u * (tag + 1) + i;
  return seed;
}

// Pearson's statistic of observed counts against expected probabilities.
double chi_square(const std::vector<std::uint64_t>& counts, const std::vector<double>& probabilities) {
  std::uint64_t total = 0;
  for (auto c : counts) total += c;
  double statistic = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double expected = probabilities[i] * static_cast<double>(total);
    const double difference = static_cast<double>(counts[i]) - expected;
    statistic += difference * difference / expected;
  }
  return statistic;
}

// The chi-square quantile with upper tail about 1e-5 (Wilson-Hilferty approximation, z = 4.265).
double chi_square_critical(std::size_t degrees_of_freedom) {
  const double k = static_cast<double>(degrees_of_freedom);
  const double z = 4.265;
  const double t = 1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k));
  return k * t * t * t;
}

// Bucket b of [0, q) for `buckets` buckets: values x with floor(x * buckets / q) = b; exact probabilities.
std::vector<double> bucket_probabilities(std::uint32_t q, std::uint32_t buckets) {
  std::vector<double> p(buckets);
  auto first_of = [&](std::uint64_t b) { return (b * q + buckets - 1) / buckets; };  // ceil(b q / buckets)
  for (std::uint32_t b = 0; b < buckets; ++b)
    p[b] = static_cast<double>(first_of(b + 1) - first_of(b)) / static_cast<double>(q);
  return p;
}

std::vector<std::uint64_t> bucket_counts(const std::vector<std::uint32_t>& values, std::uint32_t q,
                                         std::uint32_t buckets) {
  std::vector<std::uint64_t> counts(buckets, 0);
  for (auto x : values) ++counts[static_cast<std::uint64_t>(x) * buckets / q];
  return counts;
}

// The discrete Gaussian's pmf for sigma 3.2 on [-19, 19], computed independently of the sampler's table.
long double gaussian_pmf(int x) {
  const long double sigma = 3.2L;
  long double total = 0;
  for (int y = -gaussian_tail_bound; y <= gaussian_tail_bound; ++y) total += std::exp(-(y * y) / (2 * sigma * sigma));
  return std::exp(-(x * x) / (2 * sigma * sigma)) / total;
}

}  // namespace

TEST_CASE("uniform mod q has no modulo bias (chi-square over buckets)", "[math][sampler]") {
  // 2863311531 ~ 2^33 / 3: a plain word mod q would make [0, 2^32 - q) twice as likely as the rest.
  for (std::uint32_t q : {2863311531u, 1073479681u, 268369921u, 12289u, 7u}) {
    INFO("q = " << q);
    const std::uint32_t buckets = std::min<std::uint32_t>(q, 64);
    Prng prng(fixed_seed(q % 1000));
    std::vector<std::uint32_t> values(buckets * 5000);
    sample_uniform_mod(prng, values, q);
    REQUIRE(std::all_of(values.begin(), values.end(), [&](std::uint32_t x) { return x < q; }));
    const double statistic = chi_square(bucket_counts(values, q, buckets), bucket_probabilities(q, buckets));
    INFO("chi-square = " << statistic << " (critical " << chi_square_critical(buckets - 1) << ")");
    CHECK(statistic < chi_square_critical(buckets - 1));
  }
}

TEST_CASE("the uniform chi-square test detects plain modulo bias", "[math][sampler]") {
  // The control that shows the test above has power: the same statistic on word mod q fails clearly.
  const std::uint32_t q = 2863311531u, buckets = 64;
  Prng prng(fixed_seed(1));
  std::vector<std::uint32_t> values(buckets * 5000);
  for (auto& x : values) x = prng.next_u32() % q;
  CHECK(chi_square(bucket_counts(values, q, buckets), bucket_probabilities(q, buckets)) >
        10 * chi_square_critical(buckets - 1));
}

TEST_CASE("uniform mod q rejects q = 0 and handles q = 1", "[math][sampler]") {
  Prng prng(fixed_seed(2));
  std::vector<std::uint32_t> values(10, 5);
  CHECK_THROWS_AS(sample_uniform_mod(prng, values, 0), cerium::InvalidArgument);
  sample_uniform_mod(prng, values, 1);
  CHECK(std::all_of(values.begin(), values.end(), [](std::uint32_t x) { return x == 0; }));
  CHECK(uniform_acceptance_bound(1) == (std::uint64_t{1} << 32));
  CHECK(uniform_acceptance_bound(3) == 4294967295u);
}

TEST_CASE("ternary values are -1 0 1 with probability exactly 1/3 each", "[math][sampler]") {
  const std::size_t n = 1'500'000;
  Prng prng(fixed_seed(3));
  std::vector<std::int8_t> values(n);
  sample_ternary(prng, values);
  std::vector<std::uint64_t> counts(3, 0), pair_counts(9, 0);
  for (std::size_t i = 0; i < n; ++i) {
    REQUIRE((values[i] >= -1 && values[i] <= 1));
    ++counts[static_cast<std::size_t>(values[i] + 1)];
    if (i % 2 == 1) ++pair_counts[static_cast<std::size_t>(3 * (values[i - 1] + 1) + (values[i] + 1))];
  }
  const double single = chi_square(counts, std::vector<double>(3, 1.0 / 3));
  INFO("counts " << counts[0] << " " << counts[1] << " " << counts[2] << ", chi-square " << single);
  CHECK(single < chi_square_critical(2));
  // Consecutive values are independent: the 9 pairs are equally likely.
  CHECK(chi_square(pair_counts, std::vector<double>(9, 1.0 / 9)) < chi_square_critical(8));
}

TEST_CASE("the ternary chi-square test detects byte mod 3 bias", "[math][sampler]") {
  // Control: a byte mod 3 gives 0 with probability 86/256; the test above must see that at its sample size.
  const std::size_t n = 1'500'000;
  Prng prng(fixed_seed(4));
  std::vector<std::uint64_t> counts(3, 0);
  for (std::size_t i = 0; i < n; ++i) ++counts[(prng.next_u32() & 0xff) % 3];
  CHECK(chi_square(counts, std::vector<double>(3, 1.0 / 3)) > chi_square_critical(2));
}

TEST_CASE("fixed Hamming weight has exactly h nonzeros with balanced signs and uniform positions", "[math][sampler]") {
  const std::size_t n = 1024, h = 64, draws = 300;
  Prng prng(fixed_seed(5));
  std::vector<std::int8_t> secret(n);
  std::vector<std::uint64_t> position_buckets(64, 0);
  std::uint64_t plus = 0, minus = 0;
  for (std::size_t d = 0; d < draws; ++d) {
    sample_hamming_weight(prng, secret, h);
    std::size_t nonzeros = 0;
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE((secret[i] >= -1 && secret[i] <= 1));
      if (secret[i] == 0) continue;
      ++nonzeros;
      ++position_buckets[i / (n / 64)];
      (secret[i] > 0 ? plus : minus) += 1;
    }
    REQUIRE(nonzeros == h);
  }
  // plus ~ Binomial(draws h, 1/2): standard deviation sqrt(19200) / 2 ~ 69; 5 of them.
  INFO("+1: " << plus << ", -1: " << minus);
  CHECK(std::llabs(static_cast<long long>(plus) - static_cast<long long>(minus)) < 2 * 5 * 69);
  // Without replacement the counts vary less than multinomially, so the chi-square bound is conservative.
  CHECK(chi_square(position_buckets, std::vector<double>(64, 1.0 / 64)) < chi_square_critical(63));
}

TEST_CASE("fixed Hamming weight at the edges and at N = 2^16 with h = 32", "[math][sampler]") {
  Prng prng(fixed_seed(6));
  auto count_nonzero = [](const std::vector<std::int8_t>& v) {
    return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](std::int8_t x) { return x != 0; }));
  };
  for (auto [n, h] : {std::pair<std::size_t, std::size_t>{1000, 500}, {1000, 0}, {1000, 1000}, {1, 1}, {3, 2},
                      {std::size_t{1} << 16, 32}}) {
    INFO("n = " << n << ", h = " << h);
    std::vector<std::int8_t> secret(n, 7);
    sample_hamming_weight(prng, secret, h);
    CHECK(count_nonzero(secret) == h);
    CHECK(std::all_of(secret.begin(), secret.end(), [](std::int8_t x) { return x >= -1 && x <= 1; }));
  }
  std::vector<std::int8_t> secret(10);
  CHECK_THROWS_AS(sample_hamming_weight(prng, secret, 11), cerium::InvalidArgument);
}

TEST_CASE("the Gaussian CDT table is the discrete Gaussian with sigma 3.2 cut at 19", "[math][sampler]") {
  const GaussianCdt table = gaussian_cdt();
  long double cumulative = 0;
  for (int k = 0; k < gaussian_tail_bound; ++k) {
    cumulative += k == 0 ? gaussian_pmf(0) : 2 * gaussian_pmf(k);
    const long double expected = std::ldexp(cumulative, 63);
    INFO("k = " << k);
    CHECK(std::fabs(static_cast<long double>(table.threshold[k]) - expected) < std::ldexp(1.0L, 14));
    if (k > 0) CHECK(table.threshold[k] > table.threshold[k - 1]);
  }
  CHECK(table.threshold[gaussian_tail_bound - 1] < (std::uint64_t{1} << 63));
}

TEST_CASE("gaussian_from_word maps words across each threshold exactly", "[math][sampler]") {
  static_assert(gaussian_from_word(~std::uint64_t{0}) == -gaussian_tail_bound);  // usable in constant expressions
  const GaussianCdt table = gaussian_cdt();
  for (std::uint64_t sign = 0; sign < 2; ++sign) {
    const std::int32_t direction = sign ? -1 : 1;
    CHECK(gaussian_from_word(sign) == 0);
    for (int k = 0; k < gaussian_tail_bound; ++k) {
      INFO("k = " << k << ", sign bit " << sign);
      CHECK(gaussian_from_word(((table.threshold[k] - 1) << 1) | sign) == direction * k);
      CHECK(gaussian_from_word((table.threshold[k] << 1) | sign) == direction * (k + 1));
    }
    CHECK(gaussian_from_word((~std::uint64_t{0} << 1) | sign) == direction * gaussian_tail_bound);
  }
}

TEST_CASE("Gaussian samples have mean 0 and deviation 3.2 and stay within 19 and follow the pmf", "[math][sampler]") {
  const std::size_t n = 1'000'000;
  Prng prng(fixed_seed(7));
  std::vector<std::int32_t> samples(n);
  sample_gaussian(prng, samples);
  double sum = 0, sum_squares = 0;
  int max_magnitude = 0;
  std::vector<std::uint64_t> counts(15, 0);  // x < -6, x = -6 .. 6, x > 6
  for (auto x : samples) {
    sum += x;
    sum_squares += static_cast<double>(x) * x;
    max_magnitude = std::max(max_magnitude, std::abs(x));
    ++counts[static_cast<std::size_t>(std::clamp(x, -7, 7) + 7)];
  }
  const double mean = sum / n;
  const double deviation = std::sqrt(sum_squares / n - mean * mean);
  INFO("mean " << mean << ", standard deviation " << deviation << ", max |x| " << max_magnitude);
  CHECK(std::fabs(mean) < 6 * gaussian_sigma / std::sqrt(static_cast<double>(n)));
  CHECK(std::fabs(deviation - gaussian_sigma) < 0.02 * gaussian_sigma);
  CHECK(max_magnitude <= gaussian_tail_bound);

  std::vector<double> probabilities(15, 0);
  long double tail = 0;
  for (int x = 7; x <= gaussian_tail_bound; ++x) tail += gaussian_pmf(x);
  probabilities[0] = probabilities[14] = static_cast<double>(tail);
  for (int x = -6; x <= 6; ++x) probabilities[static_cast<std::size_t>(x + 7)] = static_cast<double>(gaussian_pmf(x));
  const double statistic = chi_square(counts, probabilities);
  INFO("chi-square " << statistic);
  CHECK(statistic < chi_square_critical(14));
}

TEST_CASE("signed_to_rns maps small signed values to residues", "[math][sampler]") {
  const std::vector<std::uint32_t> moduli = {1073479681u, 268369921u, 12289u, 257u};
  auto reference = [](std::int64_t x, std::uint32_t q) {
    return static_cast<std::uint32_t>(((x % q) + q) % q);
  };
  SECTION("int8_t, the whole range") {
    std::vector<std::int8_t> values;
    for (int x = -128; x <= 127; ++x) values.push_back(static_cast<std::int8_t>(x));
    std::vector<std::uint32_t> out(values.size() * moduli.size());
    signed_to_rns(values, moduli, out);
    for (std::size_t l = 0; l < moduli.size(); ++l)
      for (std::size_t i = 0; i < values.size(); ++i) REQUIRE(out[l * values.size() + i] == reference(values[i], moduli[l]));
  }
  SECTION("int32_t Gaussian samples and extremes") {
    Prng prng(fixed_seed(8));
    std::vector<std::int32_t> values(1000);
    sample_gaussian(prng, values);
    values.push_back(-256);
    values.push_back(256);
    std::vector<std::uint32_t> out(values.size() * moduli.size());
    signed_to_rns(values, moduli, out);
    for (std::size_t l = 0; l < moduli.size(); ++l)
      for (std::size_t i = 0; i < values.size(); ++i) REQUIRE(out[l * values.size() + i] == reference(values[i], moduli[l]));
  }
  SECTION("out of range values and wrong sizes throw") {
    const std::uint32_t small[] = {17};
    std::vector<std::uint32_t> out(3);
    for (std::int32_t bad : {17, -17, std::numeric_limits<std::int32_t>::min()}) {
      const std::int32_t values[] = {0, bad, 1};
      CHECK_THROWS_AS(signed_to_rns(std::span<const std::int32_t>(values), small, out), cerium::InvalidArgument);
    }
    const std::int32_t fine[] = {16, -16, 0};
    signed_to_rns(std::span<const std::int32_t>(fine), small, out);
    CHECK(out == std::vector<std::uint32_t>{16, 1, 0});
    std::vector<std::uint32_t> too_small(2);
    CHECK_THROWS_AS(signed_to_rns(std::span<const std::int32_t>(fine), small, too_small), cerium::InvalidArgument);
  }
  static_assert(signed_to_residue(-1, 17) == 16 && signed_to_residue(5, 17) == 5);
}

TEST_CASE("samplers are deterministic in the seed and differ across seeds and streams", "[math][sampler]") {
  auto rng = cerium_test::make_rng(30);
  INFO("seed = " << cerium_test::test_seed());
  Seed seed;
  for (auto& w : seed.words) w = static_cast<std::uint32_t>(rng());

  struct Draw {
    std::vector<std::uint32_t> uniform = std::vector<std::uint32_t>(256);
    std::vector<std::int8_t> ternary = std::vector<std::int8_t>(256), sparse = std::vector<std::int8_t>(256);
    std::vector<std::int32_t> gaussian = std::vector<std::int32_t>(256);
    bool operator==(const Draw&) const = default;
  };
  auto draw = [](Prng prng) {
    Draw d;
    sample_uniform_mod(prng, d.uniform, 1073479681u);
    sample_ternary(prng, d.ternary);
    sample_hamming_weight(prng, d.sparse, 32);
    sample_gaussian(prng, d.gaussian);
    return d;
  };
  const Draw first = draw(Prng(seed));
  CHECK(first == draw(Prng(seed)));
  CHECK(Prng(seed, 5).stream() == 5);
  CHECK(Prng(seed).seed() == seed);

  Seed other = seed;
  other.words[3] ^= 1;
  const Draw different_seed = draw(Prng(other));
  const Draw different_stream = draw(Prng(seed, 1));
  for (const Draw* d : {&different_seed, &different_stream}) {
    CHECK(d->uniform != first.uniform);
    CHECK(d->ternary != first.ternary);
    CHECK(d->sparse != first.sparse);
    CHECK(d->gaussian != first.gaussian);
  }
}

TEST_CASE("OS seeds are fresh on every call", "[math][sampler][os_random]") {
  const Seed a = os_random_seed(), b = os_random_seed();
  CHECK(a != b);
  CHECK(Prng::from_os().seed() != Prng::from_os().seed());
  CHECK(Prng::from_os().next_u64() != Prng::from_os().next_u64());

  // A large request (getrandom may return it in pieces) is filled to the end.
  std::vector<std::byte> bytes(1 << 20, std::byte{0});
  os_random_bytes(bytes);
  const auto zeros = std::count(bytes.end() - 4096, bytes.end(), std::byte{0});
  CHECK(zeros < 64);  // about 16 expected
  os_random_bytes({});  // nothing to do
}

TEST_CASE("Prng is a UniformRandomBitGenerator", "[math][sampler]") {
  static_assert(std::uniform_random_bit_generator<Prng>);
  Prng prng(fixed_seed(9));
  std::vector<int> deck(52);
  for (int i = 0; i < 52; ++i) deck[i] = i;
  std::shuffle(deck.begin(), deck.end(), prng);
  std::sort(deck.begin(), deck.end());
  for (int i = 0; i < 52; ++i) REQUIRE(deck[i] == i);
}
