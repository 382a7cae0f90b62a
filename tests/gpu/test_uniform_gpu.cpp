// Seeded keys' uniform halves expanded on the device (CudaBackend::expand_uniform, kernels/uniform_expansion.cu)
// give exactly the host's words (ckks::expand_uniform): for primes that reject almost no ChaCha20 word and for
// primes just above 2^30, which reject about a quarter of them.
#include <cstdint>
#include <memory>
#include <vector>

#include "cerium/backend/cuda_backend.hpp"
#include "cerium/ckks/backend_keys.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/ckks/parameters.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/math/primes.hpp"
#include "cerium/ring/rns_basis.hpp"
#include "gpu_test_support.hpp"
#include "support/random.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

namespace {

using namespace evaluator_test;
using cerium::backend::CudaBackend;

// count NTT primes for degree n just above 2^bits (the first ones of the form k 2n + 1 there).
std::vector<std::uint32_t> primes_above(int bits, std::size_t count, std::size_t n) {
  std::vector<std::uint32_t> out;
  for (std::uint64_t k = (std::uint64_t{1} << bits) / (2 * n) + 1; out.size() < count; ++k) {
    if (cerium::math::is_prime(k * 2 * n + 1)) out.push_back(static_cast<std::uint32_t>(k * 2 * n + 1));
  }
  return out;
}

cerium::math::Seed random_seed(std::mt19937_64& rng) {
  cerium::math::Seed seed;
  for (auto& w : seed.words) w = static_cast<std::uint32_t>(rng());
  return seed;
}

}  // namespace

TEST_CASE("Uniform expansion on the device equals the host's", "[gpu][keys][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto rng = cerium_test::make_rng();
  for (const int log_n : {12, 16}) {
    const auto context = Context::create(toy(log_n, 2, 1, 1));
    const CudaBackend gpu(context);
    const std::size_t n = context->ring_degree();
    std::vector<std::uint32_t> p = primes_above(30, 3, n);  // about 25% of words rejected
    for (const int bits : {24, 28, 31}) {
      const auto more = cerium::math::generate_ntt_primes({.bits = bits, .count = 2, .ring_degree = n});
      p.insert(p.end(), more.begin(), more.end());
    }
    const auto basis = ring::make_basis(n, p);
    for (const std::uint64_t stream : {std::uint64_t{0}, std::uint64_t{12345}, max_uniform_stream - 1}) {
      INFO("N = 2^" << log_n << ", stream " << stream);
      const auto seed = random_seed(rng);
      CHECK(gpu.download(gpu.expand_uniform(basis, seed, stream)) == expand_uniform(basis, seed, stream));
    }
    CHECK_THROWS_AS(gpu.expand_uniform(basis, random_seed(rng), max_uniform_stream), InvalidArgument);
    const auto other_degree =
        ring::make_basis(n / 2, cerium::math::generate_ntt_primes({.bits = 28, .count = 1, .ring_degree = n / 2}));
    CHECK_THROWS_AS(gpu.expand_uniform(other_degree, random_seed(rng), 0), MismatchError);
  }
}

TEST_CASE("A seeded key uploads with its uniform half expanded on the device", "[gpu][keys][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const auto context = Context::create(toy(13, 3, 2, 3));
  const CudaBackend gpu(context);
  KeyGenerator keygen(context);
  const RelinearizationKey seeded = keygen.relinearization_key(KeyStorage::seeded);
  const SwitchingKey& key = seeded.key();
  REQUIRE(key.storage() == KeyStorage::seeded);
  const SwitchingKey uploaded = gpu.upload(key);
  CHECK(uploaded.storage() == KeyStorage::expanded);
  REQUIRE(uploaded.digit_count() == key.digit_count());
  for (std::size_t d = 0; d < key.digit_count(); ++d) {
    INFO("digit " << d);
    REQUIRE(uploaded.stored_a(d) != nullptr);
    CHECK(gpu.download(*uploaded.stored_a(d)) == key.a(d));
    CHECK(gpu.download(uploaded.b(d)) == key.b(d));
  }
}

// Keys made on the device from the generator's seeds (ckks/backend_keys.hpp) against the host generator's: the
// same words, at N = 2^12 and at the bootstrapping preset (N = 2^16, dnum 6, two-prime levels).
TEST_CASE("Keys made on the device are the host generator's words", "[gpu][keys][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto rng = cerium_test::make_rng(77);
  for (const auto& config : {toy(12, 4, 1, 3), toy(13, 3, 2, 2), cerium::ckks::presets::bootstrappable_n16()}) {
    const auto context = Context::create(config);
    INFO("N = " << context->ring_degree() << ", test seed " << cerium_test::test_seed());
    const CudaBackend gpu(context);
    const KeyGenerator keygen(context, random_seed(rng));
    const auto same = [&](const SwitchingKey& made, const SwitchingKey& host) {
      REQUIRE(made.digit_count() == host.digit_count());
      for (std::size_t d = 0; d < host.digit_count(); ++d) {
        INFO("digit " << d);
        REQUIRE(made.stored_a(d) != nullptr);
        CHECK(made.b(d).shards()[0].device() == gpu.device());
        CHECK(gpu.download(*made.stored_a(d)) == host.a(d));
        CHECK(gpu.download(made.b(d)) == host.b(d));
      }
    };
    same(relinearization_key_on(gpu, keygen).key(), keygen.relinearization_key(KeyStorage::seeded).key());
    const std::vector<std::int64_t> steps{1, -7, static_cast<std::int64_t>(rng() % 1000) + 2};
    const GaloisKeys made = galois_keys_on(gpu, keygen, steps, /*conjugation=*/true);
    const GaloisKeys host = keygen.galois_keys(steps, true, KeyStorage::seeded);
    REQUIRE(made.galois_elements() == host.galois_elements());
    for (const std::uint32_t element : host.galois_elements()) {
      INFO("Galois element " << element);
      same(made.at(element), host.at(element));
    }
  }
}
