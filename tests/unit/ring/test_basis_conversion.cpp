#include <gmpxx.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "ring_test_support.hpp"
#include "support/catch.hpp"

using namespace cerium;
using namespace cerium::ring;
using ring_test::CrtReference;

namespace {

std::vector<std::uint32_t> primes_of(const RnsBasis& b) { return {b.primes().begin(), b.primes().end()}; }

// The u in [0, bound) with expected(u) mod p_j == actual[j][k] for every j, if there is one.
template <class Expected, class Limbs>
std::optional<std::size_t> find_offset(std::size_t bound, const RnsBasis& basis, const Limbs& actual, std::size_t k,
                                       Expected&& expected) {
  for (std::size_t u = 0; u < bound; ++u) {
    const mpz_class value = expected(u);
    bool all = true;
    for (std::size_t j = 0; all && j < basis.size(); ++j) all = ring_test::mod(value, basis.prime(j)) == actual[j][k];
    if (all) return u;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("fast basis conversion gives x + uQ with one u < L for every target prime", "[ring][conversion]") {
  const auto log_n = GENERATE(4, 8, 12);
  const auto from_count = GENERATE(1, 2, 3, 5, 8);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n * 10 + from_count));
  INFO("N = " << n << ", L = " << from_count << ", seed = " << cerium_test::test_seed());
  const auto from = ring_test::random_basis(n, static_cast<std::size_t>(from_count), rng);
  const auto to = ring_test::random_basis(n, 6, rng, primes_of(*from));
  const BasisConverter converter(from, to);
  const auto x = ring_test::random_poly(from, rng);
  const RnsPoly y = converter.convert(x);
  REQUIRE(y.basis() == *to);
  const CrtReference crt(from->primes());
  const auto in = x.limbs();
  const auto out = y.limbs();
  std::size_t max_u = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const mpz_class value = crt.reconstruct(in, k);
    const auto u = find_offset(from->size(), *to, out, k, [&](std::size_t u) -> mpz_class { return value + u * crt.product(); });
    REQUIRE(u.has_value());
    max_u = std::max(max_u, *u);
  }
  if (from_count == 1) CHECK(max_u == 0);  // one prime converts exactly

  // Block-wise use of the span interface gives the same words.
  RnsPoly z(to);
  const std::size_t half = n / 2;
  std::vector<std::span<const std::uint32_t>> in_first, in_second;
  std::vector<std::span<std::uint32_t>> out_first, out_second;
  for (auto limb : in) {
    in_first.push_back(limb.first(half));
    in_second.push_back(limb.subspan(half));
  }
  for (auto limb : z.limbs()) {
    out_first.push_back(limb.first(half));
    out_second.push_back(limb.subspan(half));
  }
  converter.convert(in_first, out_first);
  converter.convert(in_second, out_second);
  CHECK(z == y);

  // NTT form in, NTT form out, same values.
  auto x_ntt = x.clone();
  x_ntt.to_ntt();
  auto y_ntt = converter.convert(x_ntt);
  REQUIRE(y_ntt.form() == PolyForm::ntt);
  y_ntt.to_coeff();
  CHECK(y_ntt == y);
}

TEST_CASE("ModUp copies the digit and converts it to every other prime", "[ring][conversion][modup]") {
  const auto log_n = GENERATE(4, 10, 12);
  const auto alpha = GENERATE(1, 2, 3);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n * 7 + alpha));
  INFO("N = " << n << ", alpha = " << alpha << ", seed = " << cerium_test::test_seed());
  const std::size_t digits = 3;
  const auto q = ring_test::random_basis(n, digits * static_cast<std::size_t>(alpha), rng);
  const auto p = ring_test::random_basis(n, static_cast<std::size_t>(alpha), rng, primes_of(*q));
  const auto qp = make_basis(q->concat(*p));
  const auto x = ring_test::random_poly(q, rng);  // all of Q_l; ModUp picks the digit's limbs

  for (std::size_t d = 0; d < digits; ++d) {
    const auto digit = make_basis(q->sub_basis(d * static_cast<std::size_t>(alpha), static_cast<std::size_t>(alpha)));
    const ModUp mod_up_op(digit, qp);
    const auto y = mod_up_op.apply(x);
    REQUIRE(y.basis() == *qp);
    const CrtReference crt(digit->primes());
    std::vector<std::span<const std::uint32_t>> digit_limbs;
    for (std::size_t i = 0; i < digit->size(); ++i) digit_limbs.push_back(x.limb(d * static_cast<std::size_t>(alpha) + i));
    for (std::size_t i = 0; i < digit->size(); ++i) {
      const auto position = *qp->index_of(digit->prime(i));
      REQUIRE(std::equal(digit_limbs[i].begin(), digit_limbs[i].end(), y.limb(position).begin()));
    }
    const auto y_limbs = y.limbs();
    for (std::size_t k = 0; k < n; ++k) {
      const mpz_class value = crt.reconstruct(digit_limbs, k);
      const auto u =
          find_offset(digit->size(), *qp, y_limbs, k, [&](std::size_t u) -> mpz_class { return value + u * crt.product(); });
      REQUIRE(u.has_value());
    }
    // NTT form: equals the NTT of the coefficient-form result.
    auto x_ntt = x.clone();
    x_ntt.to_ntt();
    auto y_ntt = mod_up(x_ntt, digit, qp);
    REQUIRE(y_ntt.form() == PolyForm::ntt);
    y_ntt.to_coeff();
    CHECK(y_ntt == y);
  }
  REQUIRE_THROWS_AS(ModUp(p, q), MismatchError);
}

