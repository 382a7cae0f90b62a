// Diagonal form and BSGS plans against plain dense matrix-vector products on random inputs: from_dense, compose,
// compressed (periodic) diagonals, and every BSGS plan (any stride) reassembling A v from its pre-rotated
// diagonals exactly as the homomorphic transform does.

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cerium/circuits/bsgs.hpp"
#include "cerium/circuits/diagonal_matrix.hpp"
#include "cerium/core/error.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;
using circuits::Complex;
using circuits::DiagonalMatrix;

namespace {

using Dense = std::vector<std::vector<Complex>>;

Dense random_dense(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Dense m(n, std::vector<Complex>(n));
  for (auto& row : m)
    for (auto& v : row) v = {dist(rng), dist(rng)};
  return m;
}

std::vector<Complex> random_vector(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<Complex> v(n);
  for (auto& x : v) x = {dist(rng), dist(rng)};
  return v;
}

std::vector<Complex> dense_apply(const Dense& m, const std::vector<Complex>& v) {
  std::vector<Complex> out(m.size());
  for (std::size_t i = 0; i < m.size(); ++i)
    for (std::size_t j = 0; j < m.size(); ++j) out[i] += m[i][j] * v[j];
  return out;
}

double max_error(const std::vector<Complex>& a, const std::vector<Complex>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// sum_g R^g (sum_b diag'_(g,b) * R^b v): what LinearTransform computes, in doubles.
std::vector<Complex> bsgs_apply(const DiagonalMatrix& m, const circuits::BsgsPlan& plan, const std::vector<Complex>& v) {
  std::vector<Complex> out(m.slots);
  for (const auto& [giant, babies] : plan.giants) {
    std::vector<Complex> inner(m.slots);
    for (const auto baby : babies) {
      const auto diagonal = circuits::bsgs_diagonal(m, giant, baby);
      const auto rotated = circuits::rotate_values(v, baby);
      for (std::size_t i = 0; i < m.slots; ++i) inner[i] += diagonal[i % diagonal.size()] * rotated[i];
    }
    const auto moved = circuits::rotate_values(inner, giant);
    for (std::size_t i = 0; i < m.slots; ++i) out[i] += moved[i];
  }
  return out;
}

}  // namespace

TEST_CASE("diagonal form equals the dense product", "[circuits][diagonal]") {
  auto rng = cerium_test::make_rng(901);
  for (const std::size_t n : {1u, 2u, 16u, 64u}) {
    const Dense dense = random_dense(rng, n);
    const DiagonalMatrix m = DiagonalMatrix::from_dense(dense);
    CHECK(m.diagonals.size() == n);
    const auto v = random_vector(rng, n);
    CHECK(max_error(circuits::apply(m, v), dense_apply(dense, v)) < 1e-12);
  }
  CHECK_THROWS_AS(DiagonalMatrix::from_dense(Dense(3, std::vector<Complex>(3))), InvalidArgument);
  CHECK_THROWS_AS(DiagonalMatrix::from_dense(Dense(4, std::vector<Complex>(3))), InvalidArgument);
}

TEST_CASE("composition is the product of the maps", "[circuits][diagonal]") {
  auto rng = cerium_test::make_rng(902);
  const std::size_t n = 32;
  const DiagonalMatrix a = DiagonalMatrix::from_dense(random_dense(rng, n));
  const DiagonalMatrix b = DiagonalMatrix::from_dense(random_dense(rng, n));
  const auto v = random_vector(rng, n);
  const auto want = circuits::apply(a, circuits::apply(b, v));
  CHECK(max_error(circuits::apply(circuits::compose(a, b), v), want) < 1e-11);
}

TEST_CASE("compressed diagonals repeat their period", "[circuits][diagonal]") {
  auto rng = cerium_test::make_rng(903);
  const std::size_t n = 64;
  DiagonalMatrix m{n, {}};
  m.add_diagonal(0, random_vector(rng, 4));
  m.add_diagonal(-3, random_vector(rng, 8));
  m.add_diagonal(5, random_vector(rng, n));
  m.add_diagonal(5, random_vector(rng, 2));  // summed into the full diagonal
  CHECK(m.stored_values() == 4 + 8 + n);
  DiagonalMatrix full{n, {}};
  for (const auto d : m.offsets()) full.add_diagonal(d, m.expanded(d));
  const auto v = random_vector(rng, n);
  CHECK(max_error(circuits::apply(m, v), circuits::apply(full, v)) < 1e-14);
  for (const auto& options : {circuits::BsgsOptions{}, circuits::BsgsOptions{.stride = 4}}) {
    const auto plan = circuits::plan_bsgs(m, options);
    CHECK(max_error(bsgs_apply(m, plan, v), circuits::apply(full, v)) < 1e-13);
    // Pre-rotated diagonals keep their period.
    for (const auto& [giant, babies] : plan.giants)
      for (const auto baby : babies)
        CHECK(circuits::bsgs_diagonal(m, giant, baby).size() == m.diagonals.at(circuits::wrap_offset(giant + baby, n)).size());
  }
  CHECK_THROWS_AS(m.add_diagonal(1, random_vector(rng, 3)), InvalidArgument);
  CHECK(m.at(64 + 5, 3) == m.expanded(5)[3]);  // offsets are taken mod slots
  CHECK_THROWS_AS(m.expanded(2), InvalidArgument);  // no diagonal there
  CHECK_THROWS_AS(circuits::tile(random_vector(rng, 3), n), InvalidArgument);
}

TEST_CASE("every BSGS plan reassembles A v", "[circuits][bsgs]") {
  auto rng = cerium_test::make_rng(904);
  const std::size_t n = 64;
  const DiagonalMatrix dense = DiagonalMatrix::from_dense(random_dense(rng, n));
  DiagonalMatrix banded{n, {}};  // offsets -5 .. 6: negative ones wrap
  for (std::int64_t d = -5; d <= 6; ++d) banded.add_diagonal(d, random_vector(rng, n));
  const auto v = random_vector(rng, n);
  for (const DiagonalMatrix* m : std::vector<const DiagonalMatrix*>{&dense, &banded}) {
    const auto want = circuits::apply(*m, v);
    for (std::int64_t stride : {0, 1, 2, 8, 16, 64, 128}) {
      INFO("stride " << stride);
      const auto plan = circuits::plan_bsgs(*m, {.stride = stride});
      CHECK(max_error(bsgs_apply(*m, plan, v), want) < 1e-12);
      if (stride >= static_cast<std::int64_t>(n)) {  // hoisted babies only
        CHECK(plan.giants.size() == 1);
        CHECK(plan.giants.begin()->first == 0);
      }
    }
  }
  // The searched plan of a dense 64 x 64 matrix: about 2 sqrt(64) rotations, far below 63.
  const auto plan = circuits::plan_bsgs(dense);
  CHECK(plan.rotations() <= 16);
  CHECK(plan.rotation_steps().size() == plan.rotations());
  CHECK_THROWS_AS(circuits::plan_bsgs(dense, {.stride = 3}), InvalidArgument);
  const std::vector<std::int64_t> twice{1, 65};
  CHECK_THROWS_AS(circuits::plan_bsgs(twice, n), InvalidArgument);
}
