#include "cerium/ckks/encryptor.hpp"

#include <algorithm>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/math/os_random.hpp"
#include "cerium/math/sampler.hpp"
#include "cerium/rlwe/small_poly.hpp"

namespace cerium::ckks {
namespace {

using rlwe::gaussian_poly;
using rlwe::ternary_poly;

// Streams of the noise seed for encryption t: t 2^8 + j for its small values j = 0, 1, 2.
constexpr std::uint64_t encryption_stream(std::uint64_t t, std::uint64_t j) { return (t << 8) | j; }

// The first limbs of a key polynomial, over a prefix basis of its own.
ring::RnsPoly prefix_of(const ring::RnsPoly& x, const ring::RnsBasisPtr& prefix) {
  ring::RnsPoly out(prefix, ring::PolyOptions{.form = x.form(), .init = BufferInit::uninitialized});
  for (std::size_t i = 0; i < prefix->size(); ++i) {
    const auto source = x.limb(i);
    std::copy(source.begin(), source.end(), out.limb(i).begin());
  }
  return out;
}

double secret_l1_norm(const Context& context) {
  const auto& config = context.parameters().config();
  return config.secret == SecretDistribution::hamming_weight ? static_cast<double>(config.hamming_weight)
                                                              : static_cast<double>(context.ring_degree());
}

}  // namespace

Encryptor::Encryptor(ContextPtr context, const math::Seed& seed)
    : context_(std::move(context)),
      noise_seed_(derive_seed(seed, seed_domain::encryption_noise)),
      uniform_seed_(derive_seed(seed, seed_domain::encryption_uniform)),
      counter_(std::make_unique<std::atomic<std::uint64_t>>(0)) {
  require<MismatchError>(context_ != nullptr, "encryptor: the key has no context (moved-from or empty)");
}

Encryptor::Encryptor(const PublicKey& key) : Encryptor(key, math::os_random_seed()) {}

Encryptor::Encryptor(const PublicKey& key, const math::Seed& seed) : Encryptor(key.context(), seed) {
  public_key_.emplace(key.clone());
}

Encryptor::Encryptor(const SecretKey& key) : Encryptor(key, math::os_random_seed()) {}

Encryptor::Encryptor(const SecretKey& key, const math::Seed& seed) : Encryptor(key.context(), seed) {
  secret_key_.emplace(key.clone());
}

Ciphertext Encryptor::encrypt(const Plaintext& plaintext) const {
  require<MismatchError>(!plaintext.empty(), "encrypt: the plaintext is empty");
  require_same_context(context_, plaintext.context(), "encrypt");
  const int level = plaintext.level();
  const auto& basis = context_->q_basis(level);
  const std::uint64_t t = counter_->fetch_add(1);
  require(t < max_uniform_stream, "this encryptor has used up its 2^56 streams; create a new one");

  std::vector<ring::RnsPoly> parts;
  parts.reserve(2);
  std::optional<PolySeed> c1_seed;
  if (public_key_) {
    const ring::RnsPoly v = ternary_poly(basis, noise_seed_, encryption_stream(t, 0));
    ring::RnsPoly c0 = v * prefix_of(public_key_->b(), basis);
    c0 += gaussian_poly(basis, noise_seed_, encryption_stream(t, 1));
    c0 += plaintext.poly();
    ring::RnsPoly c1 = v * prefix_of(public_key_->a(), basis);
    c1 += gaussian_poly(basis, noise_seed_, encryption_stream(t, 2));
    parts.push_back(std::move(c0));
    parts.push_back(std::move(c1));
  } else {
    ring::RnsPoly a = expand_uniform(basis, uniform_seed_, t);
    ring::RnsPoly c0 = gaussian_poly(basis, noise_seed_, encryption_stream(t, 0));
    c0 -= a * secret_key_->poly_over(basis);
    c0 += plaintext.poly();
    parts.push_back(std::move(c0));
    parts.push_back(std::move(a));
    c1_seed = PolySeed{uniform_seed_, t};
  }
  Ciphertext ciphertext(context_, std::move(parts), level, plaintext.scale(), plaintext.slots());
  ciphertext.set_c1_seed(c1_seed);
  return ciphertext;
}

double fresh_noise_bound_secret_key(const Context&) { return math::gaussian_tail_bound; }

double fresh_noise_bound_public_key(const Context& context) {
  const double n = static_cast<double>(context.ring_degree());
  return math::gaussian_tail_bound * (1.0 + n + secret_l1_norm(context));
}

}  // namespace cerium::ckks
