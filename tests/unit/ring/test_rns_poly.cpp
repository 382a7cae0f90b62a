#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cerium/core/aligned_buffer.hpp"
#include "cerium/core/device.hpp"
#include "cerium/core/error.hpp"
#include "cerium/math/ntt.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "ring_test_support.hpp"
#include "support/catch.hpp"

using namespace cerium;
using namespace cerium::ring;

namespace {

std::vector<std::int64_t> random_small(std::mt19937_64& rng, std::size_t n, std::int64_t bound) {
  std::uniform_int_distribution<std::int64_t> dist(-bound, bound);
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Negacyclic product over the integers (small inputs: no overflow).
std::vector<std::int64_t> negacyclic(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  const std::size_t n = a.size();
  std::vector<std::int64_t> c(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i + j < n) c[i + j] += a[i] * b[j];
      else c[i + j - n] -= a[i] * b[j];
    }
  }
  return c;
}


}  // namespace

TEST_CASE("devices compare and print", "[ring][core][device]") {
  CHECK(Device::cpu() == Device{});
  CHECK(Device::cpu(1) != Device::cpu());
  CHECK(Device::cuda(0) != Device::cpu(0));
  CHECK(Device::cpu(3) < Device::cuda(0));
  CHECK(to_string(Device::cuda(2)) == "cuda:2");
  CHECK(to_string(Device::cpu()) == "cpu:0");
  CHECK(Device::cpu(4).host_accessible());
  CHECK_FALSE(Device::cuda().host_accessible());
}

TEST_CASE("aligned buffers are aligned, zeroed, move-only and report failed allocations", "[ring][core][buffer]") {
  AlignedBuffer<std::uint32_t> a(1000);
  REQUIRE(a.size() == 1000);
  REQUIRE(reinterpret_cast<std::uintptr_t>(a.data()) % buffer_alignment == 0);
  for (auto x : a) REQUIRE(x == 0);
  a[7] = 42;
  auto copy = a.clone();
  REQUIRE(copy[7] == 42);
  REQUIRE(copy.data() != a.data());
  const auto* data = a.data();
  AlignedBuffer<std::uint32_t> b(std::move(a));
  REQUIRE(b.data() == data);
  REQUIRE(a.empty());  // NOLINT: moved-from state is specified (empty)
  b = AlignedBuffer<std::uint32_t>(3, BufferInit::uninitialized);
  REQUIRE(b.size() == 3);
  AlignedBuffer<std::uint32_t> empty(0);
  REQUIRE(empty.data() == nullptr);

  const std::size_t huge = std::size_t{1} << 60;  // 2^62 bytes
  REQUIRE_THROWS_AS(AlignedBuffer<std::uint32_t>(huge), OutOfMemoryError);
  CHECK(ring_test::error_message([&] { AlignedBuffer<std::uint32_t> x(huge); }).find("4611686018427387904") != std::string::npos);
  REQUIRE_THROWS_AS(AlignedBuffer<std::uint64_t>(std::numeric_limits<std::size_t>::max() / 4), OutOfMemoryError);
}

TEST_CASE("RNS polynomials are limb-major with 256-byte aligned limbs", "[ring][poly]") {
  const auto log_n = GENERATE(4, 5, 6, 10);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n));
  const auto basis = ring_test::random_basis(n, 3, rng);
  RnsPoly p(basis);
  REQUIRE(p.n() == n);
  REQUIRE(p.limb_count() == 3);
  REQUIRE(p.form() == PolyForm::coefficient);
  REQUIRE(p.shards().size() == 1);
  REQUIRE(p.shards()[0].device() == Device::cpu());
  const std::size_t stride = limb_stride(n);
  CHECK(stride == std::max<std::size_t>(n, 64));
  for (std::size_t i = 0; i < 3; ++i) {
    const auto limb = p.limb(i);
    REQUIRE(limb.size() == n);
    CHECK(reinterpret_cast<std::uintptr_t>(limb.data()) % buffer_alignment == 0);
    CHECK(limb.data() == p.shards()[0].data() + i * stride);
    for (auto x : limb) REQUIRE(x == 0);
  }
  REQUIRE_THROWS_AS(p.limb(3), InvalidArgument);
  REQUIRE(RnsPoly(basis, PolyForm::ntt).form() == PolyForm::ntt);
}

