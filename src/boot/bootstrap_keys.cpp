#include "cerium/boot/bootstrap_keys.hpp"

#include <utility>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/math/os_random.hpp"
#include "cerium/math/sampler.hpp"

namespace cerium::boot {

using namespace cerium::ckks;  // keys and parameters are ckks types
namespace {

// Streams of the bootstrapping seed: the ephemeral secret, then the two encapsulation keys' generators.
constexpr std::uint64_t ephemeral_secret_stream = 0;
constexpr std::uint64_t to_sparse_domain = 11;
constexpr std::uint64_t from_sparse_domain = 12;

std::size_t poly_bytes(const ring::RnsPoly& p) { return p.empty() ? 0 : p.limb_count() * p.n() * sizeof(std::uint32_t); }

SecretKey ephemeral_secret(const ContextPtr& context, const math::Seed& seed, int hamming_weight) {
  const std::size_t n = context->ring_degree();
  require<ParameterError>(hamming_weight >= 1 && static_cast<std::size_t>(hamming_weight) <= n,
                          "bootstrapping: ephemeral_hamming_weight = {} must be between 1 and N = {}", hamming_weight,
                          n);
  math::Prng prng(seed, ephemeral_secret_stream);
  std::vector<std::int8_t> coefficients(n);
  math::sample_hamming_weight(prng, coefficients, static_cast<std::size_t>(hamming_weight));
  const std::vector<std::int64_t> wide(coefficients.begin(), coefficients.end());
  auto poly = ring::RnsPoly::from_signed(context->key_basis(), wide, ring::PolyOptions{.form = ring::PolyForm::ntt});
  return SecretKey(context, std::move(poly), std::move(coefficients));
}

// Keeps what a key switch at level 0 reads: the digits of level 0, and in them the limbs of Q_0 and P. The other
// limbs of an RLWE sample under a sparse secret would weaken it (a large modulus); they become zero (a
// SwitchingKey always has the top level's digit count, so the unused digits stay, all zero).
SwitchingKey restrict_to_level_zero(const ContextPtr& context, const SwitchingKey& key) {
  const auto& params = context->parameters();
  const std::size_t q_limbs = params.limbs_at(0);
  const std::size_t q_top = params.q_primes().size();
  std::vector<std::array<ring::RnsPoly, 2>> digits;
  for (std::size_t d = 0; d < key.digit_count(); ++d) {
    ring::RnsPoly b = key.b(d).clone();
    ring::RnsPoly a = key.a(d);
    const bool used = d < context->digit_count(0);
    for (std::size_t i = used ? q_limbs : 0; i < (used ? q_top : b.limb_count()); ++i) {
      std::fill(b.limb(i).begin(), b.limb(i).end(), 0u);
      std::fill(a.limb(i).begin(), a.limb(i).end(), 0u);
    }
    digits.push_back({std::move(b), std::move(a)});
  }
  return SwitchingKey(context, std::move(digits), KeyStorage::expanded, std::nullopt, 0);
}

}  // namespace

std::size_t switching_key_bytes(const SwitchingKey& key) {
  std::size_t bytes = 0;
  for (std::size_t d = 0; d < key.digit_count(); ++d) {
    bytes += poly_bytes(key.b(d));
    if (const ring::RnsPoly* a = key.stored_a(d)) bytes += poly_bytes(*a);
  }
  return bytes;
}

std::size_t BootstrapKeys::memory_bytes() const {
  std::size_t bytes = 0;
  if (relinearization) bytes += switching_key_bytes(relinearization->key());
  if (galois) {
    for (const auto element : galois->galois_elements()) bytes += switching_key_bytes(galois->at(element));
  }
  if (to_sparse) bytes += switching_key_bytes(*to_sparse);
  if (from_sparse) bytes += switching_key_bytes(*from_sparse);
  return bytes;
}

BootstrapKeys generate_bootstrap_keys(const KeyGenerator& keygen, const BootstrapKeyRequest& request,
                                      ProgressCallback progress) {
  const ContextPtr& context = keygen.context();
  BootstrapKeys keys;
  if (request.relinearization_and_galois) {
    keys.relinearization = std::make_shared<const RelinearizationKey>(keygen.relinearization_key(request.storage));
    keys.galois = std::make_shared<const GaloisKeys>(
        keygen.galois_keys(request.rotation_steps, /*conjugation=*/true, request.storage, progress));
  }
  if (request.sparse_encapsulation) {
    ProgressReporter reporter(progress, "encapsulation keys", 2);
    const math::Seed seed = request.seed ? *request.seed : math::os_random_seed();
    SecretKey sparse = ephemeral_secret(context, seed, request.ephemeral_hamming_weight);
    // s -> s': a key under s', made by a generator holding s'.
    KeyGenerator sparse_generator(sparse.clone(), derive_seed(seed, to_sparse_domain));
    keys.to_sparse = restrict_to_level_zero(context, sparse_generator.switching_key(keygen.secret_key().poly()));
    reporter.advance();
    // s' -> s: a key under s.
    KeyGenerator dense_generator(keygen.secret_key().clone(), derive_seed(seed, from_sparse_domain));
    keys.from_sparse = dense_generator.switching_key(sparse.poly(), request.storage);
    reporter.advance();
  }
  return keys;
}

}  // namespace cerium::boot