TEST_CASE("ModDown divides by P with error u - k, u < |P|, and the chosen rounding", "[ring][conversion][moddown]") {
  const auto log_n = GENERATE(4, 8, 12);
  const auto kept_count = GENERATE(1, 3, 6);
  const auto p_count = GENERATE(1, 2, 4);
  const auto rounding = GENERATE(Rounding::nearest, Rounding::floor);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n * 1000 + kept_count * 100 + p_count * 10) +
                                   static_cast<std::uint64_t>(rounding));
  INFO("N = " << n << ", |Q| = " << kept_count << ", |P| = " << p_count << ", nearest = "
              << (rounding == Rounding::nearest) << ", seed = " << cerium_test::test_seed());
  const auto q = ring_test::random_basis(n, static_cast<std::size_t>(kept_count), rng);
  const auto p = ring_test::random_basis(n, static_cast<std::size_t>(p_count), rng, primes_of(*q));
  const auto qp = make_basis(q->concat(*p));
  const auto x = ring_test::random_poly(qp, rng);
  const ModDown mod_down_op(qp, q, rounding);
  const auto y = mod_down_op.apply(x);
  REQUIRE(y.basis() == *q);

  const CrtReference crt(qp->primes());
  const CrtReference crt_p(p->primes());
  const mpz_class big_p = crt_p.product();
  const bool nearest = rounding == Rounding::nearest;
  const mpz_class h = nearest ? mpz_class((big_p - 1) / 2) : mpz_class(0);
  // Nearest rounding adds back k = floor((|P| - 1) / 2), the overflow's mean rounded down: the error u - k is
  // centered (key-switching noise without the mean that would multiply the secret).
  const long centering = nearest ? (p_count - 1) / 2 : 0;
  const auto x_limbs = x.limbs();
  const auto y_limbs = y.limbs();
  std::size_t exact = 0;
  double error_sum = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const mpz_class divided = ring_test::floor_div(crt.reconstruct(x_limbs, k) + h, big_p) + centering;
    const auto u = find_offset(p->size(), *q, y_limbs, k, [&](std::size_t u) -> mpz_class { return mpz_class(divided - u); });
    REQUIRE(u.has_value());
    exact += *u == 0;
    error_sum += static_cast<double>(*u) - static_cast<double>(centering);
  }
  if (p_count == 1) CHECK(exact == n);
  // The mean error: (|P| - 1) / 2 for floor; within 1/2 of 0 for nearest (over 256 or 4,096 coefficients).
  const double mean_error = error_sum / static_cast<double>(n);
  if (nearest && log_n >= 8) CHECK(std::abs(mean_error) < 0.6);

  // In place through the span interface: out limb i is the input limb of kept prime i.
  auto z = x.clone();
  auto z_limbs = z.limbs();
  mod_down_op.apply(std::as_const(z).limbs(), std::span(z_limbs).first(q->size()));
  z.drop_to(q);
  CHECK(z == y);

  // NTT form.
  auto x_ntt = x.clone();
  x_ntt.to_ntt();
  auto y_ntt = mod_down(x_ntt, q, rounding);
  REQUIRE(y_ntt.form() == PolyForm::ntt);
  y_ntt.to_coeff();
  CHECK(y_ntt == y);
}

