#include "cerium/ckks/key_generator.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/core/parallel.hpp"
#include "cerium/math/os_random.hpp"
#include "cerium/math/sampler.hpp"
#include "cerium/rlwe/small_poly.hpp"

namespace cerium::ckks {
namespace {

using rlwe::gaussian_poly;
using rlwe::small_poly;

// Stream plan (see the header): stream 0 of the master seed, then 2^8 streams per key identity (>= 2^8).
constexpr std::uint64_t secret_stream = 0;
constexpr std::uint64_t public_key_id = 1;
constexpr std::uint64_t relinearization_key_id = 2;
constexpr std::uint64_t galois_key_id_base = std::uint64_t{1} << 20;
constexpr std::uint64_t general_key_id_base = std::uint64_t{1} << 32;
constexpr std::uint64_t key_stream(std::uint64_t id) { return id << 8; }

SecretKey sample_secret(const ContextPtr& context, const math::Seed& master) {
  const auto& config = context->parameters().config();
  math::Prng prng(master, secret_stream);
  std::vector<std::int8_t> coefficients(context->ring_degree());
  if (config.secret == SecretDistribution::hamming_weight) {
    math::sample_hamming_weight(prng, coefficients, static_cast<std::size_t>(config.hamming_weight));
  } else {
    math::sample_ternary(prng, coefficients);
  }
  auto s = small_poly(context->key_basis(), std::span<const std::int8_t>(coefficients));
  return SecretKey(context, std::move(s), std::move(coefficients));
}

}  // namespace

KeyGenerator::KeyGenerator(ContextPtr context) : KeyGenerator(std::move(context), math::os_random_seed()) {}

KeyGenerator::KeyGenerator(ContextPtr context, const math::Seed& seed)
    : context_(std::move(context)), master_seed_(seed), uniform_seed_(derive_seed(seed, seed_domain::key_uniform)) {
  require<MismatchError>(context_ != nullptr, "key generator: no context given");
  secret_ = sample_secret(context_, master_seed_);
}

// Members are initialized in declaration order: the context is read before the key is moved.
KeyGenerator::KeyGenerator(SecretKey secret_key, std::optional<math::Seed> seed)
    : context_(secret_key.context()),
      master_seed_(seed ? *seed : math::os_random_seed()),
      uniform_seed_(derive_seed(master_seed_, seed_domain::key_uniform)),
      secret_(std::move(secret_key)) {
  require<MismatchError>(context_ != nullptr, "key generator: the secret key has no context (moved-from or empty)");
}

PublicKey KeyGenerator::public_key() const {
  const auto& q_top = context_->q_basis(context_->max_level());
  const std::uint64_t stream = key_stream(public_key_id);
  ring::RnsPoly a = expand_uniform(q_top, uniform_seed_, stream);
  ring::RnsPoly b = gaussian_poly(q_top, master_seed_, stream);
  b -= a * secret_.poly_over(q_top);
  return PublicKey(context_, std::move(b), std::move(a));
}

rlwe::SwitchingKeyDraw KeyGenerator::draw(std::uint64_t id, KeyStorage storage) const {
  return {.uniform = uniform_seed_, .noise = master_seed_, .base_stream = key_stream(id), .storage = storage};
}

SwitchingKey KeyGenerator::make_switching_key(const ring::RnsPoly& from_secret, std::uint64_t id,
                                              KeyStorage storage) const {
  return rlwe::make_switching_key(context_, secret_.poly(), from_secret, draw(id, storage));
}

rlwe::SwitchingKeyDraw KeyGenerator::relinearization_draw(KeyStorage storage) const {
  return draw(relinearization_key_id, storage);
}

rlwe::SwitchingKeyDraw KeyGenerator::galois_draw(std::uint32_t galois_element, KeyStorage storage) const {
  const std::size_t two_n = 2 * context_->ring_degree();
  require(galois_element % 2 == 1 && galois_element < two_n, "Galois element {} must be odd and below 2N = {}",
          galois_element, two_n);
  return draw(galois_key_id_base + galois_element, storage);
}

RelinearizationKey KeyGenerator::relinearization_key(KeyStorage storage) const {
  const ring::RnsPoly& s = secret_.poly();
  return RelinearizationKey(context_, make_switching_key(s * s, relinearization_key_id, storage));
}

SwitchingKey KeyGenerator::galois_key(std::uint32_t galois_element, KeyStorage storage) const {
  const rlwe::SwitchingKeyDraw key_draw = galois_draw(galois_element, storage);  // checks the element
  const ring::RnsPoly rotated = context_->automorphism(galois_element).apply(secret_.poly());
  return rlwe::make_switching_key(context_, secret_.poly(), rotated, key_draw);
}

std::vector<std::uint32_t> KeyGenerator::galois_elements(std::span<const std::int64_t> rotation_steps,
                                                         bool conjugation, std::size_t ring_degree) {
  std::set<std::uint32_t> elements;
  for (const std::int64_t step : rotation_steps) elements.insert(ring::rotation_galois_element(step, ring_degree));
  elements.erase(1);  // the identity
  if (conjugation) elements.insert(ring::conjugation_galois_element(ring_degree));
  return {elements.begin(), elements.end()};
}

GaloisKeys KeyGenerator::galois_keys(std::span<const std::int64_t> rotation_steps, bool conjugation,
                                     KeyStorage storage, ProgressCallback progress) const {
  // Each key comes from its own seed streams (deterministic per Galois element), so the keys are made on all
  // host cores, a batch at a time, and come out the same words in the same order as one at a time.
  const std::vector<std::uint32_t> order = galois_elements(rotation_steps, conjugation, context_->ring_degree());
  const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
  GaloisKeys keys(context_);
  ProgressReporter reporter(std::move(progress), "galois keys", order.size());
  for (std::size_t first = 0; first < order.size(); first += threads) {
    const std::size_t count = std::min(threads, order.size() - first);
    std::vector<std::optional<SwitchingKey>> made(count);
    std::vector<std::exception_ptr> failures(count);
    const auto make = [&](std::size_t i) {
      try {
        made[i] = galois_key(order[first + i], storage);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    };
    std::vector<std::thread> pool;
    for (std::size_t i = 1; i < count; ++i) {
      pool.emplace_back([&make, i] {
        use_one_cpu_thread_here();  // the pool is the parallelism: no OpenMP team per key
        make(i);
      });
    }
    make(0);
    for (std::thread& t : pool) t.join();
    for (std::size_t i = 0; i < count; ++i) {
      if (failures[i]) std::rethrow_exception(failures[i]);
      keys.insert(order[first + i], std::move(*made[i]));
      reporter.advance();
    }
  }
  return keys;
}

SwitchingKey KeyGenerator::switching_key(const ring::RnsPoly& from_secret, KeyStorage storage) {
  return make_switching_key(from_secret, general_key_id_base + general_keys_++, storage);
}

}  // namespace cerium::ckks
