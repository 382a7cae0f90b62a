// The CUDA backend's first pieces: device buffers, errors, and the batched NTT, which must give the CPU
// reference's words exactly. Every test skips (with a warning) where no device is present.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "cerium/backend/cuda/device.hpp"
#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/ntt.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/backend/cuda/timer.hpp"
#include "cerium/core/error.hpp"
#include "cerium/math/ntt.hpp"
#include "cerium/math/primes.hpp"
#include "gpu_test_support.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using cerium::cuda::DeviceBuffer;
using cerium::cuda::NttPlan;
using cerium::cuda::Stream;
using cerium::math::NttTables;

namespace {

// One table per limb over distinct primes of 28, 29, 30 and 31 bits in turn.
std::vector<NttTables> make_tables(std::size_t n, std::size_t limbs) {
  std::vector<std::vector<std::uint32_t>> by_bits;
  for (int bits = 28; bits <= 31; ++bits)
    by_bits.push_back(cerium::math::generate_ntt_primes({.bits = bits, .count = (limbs + 3) / 4, .ring_degree = n}));
  std::vector<NttTables> tables;
  for (std::size_t i = 0; i < limbs; ++i) tables.emplace_back(by_bits[i % 4][i / 4], n);
  return tables;
}

// Limb-major residues, limb i uniform in [0, bound_factor * q_i).
std::vector<std::uint32_t> random_limbs(std::mt19937_64& rng, const std::vector<NttTables>& tables,
                                        std::uint32_t bound_factor = 1) {
  std::vector<std::uint32_t> words;
  for (const auto& t : tables) {
    const auto limb = cerium_test::random_residues(rng, t.degree(), bound_factor * t.modulus());
    words.insert(words.end(), limb.begin(), limb.end());
  }
  return words;
}

std::vector<std::uint32_t> cpu_transform(std::vector<std::uint32_t> words, const std::vector<NttTables>& tables,
                                         bool forward, std::size_t first_table = 0) {
  const std::size_t n = tables[0].degree();
  for (std::size_t i = 0; i * n < words.size(); ++i) {
    const std::span<std::uint32_t> limb(words.data() + i * n, n);
    if (forward) cerium::math::ntt_forward(limb, tables[first_table + i]);
    else cerium::math::ntt_inverse(limb, tables[first_table + i]);
  }
  return words;
}

// "" when equal, else where the first difference is (whole vectors would flood the report).
std::string difference(const std::vector<std::uint32_t>& got, const std::vector<std::uint32_t>& expected,
                       std::size_t n) {
  if (got.size() != expected.size()) return "sizes differ";
  const auto it = std::mismatch(got.begin(), got.end(), expected.begin());
  if (it.first == got.end()) return "";
  const auto index = static_cast<std::size_t>(it.first - got.begin());
  const auto count = static_cast<std::size_t>(
      std::inner_product(got.begin(), got.end(), expected.begin(), std::size_t{0}, std::plus<>(),
                         [](auto a, auto b) { return static_cast<std::size_t>(a != b); }));
  std::ostringstream out;
  out << count << " words differ; first at limb " << index / n << ", coefficient " << index % n << ": got "
      << *it.first << ", expected " << *it.second;
  return out.str();
}

std::vector<std::uint32_t> gpu_transform(const NttPlan& plan, const std::vector<std::uint32_t>& words, bool forward,
                                         const Stream& stream) {
  DeviceBuffer buffer(words.size(), stream);
  buffer.upload(words);
  const std::size_t limbs = words.size() / plan.degree();
  if (forward) plan.forward(buffer, limbs);
  else plan.inverse(buffer, limbs);
  return buffer.download();
}

void check_against_cpu(int log_n, std::size_t limbs, std::uint32_t bound_factor, std::uint64_t salt) {
  const std::size_t n = std::size_t{1} << log_n;
  INFO("N = 2^" << log_n << ", limbs = " << limbs << ", inputs below " << bound_factor
                << "q, seed = " << cerium_test::test_seed());
  const auto tables = make_tables(n, limbs);
  auto rng = cerium_test::make_rng(salt);
  const Stream stream = Stream::create();
  const NttPlan plan(tables, stream);

  const auto input = random_limbs(rng, tables, bound_factor);
  const auto forward = gpu_transform(plan, input, true, stream);
  CHECK(difference(forward, cpu_transform(input, tables, true), n) == "");

  const auto other = random_limbs(rng, tables, bound_factor);
  CHECK(difference(gpu_transform(plan, other, false, stream), cpu_transform(other, tables, false), n) == "");

  if (bound_factor == 1) {
    CHECK(difference(gpu_transform(plan, forward, false, stream), input, n) == "");
  }
}

}  // namespace

TEST_CASE("GPU NTT gives the CPU's words for N = 2^10 .. 2^17 and 1, 3, 17 limbs", "[gpu][ntt]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(range(10, 18));
  const std::size_t limbs = GENERATE(std::size_t{1}, std::size_t{3}, std::size_t{17});
  check_against_cpu(log_n, limbs, 1, static_cast<std::uint64_t>(log_n * 100) + limbs);
}