TEST_CASE("ModDown keeps primes at any positions of the full basis", "[ring][conversion][moddown]") {
  const std::size_t n = 256;
  auto rng = cerium_test::make_rng(404);
  INFO("seed = " << cerium_test::test_seed());
  const auto full = ring_test::random_basis(n, 6, rng);
  const std::vector<std::uint32_t> kept_primes = {full->prime(4), full->prime(1), full->prime(2)};
  const auto kept = make_basis(n, kept_primes);
  const auto x = ring_test::random_poly(full, rng);
  const auto y = ModDown(full, kept, Rounding::nearest).apply(x);
  const CrtReference crt(full->primes());
  const mpz_class big_p = mpz_class(full->prime(0)) * full->prime(3) * full->prime(5);
  const auto x_limbs = x.limbs();
  const auto y_limbs = y.limbs();
  for (std::size_t k = 0; k < n; ++k) {
    // Three dropped primes: ModDown adds back k = 1 (see above).
    const mpz_class divided = ring_test::floor_div(crt.reconstruct(x_limbs, k) + (big_p - 1) / 2, big_p) + 1;
    REQUIRE(find_offset(3, *kept, y_limbs, k, [&](std::size_t u) -> mpz_class { return mpz_class(divided - u); }).has_value());
  }
  REQUIRE_THROWS_AS(ModDown(full, full), InvalidArgument);
  REQUIRE_THROWS_AS(ModDown(kept, full), MismatchError);
}

TEST_CASE("rescale divides exactly by the last one or two primes", "[ring][conversion][rescale]") {
  const auto log_n = GENERATE(4, 8, 12);
  const auto kept_count = GENERATE(1, 2, 4, 7);
  const auto dropped = GENERATE(1, 2);
  const auto rounding = GENERATE(Rounding::nearest, Rounding::floor);
  const auto count = kept_count + dropped;
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n * 1000 + count * 100 + dropped * 10) +
                                   static_cast<std::uint64_t>(rounding));
  INFO("N = " << n << ", L = " << count << ", dropped = " << dropped << ", nearest = "
              << (rounding == Rounding::nearest) << ", seed = " << cerium_test::test_seed());
  const auto basis = ring_test::random_basis(n, static_cast<std::size_t>(count), rng);
  const auto x = ring_test::random_poly(basis, rng);
  const Rescaler rescaler(basis, static_cast<std::size_t>(dropped), rounding);
  const auto y = rescaler.apply(x);
  REQUIRE(y.limb_count() == static_cast<std::size_t>(count - dropped));
  REQUIRE(y.basis() == basis->sub_basis(0, static_cast<std::size_t>(count - dropped)));

  const CrtReference crt(basis->primes());
  mpz_class big_p = 1;
  for (std::size_t j = static_cast<std::size_t>(count - dropped); j < static_cast<std::size_t>(count); ++j) big_p *= basis->prime(j);
  const mpz_class h = rounding == Rounding::nearest ? mpz_class((big_p - 1) / 2) : mpz_class(0);
  const auto x_limbs = x.limbs();
  for (std::size_t k = 0; k < n; ++k) {
    const mpz_class value = crt.reconstruct(x_limbs, k);
    const mpz_class expected = ring_test::floor_div(value + h, big_p);
    // The centered reading of x gives the same residues.
    const mpz_class centered = value > crt.product() / 2 ? mpz_class(value - crt.product()) : value;
    const mpz_class expected_centered = ring_test::floor_div(centered + h, big_p);
    for (std::size_t i = 0; i < y.limb_count(); ++i) {
      REQUIRE(y.limb(i)[k] == ring_test::mod(expected, basis->prime(i)));
      REQUIRE(y.limb(i)[k] == ring_test::mod(expected_centered, basis->prime(i)));
    }
  }

  auto in_place = x.clone();
  rescaler.apply_in_place(in_place);
  CHECK(in_place == y);
  CHECK(in_place.basis_ptr() == rescaler.kept_ptr());

  auto x_ntt = x.clone();
  x_ntt.to_ntt();
  auto y_ntt = rescale(x_ntt, static_cast<std::size_t>(dropped), rounding);
  REQUIRE(y_ntt.form() == PolyForm::ntt);
  auto y_ntt_in_place = x_ntt.clone();
  rescaler.apply_in_place(y_ntt_in_place);
  CHECK(y_ntt_in_place == y_ntt);
  y_ntt.to_coeff();
  CHECK(y_ntt == y);
}