TEST_CASE("sharded polynomials spread limbs over devices and compute like one shard", "[ring][poly][shard]") {
  const std::size_t n = 128;
  auto rng = cerium_test::make_rng(11);
  const auto basis = ring_test::random_basis(n, 5, rng);
  const std::vector<Device> devices = {Device::cpu(0), Device::cpu(1), Device::cpu(2)};
  const auto layout = split_limbs(5, devices);
  REQUIRE(layout.size() == 3);
  CHECK(layout[0].limb_count == 2);
  CHECK(layout[1].limb_count == 2);
  CHECK(layout[2].limb_count == 1);
  CHECK(split_limbs(2, devices).size() == 2);

  RnsPoly sharded(basis, PolyOptions{.shards = layout});
  REQUIRE(sharded.shards().size() == 3);
  CHECK(sharded.shards()[1].device() == Device::cpu(1));
  CHECK(sharded.shards()[1].first_limb() == 2);
  CHECK(sharded.limb(3).data() == sharded.shards()[1].limb(1).data());
  for (std::size_t i = 0; i < 5; ++i) CHECK(reinterpret_cast<std::uintptr_t>(sharded.limb(i).data()) % 256 == 0);

  ring_test::fill_uniform(sharded, rng);
  const RnsPoly single = ring_test::random_poly(basis, rng);
  RnsPoly sum = single + sharded;
  RnsPoly expected_sum = sharded.clone();
  expected_sum += single;
  CHECK(sum == expected_sum);
  CHECK(expected_sum.shards().size() == 3);
  for (std::size_t i = 0; i < 5; ++i) {
    const auto q = basis->prime(i);
    for (std::size_t k = 0; k < n; ++k) {
      REQUIRE(sum.limb(i)[k] == (std::uint64_t{single.limb(i)[k]} + sharded.limb(i)[k]) % q);
    }
  }

  auto dropped = sharded.clone();
  dropped.drop_last_limbs(2);
  CHECK(dropped.limb_count() == 3);
  CHECK(dropped.shards().size() == 2);
  CHECK(dropped.shards()[1].limb_count() == 1);
  CHECK(dropped.basis() == basis->sub_basis(0, 3));
  for (std::size_t i = 0; i < 3; ++i) CHECK(std::equal(dropped.limb(i).begin(), dropped.limb(i).end(), sharded.limb(i).begin()));

  REQUIRE_THROWS_AS(RnsPoly(basis, PolyOptions{.shards = {{Device::cpu(), 4}}}), MismatchError);
  REQUIRE_THROWS_AS(RnsPoly(basis, PolyOptions{.shards = {{Device::cuda(0), 5}}}), UnsupportedError);
}

TEST_CASE("NTT form round trips and multiplies like the negacyclic product", "[ring][poly]") {
  const auto log_n = GENERATE(4, 7, 10);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) + 50);
  INFO("N = " << n << ", seed = " << cerium_test::test_seed());
  const auto basis = ring_test::random_basis(n, 4, rng);
  const auto a = random_small(rng, n, 1000);
  const auto b = random_small(rng, n, 1000);
  const RnsPoly pa = RnsPoly::from_signed(basis, a);
  RnsPoly x = pa.clone();
  x.to_ntt();
  REQUIRE(x.form() == PolyForm::ntt);
  REQUIRE_FALSE(x == pa);
  x.to_ntt();  // no-op
  auto y = RnsPoly::from_signed(basis, b, PolyOptions{.form = PolyForm::ntt});
  const RnsPoly product = x * y;
  x.to_coeff();
  REQUIRE(x == pa);
  x.to_coeff();
  REQUIRE(x == pa);

  RnsPoly c = product.clone();
  c.to_coeff();
  CHECK(c.to_signed() == negacyclic(a, b));
  REQUIRE_THROWS_AS(pa * pa, MismatchError);
}

TEST_CASE("elementwise operations match integer arithmetic", "[ring][poly]") {
  const auto log_n = GENERATE(4, 9, 12);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) + 70);
  INFO("N = " << n << ", seed = " << cerium_test::test_seed());
  const auto basis = ring_test::random_basis(n, 3, rng);
  const auto a = random_small(rng, n, std::int64_t{1} << 40);
  const auto b = random_small(rng, n, std::int64_t{1} << 40);
  const auto pa = RnsPoly::from_signed(basis, a);
  const auto pb = RnsPoly::from_signed(basis, b);
  std::vector<std::int64_t> sum(n), diff(n), neg(n), scaled(n);
  for (std::size_t k = 0; k < n; ++k) {
    sum[k] = a[k] + b[k];
    diff[k] = a[k] - b[k];
    neg[k] = -a[k];
    scaled[k] = a[k] * -4321;
  }
  CHECK((pa + pb).to_signed() == sum);
  CHECK((pa - pb).to_signed() == diff);
  CHECK((-pa).to_signed() == neg);
  auto s = pa.clone();
  s.multiply_integer(-4321);
  CHECK(s.to_signed() == scaled);

  std::vector<std::uint32_t> scalars;
  for (std::size_t i = 0; i < 3; ++i) scalars.push_back(cerium_test::random_residues(rng, 1, basis->prime(i))[0]);
  auto t = pa.clone();
  t.multiply_scalar(scalars);
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t k = 0; k < n; ++k) {
      REQUIRE(t.limb(i)[k] == std::uint64_t{pa.limb(i)[k]} * scalars[i] % basis->prime(i));
    }
  }
  scalars[0] = basis->prime(0);
  REQUIRE_THROWS_AS(t.multiply_scalar(scalars), InvalidArgument);

  auto z = pa.clone();
  z.set_zero();
  CHECK(z == RnsPoly(basis));
}