TEST_CASE("GPU NTT takes inputs below 2q, as the CPU's does", "[gpu][ntt]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(10, 13, 14, 16, 17);
  check_against_cpu(log_n, 5, 2, 7000 + static_cast<std::uint64_t>(log_n));
}

TEST_CASE("GPU NTT handles the extreme residues 0, q - 1 and 2q - 1", "[gpu][ntt]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(10, 14, 17);
  const std::size_t n = std::size_t{1} << log_n;
  INFO("N = 2^" << log_n);
  const auto tables = make_tables(n, 4);
  std::vector<std::uint32_t> input;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const std::uint32_t q = tables[i].modulus();
    const std::uint32_t values[] = {0, q - 1, 2 * q - 1, q};
    for (std::size_t j = 0; j < n; ++j) input.push_back(i == 0 ? values[j % 4] : values[i]);
  }
  const NttPlan plan(tables);
  for (const bool forward : {true, false}) {
    INFO((forward ? "forward" : "inverse"));
    CHECK(difference(gpu_transform(plan, input, forward, Stream{}), cpu_transform(input, tables, forward), n) == "");
  }
}

TEST_CASE("GPU NTT on a few sizes (the sanitizers' subset)", "[gpu][ntt][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(10, 13, 14, 17);
  check_against_cpu(log_n, 2, 1, 9000 + static_cast<std::uint64_t>(log_n));
}

TEST_CASE("GPU NTT transforms only the limbs it is given, with the tables it is given", "[gpu][ntt]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const std::size_t n = std::size_t{1} << 15;
  const auto tables = make_tables(n, 5);
  auto rng = cerium_test::make_rng(31);
  const auto input = random_limbs(rng, tables);
  const Stream stream = Stream::create();
  const NttPlan plan(tables, stream);
  DeviceBuffer buffer(input.size(), stream);

  SECTION("the first limbs of a buffer") {
    buffer.upload(input);
    plan.forward(buffer, 3);
    auto expected = cpu_transform({input.begin(), input.begin() + 3 * n}, tables, true);
    expected.insert(expected.end(), input.begin() + 3 * n, input.end());
    CHECK(difference(buffer.download(), expected, n) == "");
  }
  SECTION("a sub-basis inside a buffer, through the raw form") {
    // Limbs 1..3 are transformed with tables 2..4: their words must lie below those tables' 2q (the transform's
    // input contract), so reduce them into the primes they are transformed with.
    auto shifted = input;
    for (std::size_t limb = 1; limb <= 3; ++limb) {
      for (std::size_t j = 0; j < n; ++j) shifted[limb * n + j] %= tables[limb + 1].modulus();
    }
    buffer.upload(shifted);
    plan.inverse(buffer.data() + n, 2, 3, stream);  // limbs 1..3 of the buffer with tables 2..4
    stream.synchronize();
    std::vector<std::uint32_t> expected(shifted.begin(), shifted.begin() + n);
    const auto middle = cpu_transform({shifted.begin() + n, shifted.begin() + 4 * n}, tables, false, 2);
    expected.insert(expected.end(), middle.begin(), middle.end());
    expected.insert(expected.end(), input.begin() + 4 * n, input.end());
    CHECK(difference(buffer.download(), expected, n) == "");
  }
  SECTION("requests beyond the plan or the buffer are refused") {
    CHECK_THROWS_AS(plan.forward(buffer, 6), cerium::InvalidArgument);
    DeviceBuffer small(2 * n, stream);
    CHECK_THROWS_AS(plan.forward(small, 3), cerium::InvalidArgument);
    CHECK_THROWS_AS(plan.inverse(buffer.data(), 4, 2, stream), cerium::InvalidArgument);
  }
}

TEST_CASE("an NTT plan refuses tables it cannot run", "[gpu][ntt]") {
  // Checked before anything touches the device, so this runs without one too.
  const auto small = make_tables(512, 1);
  CHECK_THROWS_AS(NttPlan(small), cerium::InvalidArgument);
  const auto a = make_tables(1024, 1);
  const auto b = make_tables(2048, 1);
  const std::vector<NttTables> mixed{a[0], b[0]};
  CHECK_THROWS_AS(NttPlan(mixed), cerium::InvalidArgument);
  CHECK_THROWS_AS(NttPlan(std::vector<NttTables>{}), cerium::InvalidArgument);
}