TEST_CASE("rescale of a sharded polynomial keeps its shards", "[ring][conversion][rescale][shard]") {
  const std::size_t n = 512;
  auto rng = cerium_test::make_rng(808);
  const auto basis = ring_test::random_basis(n, 5, rng);
  const std::vector<Device> devices = {Device::cpu(0), Device::cpu(1), Device::cpu(2)};
  RnsPoly x(basis, PolyOptions{.shards = split_limbs(5, devices)});  // 2 + 2 + 1 limbs
  ring_test::fill_uniform(x, rng);
  const auto expected = rescale(x, 2);
  Rescaler(basis, 2).apply_in_place(x);
  CHECK(x == expected);
  REQUIRE(x.shards().size() == 2);  // the last shard emptied and went away
  CHECK(x.shards()[1].device() == Device::cpu(1));
  CHECK(x.shards()[1].limb_count() == 1);
  REQUIRE_THROWS_AS(Rescaler(basis, 3), InvalidArgument);
  REQUIRE_THROWS_AS(Rescaler(make_basis(basis->sub_basis(0, 1)), 1), InvalidArgument);
}

TEST_CASE("rescale and ModDown at N = 2^16", "[ring][conversion][large]") {
  const std::size_t n = std::size_t{1} << 16;
  auto rng = cerium_test::make_rng(65536);
  INFO("seed = " << cerium_test::test_seed());
  const auto basis = ring_test::random_basis(n, 4, rng);
  auto x = ring_test::random_poly(basis, rng);
  const auto y = rescale(x, 2);
  const CrtReference crt(basis->primes());
  const mpz_class big_p = mpz_class(basis->prime(2)) * basis->prime(3);
  const auto x_limbs = x.limbs();
  for (std::size_t k = 0; k < n; k += 61) {
    const mpz_class expected = ring_test::floor_div(crt.reconstruct(x_limbs, k) + (big_p - 1) / 2, big_p);
    for (std::size_t i = 0; i < 2; ++i) REQUIRE(y.limb(i)[k] == ring_test::mod(expected, basis->prime(i)));
  }
  // ModDown of the same words read as Q u P with P the last two primes: the same division up to u in {0, 1}.
  const auto q = make_basis(basis->sub_basis(0, 2));
  const auto z = mod_down(x, q);
  const auto z_limbs = z.limbs();
  for (std::size_t k = 0; k < n; k += 61) {
    const mpz_class divided = ring_test::floor_div(crt.reconstruct(x_limbs, k) + (big_p - 1) / 2, big_p);
    REQUIRE(find_offset(2, *q, z_limbs, k, [&](std::size_t u) -> mpz_class { return mpz_class(divided - u); }));
  }
  x.to_ntt();
  auto y_ntt = rescale(x, 2);
  y_ntt.to_coeff();
  CHECK(y_ntt == y);
  auto z_ntt = mod_down(x, q);
  z_ntt.to_coeff();
  CHECK(z_ntt == z);
}

TEST_CASE("rescale rounds halves of P the right way, for both signs", "[ring][conversion][rescale]") {
  const std::size_t n = 16;
  const auto dropped = GENERATE(1, 2);
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(dropped) + 900);
  INFO("dropped = " << dropped << ", seed = " << cerium_test::test_seed());
  const auto basis = ring_test::random_basis(n, 2 + static_cast<std::size_t>(dropped), rng);
  std::int64_t p = 1;
  for (std::size_t j = 2; j < basis->size(); ++j) p *= basis->prime(j);
  const std::int64_t h = (p - 1) / 2;  // P odd: x / P rounds down at h, up at h + 1
  std::vector<std::int64_t> x(n, 0), nearest(n, 0), floor(n, 0);
  const std::int64_t k = dropped == 1 ? 5 : 1;  // P of two primes is up to 2^62: keep k P + h inside int64
  const std::int64_t cases[][3] = {
      // x, round(x / P), floor(x / P)
      {k * p + h, k, k},
      {k * p + h + 1, k + 1, k},
      {-k * p - h, -k, -k - 1},
      {-k * p - h - 1, -k - 1, -k - 1},
      {k * p, k, k},
      {-k * p, -k, -k},
      {h, 0, 0},
      {-h, 0, -1},
      {0, 0, 0},
      {-1, 0, -1},
  };
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    x[i] = cases[i][0];
    nearest[i] = cases[i][1];
    floor[i] = cases[i][2];
  }
  const auto poly = RnsPoly::from_signed(basis, x);
  CHECK(rescale(poly, static_cast<std::size_t>(dropped), Rounding::nearest).to_signed() == nearest);
  CHECK(rescale(poly, static_cast<std::size_t>(dropped), Rounding::floor).to_signed() == floor);
  // ModDown by the same primes is exact when they are a single prime (one-prime conversion has u = 0).
  if (dropped == 1) {
    CHECK(mod_down(poly, make_basis(basis->sub_basis(0, 2)), Rounding::nearest).to_signed() == nearest);
    CHECK(mod_down(poly, make_basis(basis->sub_basis(0, 2)), Rounding::floor).to_signed() == floor);
  }
}
