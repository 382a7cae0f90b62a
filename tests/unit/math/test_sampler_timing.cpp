// dudect-style timing tests of the samplers (Reparaz, Balasch and Verbauwhede, "Dude, is my code constant time?",
// DATE 2017): one call per measurement, two classes of inputs in random order, Welch's t-test on all times and on
// the times below several percentiles (the long right tail is interrupts and other processes' work); |t| > 10 says
// the time depends on the class. Class 0 is one fixed input, class 1 random ones: seeds for the samplers, ternary
// vectors (copied into one buffer, so both classes read the same addresses) for rlwe::small_poly. A time that
// depends on the values shows as a difference in the means: an early-exit CDT Gaussian sampler gives |t| > 400.
//
// The ternary sampler rejects 2-bit chunks equal to 3, so its time follows the number of chunks it reads and,
// slightly, where the rejections fall: public, independent of the values (sampler.hpp), but a fixed seed's differ
// from the random ones' (|t| of 40 to 150 at 20000 calls from the count alone). Its random seeds therefore have
// the fixed seed's chunk count, and every call writes at a random offset: only the values differ on average.
//
// CI runs a short version (about 2 s); CERIUM_TIMING_SAMPLES=<calls per sampler> runs a long one. Under sanitizers
// times mean nothing: a few calls run and nothing is asserted.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cerium/math/primes.hpp"
#include "cerium/math/sampler.hpp"
#include "cerium/rlwe/small_poly.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium::math;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

constexpr std::size_t n = 1024;  // values per call
constexpr double threshold = 10;  // dudect's

std::size_t sample_count() {
  if (sanitized) return 200;
  if (const char* env = std::getenv("CERIUM_TIMING_SAMPLES")) return std::max<std::size_t>(std::stoull(env), 100);
  return 20000;
}

Seed random_seed(std::mt19937_64& rng) {
  Seed seed;
  for (auto& w : seed.words) w = static_cast<std::uint32_t>(rng());
  return seed;
}

// Welford's running mean and variance of one class.
struct Moments {
  double count = 0, mean = 0, m2 = 0;
  void add(double x) {
    count += 1;
    const double delta = x - mean;
    mean += delta / count;
    m2 += delta * (x - mean);
  }
  double variance() const { return m2 / (count - 1); }
};

double welch_t(const Moments& a, const Moments& b) {
  return (a.mean - b.mean) / std::sqrt(a.variance() / a.count + b.variance() / b.count);
}

struct TimingResult {
  double max_t = 0;   // the largest |t| over all times and the cropped sets
  double raw_t = 0;   // on all times
  double mean_ns[2] = {};
  std::size_t samples = 0;
};

// classes[i] picks the class of call i; run(i) makes one timed sampler call (its inputs prepared outside the
// timed part). Crops at the percentiles 1 - 2^-(k+1), k = 0..9, as dudect does (its thresholds, coarser).
TimingResult time_classes(const std::vector<std::uint8_t>& classes,
                          const std::function<std::uint64_t(std::size_t)>& run) {
  for (std::size_t i = 0; i < std::min<std::size_t>(classes.size(), 200); ++i) run(i);  // warm-up
  std::vector<std::uint64_t> times(classes.size());
  for (std::size_t i = 0; i < classes.size(); ++i) times[i] = run(i);
  std::vector<double> limits{std::numeric_limits<double>::infinity()};
  std::vector<std::uint64_t> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  for (int k = 0; k < 10; ++k) {
    const double q = 1 - std::ldexp(1.0, -(k + 1));
    limits.push_back(static_cast<double>(sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1))]));
  }
  TimingResult result;
  result.samples = classes.size();
  for (std::size_t l = 0; l < limits.size(); ++l) {
    Moments m[2];
    for (std::size_t i = 0; i < times.size(); ++i)
      if (static_cast<double>(times[i]) <= limits[l]) m[classes[i]].add(static_cast<double>(times[i]));
    if (m[0].count < 10 || m[1].count < 10) continue;
    const double t = welch_t(m[0], m[1]);
    if (l == 0) {
      result.raw_t = t;
      result.mean_ns[0] = m[0].mean;
      result.mean_ns[1] = m[1].mean;
    }
    result.max_t = std::max(result.max_t, std::abs(t));
  }
  return result;
}

// Nanoseconds of one call of f.
template <class F>
std::uint64_t timed(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  const auto stop = std::chrono::steady_clock::now();
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
}

// Chunks sample_ternary reads for `count` values from this seed (the loop of sampler.cpp, counting only).
std::size_t ternary_chunks(const Seed& seed, std::size_t count) {
  Prng prng(seed);
  std::size_t accepted = 0, chunks = 0;
  for (;;) {
    std::uint32_t word = prng.next_u32();
    for (int c = 0; c < 16; ++c, word >>= 2) {
      ++chunks;
      if ((word & 3u) != 3u && ++accepted == count) return chunks;
    }
  }
}

