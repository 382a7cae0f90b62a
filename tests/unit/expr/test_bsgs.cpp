// A baby-step giant-step matrix-vector product written with the eDSL, y = M x over n = 16 slots:
//   y = sum_k diag_k * rot(x, k) = sum_j rot( sum_i rot(x, i) * rot(diag_{jg+i}, -jg), jg ),  g = 4,
// with plaintext diagonals. Checked against the plaintext product, against the eager evaluator word for word
// (baby steps hoisted, giant steps single: neither changes rounding), and for its plan: 3 baby rotations sharing
// one ModUp, 3 giant rotations.

#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "cerium/circuits/bsgs.hpp"
#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;

namespace {

constexpr std::size_t kSlots = 16, kBaby = 4, kGiant = 4;

template <std::size_t I>
auto baby(const CipherLeaf& x) {
  if constexpr (I == 0) {
    return x;
  } else {
    return rotate(x, static_cast<std::int64_t>(I));
  }
}

template <std::size_t J, std::size_t... I>
auto inner(const CipherLeaf& x, const std::vector<PlainLeaf>& diagonals, std::index_sequence<I...>) {
  return (... + (baby<I>(x) * diagonals[J * kBaby + I]));
}

template <std::size_t J>
auto giant(const CipherLeaf& x, const std::vector<PlainLeaf>& diagonals) {
  auto sum = inner<J>(x, diagonals, std::make_index_sequence<kBaby>{});
  if constexpr (J == 0) {
    return sum;
  } else {
    return rotate(std::move(sum), static_cast<std::int64_t>(J * kBaby));
  }
}

template <std::size_t... J>
auto matvec(const CipherLeaf& x, const std::vector<PlainLeaf>& diagonals, std::index_sequence<J...>) {
  return rescale((... + giant<J>(x, diagonals)));
}

}  // namespace

TEST_CASE("BSGS matrix-vector product with the eDSL", "[expr][bsgs]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(501);
  std::vector<Values> m(kSlots);
  for (auto& row : m) row = random_real(rng, kSlots);
  const Values vx = random_real(rng, kSlots);
  const Ciphertext cx = f.encrypt(vx, -1, kSlots);

  // Diagonal k (the circuits' diagonal form), pre-rotated by -jg for its giant step jg.
  const auto matrix = cerium::circuits::DiagonalMatrix::from_dense(m);
  std::vector<PlainLeaf> diagonals;
  std::vector<Plaintext> eager_diagonals;
  for (std::size_t k = 0; k < kSlots; ++k) {
    const auto shift = static_cast<std::int64_t>(k / kBaby * kBaby);
    const auto diag = cerium::circuits::bsgs_diagonal(matrix, shift, static_cast<std::int64_t>(k) - shift);
    Plaintext pt = f.encoder.encode(std::span<const Complex>(diag), EncodeOptions{.slots = kSlots});
    eager_diagonals.push_back(pt.clone());
    diagonals.push_back(lift(std::move(pt)));
  }
  auto x = lift(cx);
  auto y = matvec(x, diagonals, std::make_index_sequence<kGiant>{});

  using Y = decltype(y);
  static_assert(cerium::expr::depth_v<Y> == 1);
  static_assert(cerium::expr::key_switches_v<Y> == 4 * 3 + 3);  // before hoisting and reuse
  static_assert(cerium::expr::ct_products_v<Y> == 0);
  const auto stats = cerium::plan::plan_stats(y);
  CHECK(stats.key_switches == 3 + 3);  // baby steps {1, 2, 3} once, then 3 giant steps
  CHECK(stats.mod_ups == 1 + 3);
  CHECK(stats.rescales == 1);

  const Ciphertext got = eval(y, EvalContext{f.evaluator});

  Values want(kSlots);
  for (std::size_t i = 0; i < kSlots; ++i)
    for (std::size_t j = 0; j < kSlots; ++j) want[i] += m[i][j] * vx[j];
  const Values out = f.decrypt(got);
  const double bits = precision_bits(Values(out.begin(), out.begin() + kSlots), want);
  INFO("BSGS precision " << bits << " bits");
  CHECK(bits >= bound() - 6);  // 16 products summed: 4 bits of growth, 2 spare

  // The eager evaluator in the plan's order.
  const Evaluator& ev = f.evaluator;
  Ciphertext total;
  for (std::size_t j = 0; j < kGiant; ++j) {
    Ciphertext acc;
    for (std::size_t i = 0; i < kBaby; ++i) {
      Ciphertext term = i == 0 ? cx.clone() : ev.rotate(cx, static_cast<std::int64_t>(i));
      ev.multiply_inplace(term, eager_diagonals[j * kBaby + i]);
      if (i == 0) acc = std::move(term); else ev.add_inplace(acc, term);
    }
    if (j > 0) acc = ev.rotate(acc, static_cast<std::int64_t>(j * kBaby));
    if (j == 0) total = std::move(acc); else ev.add_inplace(total, acc);
  }
  ev.rescale_inplace(total);
  CHECK(same_words(got, total));
}
