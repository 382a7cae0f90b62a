#include "cerium/ring/rns_basis.hpp"

#include <fmt/format.h>

#include <cmath>

#include "cerium/core/check.hpp"
#include "cerium/math/primes.hpp"

namespace cerium::ring {
namespace {

void validate_degree(std::size_t n) {
  require<ParameterError>(n >= 2 && (n & (n - 1)) == 0 && n <= (std::size_t{1} << math::max_log_ring_degree),
                          "ring degree {} must be a power of two between 2 and 2^{}", n, math::max_log_ring_degree);
}

void validate_prime(std::uint32_t q, std::size_t n) {
  require<ParameterError>(q < (1u << 31), "modulus {} is not below 2^31: Cerium's residues need q < 2^31", q);
  require<ParameterError>(math::is_prime(q), "modulus {} is not prime", q);
  require<ParameterError>((q - 1) % (2 * n) == 0,
                          "prime {} is not 1 mod 2N = {}: it has no negacyclic NTT of degree {}", q, 2 * n, n);
}

}  // namespace

RnsBasis::RnsBasis(std::size_t ring_degree, std::span<const std::uint32_t> primes) : n_(ring_degree) {
  validate_degree(n_);
  require<ParameterError>(!primes.empty(), "an RNS basis needs at least one prime");
  primes_.reserve(primes.size());
  for (auto q : primes) {
    validate_prime(q, n_);
    primes_.push_back(std::make_shared<const RnsPrime>(q, n_));
  }
  validate_and_precompute();
}

RnsBasis::RnsBasis(std::size_t ring_degree, std::vector<std::shared_ptr<const RnsPrime>> primes)
    : n_(ring_degree), primes_(std::move(primes)) {
  validate_and_precompute();
}

// Distinctness, then Q_i^{-1} mod q_i: prod_{k != i} q_k mod q_i by O(L) products, one inversion each.
void RnsBasis::validate_and_precompute() {
  require<ParameterError>(!primes_.empty(), "an RNS basis needs at least one prime");
  values_.clear();
  for (const auto& p : primes_) values_.push_back(p->modulus.value);
  for (std::size_t i = 0; i < values_.size(); ++i) {
    for (std::size_t j = i + 1; j < values_.size(); ++j) {
      require<ParameterError>(values_[i] != values_[j], "prime {} appears twice in the basis (positions {} and {})",
                              values_[i], i, j);
    }
  }
  q_hat_inv_.clear();
  for (std::size_t i = 0; i < values_.size(); ++i) {
    const auto& m = primes_[i]->modulus;
    std::uint32_t q_hat = 1 % m.value;
    for (std::size_t k = 0; k < values_.size(); ++k) {
      if (k != i) q_hat = math::mul_mod(q_hat, static_cast<std::uint32_t>(values_[k] % m.value), m);
    }
    const auto inverse = static_cast<std::uint32_t>(math::inv_mod(q_hat, m.value));
    q_hat_inv_.emplace_back(inverse, m.value);
  }
}

std::optional<std::size_t> RnsBasis::index_of(std::uint32_t q) const {
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (values_[i] == q) return i;
  }
  return std::nullopt;
}

RnsBasis RnsBasis::sub_basis(std::size_t first, std::size_t count) const {
  require(count >= 1 && first <= size() && count <= size() - first,
          "sub-basis of primes [{}, {}) is empty or outside a basis of {} primes", first, first + count, size());
  return RnsBasis(n_, std::vector(primes_.begin() + static_cast<std::ptrdiff_t>(first),
                                  primes_.begin() + static_cast<std::ptrdiff_t>(first + count)));
}

RnsBasis RnsBasis::concat(const RnsBasis& other) const {
  require<MismatchError>(n_ == other.n_, "cannot join bases of ring degrees {} and {}", n_, other.n_);
  auto joined = primes_;
  joined.insert(joined.end(), other.primes_.begin(), other.primes_.end());
  return RnsBasis(n_, std::move(joined));
}

std::optional<RnsBasis> RnsBasis::without(const RnsBasis& other) const {
  std::vector<std::shared_ptr<const RnsPrime>> rest;
  for (const auto& p : primes_) {
    if (!other.contains(p->modulus.value)) rest.push_back(p);
  }
  if (rest.empty()) return std::nullopt;
  return RnsBasis(n_, std::move(rest));
}

// Prefix and suffix products give every prod_{k != i} q_k mod p in O(L).
std::vector<std::uint32_t> RnsBasis::q_hat_mod(const math::Modulus& p) const {
  const std::size_t l = size();
  std::vector<std::uint32_t> reduced(l), result(l);
  for (std::size_t i = 0; i < l; ++i) reduced[i] = static_cast<std::uint32_t>(values_[i] % p.value);
  std::uint32_t prefix = 1 % p.value;
  for (std::size_t i = 0; i < l; ++i) {
    result[i] = prefix;
    prefix = math::mul_mod(prefix, reduced[i], p);
  }
  std::uint32_t suffix = 1 % p.value;
  for (std::size_t i = l; i-- > 0;) {
    result[i] = math::mul_mod(result[i], suffix, p);
    suffix = math::mul_mod(suffix, reduced[i], p);
  }
  return result;
}

std::uint32_t RnsBasis::product_mod(const math::Modulus& p) const {
  std::uint32_t product = 1 % p.value;
  for (auto q : values_) product = math::mul_mod(product, static_cast<std::uint32_t>(q % p.value), p);
  return product;
}

double RnsBasis::log2_product() const {
  double bits = 0;
  for (auto q : values_) bits += std::log2(static_cast<double>(q));
  return bits;
}

std::string describe(const RnsBasis& basis) {
  constexpr std::size_t shown = 6;
  std::string text = fmt::format("N = {}, {} prime{} [", basis.ring_degree(), basis.size(), basis.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < basis.size(); ++i) {
    if (i == shown && basis.size() > shown + 1) {
      text += fmt::format(", ..., {}", basis.prime(basis.size() - 1));
      break;
    }
    text += fmt::format("{}{}", i == 0 ? "" : ", ", basis.prime(i));
  }
  return text + "]";
}

}  // namespace cerium::ring