void report(const char* name, const TimingResult& r) {
  WARN(name << ": " << r.samples << " calls, mean " << r.mean_ns[0] << " ns (fixed) / " << r.mean_ns[1]
            << " ns (random), t = " << r.raw_t << ", max |t| over crops " << r.max_t
            << (sanitized ? " (sanitized build: not asserted)" : ""));
  CHECK(std::isfinite(r.max_t));
  if (!sanitized) CHECK(r.max_t < threshold);
}

}  // namespace

TEST_CASE("samplers take the same time for a fixed seed as for random ones (dudect, Welch's t)",
          "[math][sampler][timing]") {
  auto rng = cerium_test::make_rng(11);
  INFO("seed " << cerium_test::test_seed());
  const std::size_t samples = sample_count();
  std::vector<std::uint8_t> classes(samples);
  std::bernoulli_distribution coin(0.5);
  for (auto& c : classes) c = coin(rng);
  // Each call's seed: the fixed one for class 0, a random one for class 1 (`random_seed` draws it).
  const auto seeds = [&](const Seed& fixed, const std::function<Seed()>& random_seed) {
    std::vector<Seed> out(samples);
    for (std::size_t i = 0; i < samples; ++i) out[i] = classes[i] ? random_seed() : fixed;
    return out;
  };
  const auto fresh = [&] { return random_seed(rng); };

  SECTION("ternary (random seeds with the fixed seed's chunk count)") {
    // Searching costs about 50 seeds per match: class 1 picks from a pool of matches.
    const std::size_t target = n * 4 / 3;  // the most likely count
    Seed fixed = fresh();
    while (ternary_chunks(fixed, n) != target) fixed = fresh();
    std::vector<Seed> pool;
    while (pool.size() < (sanitized ? 8u : 512u)) {
      const Seed s = fresh();
      if (ternary_chunks(s, n) == target) pool.push_back(s);
    }
    std::uniform_int_distribution<std::size_t> pick(0, pool.size() - 1);
    const auto inputs = seeds(fixed, [&] { return pool[pick(rng)]; });
    // Where the rejections put the stores, relative to the generator's buffer, moves the time by about 0.1%,
    // differently for each seed and output address (seen with the same values at offsets 0 and 2048: per-seed
    // means uncorrelated). A random offset per call averages that out for the fixed seed too.
    std::vector<std::int8_t> buffer(n + 4096);
    std::uniform_int_distribution<std::size_t> offset(0, 4095);
    std::vector<std::size_t> offsets(samples);
    for (auto& o : offsets) o = offset(rng);
    report("sample_ternary", time_classes(classes, [&](std::size_t i) {
             Prng prng(inputs[i]);
             const std::span<std::int8_t> out(buffer.data() + offsets[i], n);
             return timed([&] { sample_ternary(prng, out); });
           }));
  }
  SECTION("fixed Hamming weight 64") {
    const auto inputs = seeds(fresh(), fresh);
    std::vector<std::int8_t> out(n);
    report("sample_hamming_weight", time_classes(classes, [&](std::size_t i) {
             Prng prng(inputs[i]);
             return timed([&] { sample_hamming_weight(prng, out, 64); });
           }));
  }
  SECTION("rlwe::small_poly of ternary values (RNS reduction and NTT, as for a secret key)") {
    const auto primes = generate_ntt_primes({.bits = 30, .count = 3, .ring_degree = n});
    const auto basis = cerium::ring::make_basis(n, primes);
    std::vector<std::vector<std::int8_t>> values(sanitized ? 8 : 512, std::vector<std::int8_t>(n));
    for (auto& v : values) {
      Prng prng(fresh());
      sample_ternary(prng, v);
    }
    std::uniform_int_distribution<std::size_t> pick(1, values.size() - 1);
    std::vector<std::size_t> inputs(samples);
    for (std::size_t i = 0; i < samples; ++i) inputs[i] = classes[i] ? pick(rng) : 0;
    std::vector<std::int8_t> v(n);  // one buffer for both classes: the same addresses, in cache for both
    report("rlwe::small_poly", time_classes(classes, [&](std::size_t i) {
             std::copy(values[inputs[i]].begin(), values[inputs[i]].end(), v.begin());
             return timed([&] { cerium::rlwe::small_poly(basis, std::span<const std::int8_t>(v)); });
           }));
  }
  SECTION("discrete Gaussian") {
    const auto inputs = seeds(fresh(), fresh);
    std::vector<std::int32_t> out(n);
    report("sample_gaussian", time_classes(classes, [&](std::size_t i) {
             Prng prng(inputs[i]);
             return timed([&] { sample_gaussian(prng, out); });
           }));
  }
}