TEST_CASE("device buffers upload, download, copy and move words", "[gpu][buffer]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const Stream stream = Stream::create();
  auto rng = cerium_test::make_rng(5);
  const auto words = cerium_test::random_residues(rng, 100'003, 0xffffffffu);
  DeviceBuffer buffer(words.size(), stream);
  REQUIRE(buffer.size() == words.size());
  REQUIRE(buffer.bytes() == 4 * words.size());
  CHECK(reinterpret_cast<std::uintptr_t>(buffer.data()) % 256 == 0);

  buffer.upload(words);
  CHECK(buffer.download() == words);

  SECTION("partial ranges") {
    const std::vector<std::uint32_t> patch{1, 2, 3, 4, 5};
    buffer.upload(patch, 1000);
    std::vector<std::uint32_t> back(7);
    buffer.download(back, 999);
    CHECK(back == std::vector<std::uint32_t>{words[999], 1, 2, 3, 4, 5, words[1005]});
    CHECK_THROWS_AS(buffer.upload(patch, words.size() - 2), cerium::InvalidArgument);
    CHECK_THROWS_AS(buffer.download(back, words.size()), cerium::InvalidArgument);
  }
  SECTION("device-to-device copy and fill") {
    DeviceBuffer copy(words.size() + 10, stream);
    copy.fill_bytes(0xAB);
    copy.copy_from(buffer);
    const auto back = copy.download();
    CHECK(std::equal(words.begin(), words.end(), back.begin()));
    CHECK(std::all_of(back.begin() + static_cast<std::ptrdiff_t>(words.size()), back.end(),
                      [](std::uint32_t w) { return w == 0xABABABABu; }));
    DeviceBuffer too_small(10, stream);
    CHECK_THROWS_AS(too_small.copy_from(buffer), cerium::InvalidArgument);
  }
  SECTION("moves transfer ownership") {
    const std::uint32_t* pointer = buffer.data();
    DeviceBuffer moved(std::move(buffer));
    CHECK(moved.data() == pointer);
    CHECK(buffer.empty());
    DeviceBuffer assigned(16, Stream{});
    assigned = std::move(moved);
    CHECK(assigned.data() == pointer);
    CHECK(assigned.download() == words);
  }
  SECTION("an empty buffer") {
    DeviceBuffer empty(0, stream);
    CHECK(empty.empty());
    CHECK(empty.download().empty());
  }
}

// Tagged [errors]: the sanitizers report the refused calls these tests provoke, so scripts/gpu-check.sh leaves
// them out of the sanitizer runs.
TEST_CASE("an impossible allocation throws OutOfMemoryError and leaves the device usable", "[gpu][oom][errors]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const Stream stream = Stream::create();
  const std::size_t n = 1 << 14;
  const auto tables = make_tables(n, 2);
  auto rng = cerium_test::make_rng(11);
  const auto input = random_limbs(rng, tables);
  DeviceBuffer kept(input.size(), stream);
  kept.upload(input);

  const std::size_t tebibyte_words = (std::size_t{1} << 40) / 4;
  std::string message;
  try {
    DeviceBuffer huge(tebibyte_words, stream);
  } catch (const cerium::OutOfMemoryError& e) {
    message = e.what();
  }
  INFO(message);
  REQUIRE_FALSE(message.empty());
  CHECK(message.find("1099511627776 bytes") != std::string::npos);
  CHECK(message.find("cudaMallocAsync") != std::string::npos);
  CHECK_THROWS_AS(DeviceBuffer(tebibyte_words, stream), cerium::DeviceError);  // OutOfMemoryError is one

  // Earlier buffers are intact and new work runs.
  CHECK(kept.download() == input);
  const NttPlan plan(tables, stream);
  DeviceBuffer fresh(input.size(), stream);
  fresh.upload(input);
  plan.forward(fresh, 2);
  CHECK(difference(fresh.download(), cpu_transform(input, tables, true), n) == "");
}

TEST_CASE("a device that does not exist is a DeviceError naming the call", "[gpu][device][errors]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  std::string message;
  try {
    (void)cerium::cuda::device_info(cerium::cuda::device_count());
  } catch (const cerium::DeviceError& e) {
    message = e.what();
  }
  INFO(message);
  CHECK(message.find("cudaGetDeviceProperties") != std::string::npos);
  CHECK(message.find("cudaErrorInvalidDevice") != std::string::npos);
  CHECK(message.find("device.cpp:") != std::string::npos);
}

TEST_CASE("the device is described and timed", "[gpu][device]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const auto info = cerium::cuda::device_info(0);
  WARN("device 0: " << info.name << ", compute " << info.compute_major << "." << info.compute_minor << ", "
                    << info.sm_count << " SMs, " << info.global_memory_bytes / (1u << 20) << " MiB");
  CHECK(!info.name.empty());
  CHECK(info.sm_count > 0);
  CHECK(info.global_memory_bytes > 0);

  const Stream stream = Stream::create();
  const auto tables = make_tables(1 << 16, 4);
  const NttPlan plan(tables, stream);
  DeviceBuffer buffer(4 << 16, stream);
  buffer.fill_bytes(0x11);
  cerium::cuda::EventTimer timer(stream);
  timer.start();
  plan.forward(buffer, 4);
  timer.stop();
  const double ms = timer.elapsed_ms();
  CHECK(ms > 0.0);
  CHECK(ms < 1000.0);
}
