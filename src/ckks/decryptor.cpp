#include "cerium/ckks/decryptor.hpp"

#include <cmath>
#include <numbers>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/core/log.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/math/os_random.hpp"
#include "cerium/math/sampler.hpp"

namespace cerium::ckks {
namespace {

// One rounded-Gaussian flood value per coefficient (see the header for why two rounded terms).
void sample_flood(math::Prng& prng, double sigma, std::span<std::int64_t> out) {
  const double sigma_fine = std::ldexp(sigma, -24);
  const double sigma_main = std::sqrt(sigma * sigma - sigma_fine * sigma_fine);
  for (auto& x : out) {
    const double u1 = (static_cast<double>(prng.next_u64() >> 11) + 0.5) * 0x1p-53;  // (0, 1)
    const double u2 = static_cast<double>(prng.next_u64() >> 11) * 0x1p-53;          // [0, 1)
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    x = std::llround(sigma_main * radius * std::cos(angle)) + std::llround(sigma_fine * radius * std::sin(angle));
  }
}

// x mod q for any int64 x, without a branch on x (the flood is secret).
std::uint32_t residue(std::int64_t x, const math::Modulus& m) {
  const auto bits = static_cast<std::uint64_t>(x);
  const std::uint64_t sign = 0 - (bits >> 63);
  const std::uint32_t r = math::barrett_reduce((bits ^ sign) - sign, m);
  const auto mask = static_cast<std::uint32_t>(sign);
  return (r & ~mask) | (math::neg_mod(r, m.value) & mask);
}

}  // namespace

double flooding_sigma(const NoiseFlooding& flooding) {
  require(std::isfinite(flooding.noise_bound) && flooding.noise_bound > 0,
          "noise flooding needs a worst-case noise bound B > 0, got {}", flooding.noise_bound);
  require(flooding.statistical_security >= 1 && flooding.statistical_security <= 128,
          "statistical security of {} bits is outside 1 .. 128", flooding.statistical_security);
  require(flooding.query_budget >= 1, "the query budget of noise flooding must be at least 1");
  return std::exp2(flooding.statistical_security / 2.0) * std::sqrt(static_cast<double>(flooding.query_budget)) *
         flooding.noise_bound;
}

Decryptor::Decryptor(const SecretKey& key) : Decryptor(key, math::os_random_seed()) {}

Decryptor::Decryptor(const SecretKey& key, const math::Seed& flood_seed)
    : key_(key.clone()),
      flood_seed_(derive_seed(flood_seed, seed_domain::decryption_flood)),
      counter_(std::make_unique<std::atomic<std::uint64_t>>(0)) {}

Plaintext Decryptor::decrypt(const Ciphertext& ciphertext) const {
  require<MismatchError>(!ciphertext.empty(), "decrypt: the ciphertext is empty");
  require_same_context(key_.context(), ciphertext.context(), "decrypt");
  require(ciphertext.size() == 2 || ciphertext.size() == 3, "decrypt: a ciphertext has 2 or 3 parts, not {}",
          ciphertext.size());
  const int level = ciphertext.level();
  const ring::RnsPoly s = key_.poly_over(key_.context()->q_basis(level));
  ring::RnsPoly m = ciphertext.part(1) * s;
  m += ciphertext.part(0);
  if (ciphertext.size() == 3) {
    ring::RnsPoly c2_s2 = ciphertext.part(2) * s;
    c2_s2 *= s;
    m += c2_s2;
  }
  return Plaintext(key_.context(), std::move(m), level, ciphertext.scale(), ciphertext.slots());
}

Plaintext Decryptor::decrypt_public(const Ciphertext& ciphertext, const NoiseFlooding& flooding) const {
  const double sigma = flooding_sigma(flooding);
  require(sigma < 0x1p58, "a flood of standard deviation 2^{:.1f} is beyond 64-bit samples; lower the bound, "
          "the queries or the statistical security", std::log2(sigma));
  Plaintext plaintext = decrypt(ciphertext);
  const auto& basis = plaintext.poly().basis();
  const double needed = std::log2(9.0 * sigma + flooding.noise_bound) + 1.0;
  require<LevelError>(needed < basis.log2_product(),
                      "flooding noise of standard deviation 2^{:.1f} needs about {:.1f} bits of modulus, and level {} "
                      "has {:.1f}: decrypt at a higher level, or lower the query budget or statistical security",
                      std::log2(sigma), needed, ciphertext.level(), basis.log2_product());

  const std::uint64_t call = counter_->fetch_add(1);
  if (call + 1 > flooding.query_budget) {
    log(LogLevel::warn, "public decryption {} exceeds the flooding query budget of {}: the IND-CPA-D guarantee no "
        "longer covers all of them", call + 1, flooding.query_budget);
  }
  math::Prng prng(flood_seed_, call);
  std::vector<std::int64_t> flood(basis.ring_degree());
  sample_flood(prng, sigma, flood);

  ring::RnsPoly& m = plaintext.poly();
  m.to_coeff();
  for (std::size_t i = 0; i < m.limb_count(); ++i) {
    const math::Modulus& modulus = basis.modulus(i);
    auto limb = m.limb(i);
    for (std::size_t k = 0; k < limb.size(); ++k) {
      limb[k] = math::add_mod(limb[k], residue(flood[k], modulus), modulus.value);
    }
  }
  m.to_ntt();
  return plaintext;
}

}  // namespace cerium::ckks
