#include "cerium/ckks/keys.hpp"

#include <algorithm>
#include <string>

#include "cerium/core/check.hpp"
#include "cerium/math/sampler.hpp"
#include "cerium/ring/automorphism.hpp"
#include "cerium/rlwe/key_switch.hpp"

namespace cerium::ckks {
namespace {

std::string describe_poly(const ring::RnsPoly& poly) {
  if (poly.empty()) return "an empty polynomial";
  return fmt::format("{} in {} form", ring::describe(poly.basis()), ring::to_string(poly.form()));
}

// A key polynomial must lie over exactly `expected` in NTT form.
void require_key_poly(const ring::RnsPoly& poly, const ring::RnsBasis& expected, std::string_view what) {
  require<MismatchError>(!poly.empty() && poly.basis() == expected && poly.form() == ring::PolyForm::ntt,
                         "{} must be over {} in NTT form; got {}", what, ring::describe(expected),
                         describe_poly(poly));
}

void require_context(const ContextPtr& context, std::string_view what) {
  require<MismatchError>(context != nullptr, "{}: no context given", what);
}

// The rotation step r in [0, N/2) with 5^r = k mod 2N, if k is one (an error path: O(N) is fine).
std::optional<std::int64_t> rotation_step_of(std::uint32_t k, std::size_t n) {
  const std::uint64_t two_n = 2 * n;
  std::uint64_t power = 1;
  for (std::size_t r = 0; r < n / 2; ++r) {
    if (power == k) return static_cast<std::int64_t>(r);
    power = power * 5 % two_n;
  }
  return std::nullopt;
}

}  // namespace

// --- SecretKey ---

SecretKey::SecretKey(ContextPtr context, ring::RnsPoly s, std::vector<std::int8_t> coefficients)
    : context_(std::move(context)), s_(std::move(s)), coefficients_(std::move(coefficients)) {
  require_context(context_, "secret key");
  require_key_poly(s_, *context_->key_basis(), "the secret key");
  require<MismatchError>(coefficients_.size() == context_->ring_degree(),
                         "the secret key has {} coefficients for ring degree {}", coefficients_.size(),
                         context_->ring_degree());
  // One check at the end (no branch per secret value): every coefficient is -1, 0 or 1.
  unsigned out_of_range = 0;
  for (const std::int8_t c : coefficients_) out_of_range |= static_cast<unsigned>(static_cast<std::uint8_t>(c + 1) > 2);
  require<MismatchError>(out_of_range == 0, "secret key coefficients must be -1, 0 or 1");
}

ring::RnsPoly SecretKey::poly_over(const ring::RnsBasisPtr& basis) const {
  require<MismatchError>(!s_.empty(), "the secret key is empty (moved-from or default-constructed)");
  require<MismatchError>(basis != nullptr, "secret key: no basis given");
  ring::RnsPoly out(basis, ring::PolyOptions{.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
  for (std::size_t i = 0; i < basis->size(); ++i) {
    const auto position = s_.basis().index_of(basis->prime(i));
    require<MismatchError>(position.has_value(), "secret key over {}: prime {} of {} is not in the key basis",
                           ring::describe(s_.basis()), basis->prime(i), ring::describe(*basis));
    const auto source = s_.limb(*position);
    std::copy(source.begin(), source.end(), out.limb(i).begin());
  }
  return out;
}

SecretKey SecretKey::clone() const { return SecretKey(context_, s_.clone(), coefficients_); }

// --- PublicKey ---

PublicKey::PublicKey(ContextPtr context, ring::RnsPoly b, ring::RnsPoly a)
    : context_(std::move(context)), b_(std::move(b)), a_(std::move(a)) {
  require_context(context_, "public key");
  const auto& top = *context_->q_basis(context_->max_level());
  require_key_poly(b_, top, "the public key's b");
  require_key_poly(a_, top, "the public key's a");
}

PublicKey PublicKey::clone() const { return PublicKey(context_, b_.clone(), a_.clone()); }

// --- RelinearizationKey ---

RelinearizationKey::RelinearizationKey(ContextPtr context, SwitchingKey key)
    : RelinearizationKey(std::move(context), std::make_shared<const SwitchingKey>(std::move(key))) {}

RelinearizationKey::RelinearizationKey(ContextPtr context, std::shared_ptr<const SwitchingKey> key)
    : context_(std::move(context)), key_(std::move(key)) {
  require_context(context_, "relinearization key");
  require<MismatchError>(key_ != nullptr && key_->context() != nullptr, "relinearization key: the switching key is empty");
  rlwe::require_same_ladder(context_.get(), key_->context().get(), "relinearization key");
}

// --- Key-switching noise ---

double key_switch_noise_bound(const Context& context, int level) {
  const auto& config = context.parameters().config();
  const double secret_l1 = config.secret == SecretDistribution::hamming_weight
                               ? static_cast<double>(config.hamming_weight)
                               : static_cast<double>(context.ring_degree());
  return rlwe::key_switch_noise_bound(context, level, secret_l1);
}

math::Seed derive_seed(const math::Seed& master, std::uint64_t domain) {
  math::Prng prng(master, domain);
  math::Seed seed;
  for (auto& word : seed.words) word = prng.next_u32();
  return seed;
}

// --- GaloisKeys ---

void GaloisKeys::insert(std::uint32_t galois_element, SwitchingKey key) {
  insert(galois_element, std::make_shared<const SwitchingKey>(std::move(key)));
}

void GaloisKeys::insert(std::uint32_t galois_element, std::shared_ptr<const SwitchingKey> key) {
  require_context(context_, "Galois keys");
  require<MismatchError>(key != nullptr && key->context() != nullptr, "Galois keys: the switching key is empty");
  rlwe::require_same_ladder(context_.get(), key->context().get(), "Galois keys");
  const std::size_t two_n = 2 * context_->ring_degree();
  require(galois_element % 2 == 1 && galois_element < two_n, "Galois element {} must be odd and below 2N = {}",
          galois_element, two_n);
  keys_.insert_or_assign(galois_element, std::move(key));
}

const std::shared_ptr<const SwitchingKey>& GaloisKeys::shared_at(std::uint32_t galois_element,
                                                                 std::optional<std::int64_t> step) const {
  const auto found = keys_.find(galois_element);
  if (found != keys_.end()) return found->second;
  const std::size_t n = context_ ? context_->ring_degree() : 0;
  const std::string held = fmt::format("these Galois keys hold {} element(s)", keys_.size());
  if (n != 0 && galois_element == ring::conjugation_galois_element(n)) {
    throw MissingKeyError(fmt::format("no conjugation key (Galois element {}); generate it with "
                                      "KeyGenerator::galois_keys(steps, /*conjugation=*/true); {}",
                                      galois_element, held));
  }
  if (!step && n != 0) step = rotation_step_of(galois_element, n);
  if (step) {
    throw MissingKeyError(fmt::format("no rotation key for step {} (Galois element {}); generate it with "
                                      "KeyGenerator::galois_keys({{{}, ...}}); {}",
                                      *step, galois_element, *step, held));
  }
  throw MissingKeyError(fmt::format("no key for Galois element {}; generate it with KeyGenerator::galois_key({}); {}",
                                    galois_element, galois_element, held));
}

std::vector<std::uint32_t> GaloisKeys::galois_elements() const {
  std::vector<std::uint32_t> elements;
  elements.reserve(keys_.size());
  for (const auto& entry : keys_) elements.push_back(entry.first);
  return elements;
}

}  // namespace cerium::ckks