TEST_CASE("mismatched operands are refused with both sides named", "[ring][poly]") {
  const std::size_t n = 64;
  auto rng = cerium_test::make_rng(5);
  const auto basis = ring_test::random_basis(n, 2, rng);
  const auto other = ring_test::random_basis(n, 2, rng, std::vector<std::uint32_t>(basis->primes().begin(), basis->primes().end()));
  RnsPoly a(basis), b(other), c(basis, PolyForm::ntt);

  REQUIRE_THROWS_AS(a += b, MismatchError);
  const auto message = ring_test::error_message([&] { a += b; });
  CHECK(message.find(std::to_string(basis->prime(0))) != std::string::npos);
  CHECK(message.find(std::to_string(other->prime(0))) != std::string::npos);
  REQUIRE_THROWS_AS(a -= c, MismatchError);
  const auto form_message = ring_test::error_message([&] { a -= c; });
  CHECK(form_message.find("coefficient") != std::string::npos);
  CHECK(form_message.find("NTT") != std::string::npos);
  REQUIRE_THROWS_AS(a *= a, MismatchError);

  // Equal bases held through different pointers are compatible.
  RnsPoly d(make_basis(*basis));
  REQUIRE_NOTHROW(a += d);
  CHECK(a == d);
  CHECK_FALSE(a == c);
  CHECK_FALSE(a == b);
  d.limb(1)[7] = 1;
  CHECK_FALSE(a == d);
}

TEST_CASE("dropping limbs keeps a prefix of the basis", "[ring][poly]") {
  const std::size_t n = 32;
  auto rng = cerium_test::make_rng(9);
  const auto basis = ring_test::random_basis(n, 4, rng);
  auto p = ring_test::random_poly(basis, rng);
  const auto original = p.clone();
  p.drop_last_limbs(0);
  CHECK(p == original);
  const auto prefix = make_basis(basis->sub_basis(0, 2));
  p.drop_to(prefix);
  REQUIRE(p.limb_count() == 2);
  CHECK(p.basis_ptr() == prefix);
  for (std::size_t i = 0; i < 2; ++i) CHECK(std::equal(p.limb(i).begin(), p.limb(i).end(), original.limb(i).begin()));
  const auto copy = p.clone();  // copies the two live limbs only
  CHECK(copy == p);
  CHECK(copy.shards()[0].storage().size() == 2 * limb_stride(n));
  REQUIRE_THROWS_AS(p.drop_last_limbs(2), InvalidArgument);
  auto q = original.clone();
  REQUIRE_THROWS_AS(q.drop_to(make_basis(basis->sub_basis(1, 2))), MismatchError);
}

TEST_CASE("signed coefficients convert to residues and back", "[ring][poly]") {
  const std::size_t n = 256;
  auto rng = cerium_test::make_rng(21);
  INFO("seed = " << cerium_test::test_seed());

  SECTION("large bases: all of int64") {
    const auto count = GENERATE(3, 5);
    const auto basis = ring_test::random_basis(n, static_cast<std::size_t>(count), rng);
    auto values = random_small(rng, n, std::numeric_limits<std::int64_t>::max());
    values[0] = std::numeric_limits<std::int64_t>::min();
    values[1] = std::numeric_limits<std::int64_t>::max();
    values[2] = 0;
    values[3] = -1;
    const auto p = RnsPoly::from_signed(basis, values);
    for (std::size_t i = 0; i < p.limb_count(); ++i) {
      for (std::size_t k = 0; k < n; ++k) {
        const mpz_class v(std::to_string(values[k]));
        REQUIRE(p.limb(i)[k] == ring_test::mod(v, basis->prime(i)));
      }
    }
    CHECK(p.to_signed() == values);
    auto wide = ring_test::random_poly(basis, rng);
    REQUIRE_THROWS_AS(wide.to_signed(), InvalidArgument);
  }
  SECTION("one and two primes: centered representatives") {
    const auto count = GENERATE(1, 2);
    const auto basis = ring_test::random_basis(n, static_cast<std::size_t>(count), rng);
    auto p = ring_test::random_poly(basis, rng);
    const auto values = p.to_signed();
    mpz_class product = 1;
    for (auto q : basis->primes()) product *= q;
    const mpz_class half = product / 2;
    for (std::size_t k = 0; k < n; ++k) {
      const mpz_class v(std::to_string(values[k]));
      REQUIRE(v <= half);
      REQUIRE(v > -half - 1);
      for (std::size_t i = 0; i < p.limb_count(); ++i) REQUIRE(ring_test::mod(v, basis->prime(i)) == p.limb(i)[k]);
    }
    CHECK(RnsPoly::from_signed(basis, values) == p);
  }
  SECTION("refusals") {
    const auto basis = ring_test::random_basis(n, 2, rng);
    REQUIRE_THROWS_AS(RnsPoly::from_signed(basis, std::vector<std::int64_t>(n - 1)), InvalidArgument);
    REQUIRE_THROWS_AS(RnsPoly(basis, PolyForm::ntt).to_signed(), MismatchError);
  }
}
