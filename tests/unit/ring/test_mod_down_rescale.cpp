// ring::mod_down_and_rescale against the three steps it stands for: ModDown, the addend, rescale.
#include <cstdint>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "ring_test_support.hpp"
#include "support/catch.hpp"

using namespace cerium;
using namespace cerium::ring;

TEST_CASE("ModDown then rescale in one pass gives the words of the three steps", "[ring][conversion][moddown]") {
  const auto log_n = GENERATE(4, 10);
  const auto kept_count = GENERATE(1, 3, 6);
  const auto dropped = GENERATE(std::size_t{1}, std::size_t{2});
  const auto p_count = GENERATE(1, 3);
  const auto rounding = GENERATE(Rounding::nearest, Rounding::floor);
  const std::size_t n = std::size_t{1} << log_n;
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n * 1000 + kept_count * 100 + p_count * 10) +
                                   dropped + 7 * static_cast<std::uint64_t>(rounding));
  INFO("N = " << n << ", " << kept_count << " kept, " << dropped << " dropped, |P| = " << p_count
              << ", nearest = " << (rounding == Rounding::nearest) << ", seed = " << cerium_test::test_seed());
  const auto q = ring_test::random_basis(n, static_cast<std::size_t>(kept_count) + dropped, rng);
  const std::vector<std::uint32_t> q_primes(q->primes().begin(), q->primes().end());
  const auto p = ring_test::random_basis(n, static_cast<std::size_t>(p_count), rng, q_primes);
  const auto qp = make_basis(q->concat(*p));
  const ModDown mod_down(qp, q, rounding);
  const Rescaler rescaler(q, dropped, rounding);
  const auto x = ring_test::random_poly(qp, rng, PolyForm::ntt);
  const auto a = ring_test::random_poly(q, rng, PolyForm::ntt);

  auto down = mod_down.apply(x);
  CHECK(mod_down_and_rescale(mod_down, rescaler, x) == rescaler.apply(down));
  down += a;
  const auto fused = mod_down_and_rescale(mod_down, rescaler, x, &a);
  REQUIRE(fused.basis() == rescaler.kept());
  REQUIRE(fused.form() == PolyForm::ntt);
  CHECK(fused == rescaler.apply(down));
}

TEST_CASE("ModDown then rescale refuses mismatched bases and forms", "[ring][conversion][moddown][errors]") {
  const std::size_t n = 64;
  auto rng = cerium_test::make_rng(505);
  const auto q = ring_test::random_basis(n, 4, rng);
  const std::vector<std::uint32_t> q_primes(q->primes().begin(), q->primes().end());
  const auto p = ring_test::random_basis(n, 2, rng, q_primes);
  const auto qp = make_basis(q->concat(*p));
  const ModDown mod_down(qp, q);
  const auto x = ring_test::random_poly(qp, rng, PolyForm::ntt);
  CHECK_THROWS_AS(mod_down_and_rescale(mod_down, Rescaler(qp, 1), x), MismatchError);  // rescales Q u P
  CHECK_THROWS_AS(mod_down_and_rescale(mod_down, Rescaler(q, 1), ring_test::random_poly(qp, rng)), MismatchError);
  const auto wrong = ring_test::random_poly(qp, rng, PolyForm::ntt);
  CHECK_THROWS_AS(mod_down_and_rescale(mod_down, Rescaler(q, 1), x, &wrong), MismatchError);  // addend over Q u P
}
