// Keys made through a backend's operations (ckks/backend_keys.hpp) against the host generator's: the same words
// for every toy parameter set (dnum 1..3, one- and two-prime levels, a sparse secret), from random seeds. The
// CPU backend runs the path the CUDA backend runs (tests/gpu/test_uniform_gpu.cpp checks it there).

#include <cstdint>
#include <vector>

#include "cerium/backend/cpu_backend.hpp"
#include "cerium/ckks/backend_keys.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/core/error.hpp"
#include "scheme_test_support.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;
using namespace cerium::ckks;
using namespace scheme_test;

namespace {

math::Seed random_seed(std::mt19937_64& rng) {
  math::Seed seed;
  for (auto& w : seed.words) w = static_cast<std::uint32_t>(rng());
  return seed;
}

void check_same_words(const SwitchingKey& made, const SwitchingKey& host) {
  REQUIRE(made.digit_count() == host.digit_count());
  CHECK(made.storage() == KeyStorage::expanded);
  for (std::size_t d = 0; d < host.digit_count(); ++d) {
    INFO("digit " << d);
    CHECK(made.b(d) == host.b(d));
    CHECK(made.a(d) == host.a(d));
  }
}

}  // namespace

TEST_CASE("keys made through the backend's operations are the host generator's words", "[keys][backend]") {
  auto rng = cerium_test::make_rng(71);
  const int index = GENERATE(0, 1, 2, 3, 4);
  INFO("toy parameters " << index << ", test seed " << cerium_test::test_seed());
  const auto context = Context::create(toy_config(index));
  const KeyGenerator keygen(context, random_seed(rng));
  const backend::CpuBackend cpu;

  check_same_words(relinearization_key_on(cpu, keygen).key(), keygen.relinearization_key().key());

  const std::int64_t half = static_cast<std::int64_t>(context->ring_degree() / 2);
  const std::vector<std::int64_t> steps{1, -3, 5, 0, half + 1, static_cast<std::int64_t>(rng() % 100) + 2};
  const GaloisKeys made = galois_keys_on(cpu, keygen, steps, /*conjugation=*/true);
  const GaloisKeys host = keygen.galois_keys(steps, true, KeyStorage::seeded);  // seeded: the same a_d expanded
  REQUIRE(made.galois_elements() == host.galois_elements());
  CHECK(made.galois_elements() == KeyGenerator::galois_elements(steps, true, context->ring_degree()));
  for (const std::uint32_t element : host.galois_elements()) {
    INFO("Galois element " << element);
    check_same_words(made.at(element), host.at(element));
  }
}

TEST_CASE("keys made through a backend: no steps, identity only, and progress", "[keys][backend]") {
  const auto context = Context::create(toy_config(1));
  const KeyGenerator keygen(context, seed_of(3));
  const backend::CpuBackend cpu;
  std::vector<std::uint64_t> reported;
  const GaloisKeys none = galois_keys_on(cpu, keygen, std::vector<std::int64_t>{0}, false,
                                         [&](const ProgressEvent& e) { reported.push_back(e.done); });
  CHECK(none.galois_elements().empty());
  CHECK(reported == std::vector<std::uint64_t>{0});
  reported.clear();
  const GaloisKeys two = galois_keys_on(cpu, keygen, std::vector<std::int64_t>{1, 2}, false,
                                        [&](const ProgressEvent& e) { reported.push_back(e.done); });
  CHECK(two.galois_elements().size() == 2);
  CHECK(reported == std::vector<std::uint64_t>{0, 1, 2});
  // A Galois element the ring does not have is refused with its bound.
  CHECK_THROWS_AS(keygen.galois_draw(2), InvalidArgument);
  CHECK_THROWS_AS(keygen.galois_draw(static_cast<std::uint32_t>(2 * context->ring_degree() + 1)), InvalidArgument);
}
