#pragma once
// The three computations the eDSL benchmarks compare, fused (eval of an expression) against eager (the evaluator
// calls a program would write without the planner), on any backend:
//  - bsgs: a 16-diagonal baby-step giant-step linear transform, 4 baby x 4 giant steps, plaintext diagonals.
//    Fused: the baby rotations share one ModUp and each inner sum of 4 products is one pass per polynomial.
//    Eager: every rotation its own key switch, one multiply and one add per diagonal. Same words.
//  - products8: sum of 8 ciphertext products, rescaled. Fused: the tensor products accumulated in one pass per
//    part, one relinearization. Eager: multiply (relinearize) each, add. Different rounding (lazy
//    relinearization): compared by precision.
//  - poly15: a degree-15 polynomial in the power basis (expr::polynomial). Planned: the constants' products share
//    one rescale, and x^9 .. x^15 share one relinearization (8 key switches instead of 14). Eager: the same
//    powers, each relinearized, each term rescaled before the sum. Different rounding.

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/expr/expr.hpp"
#include "cerium/plan/eval.hpp"
#include "cerium/plan/power_basis.hpp"

namespace cerium_bench {

inline constexpr std::size_t kBaby = 4, kGiant = 4, kDiagonals = kBaby * kGiant, kProducts = 8, kDegree = 15;

// Galois keys the workloads need: baby steps 1..3, giant steps 4, 8, 12.
inline std::vector<std::int64_t> expr_rotation_steps() { return {1, 2, 3, 4, 8, 12}; }

inline std::array<double, kDegree + 1> poly15_coefficients() {
  std::array<double, kDegree + 1> c{};
  for (std::size_t k = 0; k <= kDegree; ++k) c[k] = (k % 2 == 0 ? 1.0 : -1.0) / static_cast<double>(k + 1);
  return c;
}

// What the hand-written eager code does, counted by hand (plan_stats counts the planned forms): elementwise
// backend passes (one kernel launch each on the GPU, key switches' internals not counted), key switches, ModUps.
struct EagerCounts {
  int passes = 0, key_switches = 0, mod_ups = 0;
};
// 16 multiplies and 15 adds of 2 parts, 1 rescale; 6 rotations, each its own ModUp.
inline constexpr EagerCounts kBsgsEager{16 * 2 + 15 * 2 + 1, 6, 6};
// 8 tensors, 8 relinearizations (2 adds each), 7 adds of 2 parts, 1 rescale.
inline constexpr EagerCounts kProducts8Eager{8 + 8 * 2 + 7 * 2 + 1, 8, 8};
// poly15_eager: the powers x^2 .. x^15, each a tensor, 2 relinearization adds and a rescale (4 passes; 56), 7 of
// them with a factor first brought down the chain by adjust_scale (3 passes; 21); then the terms x^1 .. x^8
// brought to the sum's level (3 passes each; 24), 15 constant products of 2 parts (30), 15 rescales, 14 adds of 2
// parts (28) and + c_0 (1). 14 relinearizations.
inline constexpr EagerCounts kPoly15Eager{56 + 21 + 24 + 30 + 15 + 28 + 1, 14, 14};

template <cerium::backend::PolyBackend B>
struct ExprWorkloads {
  using Evaluator = cerium::ckks::BasicEvaluator<B>;
  using Ciphertext = cerium::ckks::Ciphertext;
  using Plaintext = cerium::ckks::Plaintext;

  const Evaluator& ev;
  std::shared_ptr<const Ciphertext> x;                   // where the evaluator computes
  std::vector<std::shared_ptr<const Ciphertext>> a, b;   // kProducts each
  std::vector<std::shared_ptr<const Plaintext>> diagonals;  // kDiagonals
  std::vector<double> vx;                                   // the slot values behind them
  std::vector<std::vector<double>> va, vb, vd;

  // Random inputs in [-1, 1) (x scaled by 0.9 for the polynomial), encrypted and placed on ev's backend.
  ExprWorkloads(const Evaluator& evaluator, const cerium::ckks::Encoder& encoder,
                const cerium::ckks::Encryptor& encryptor, std::uint64_t seed)
      : ev(evaluator) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-0.9, 0.9);
    const std::size_t slots = evaluator.context()->ring_degree() / 2;
    const auto values = [&] {
      std::vector<double> v(slots);
      for (auto& e : v) e = dist(rng);
      return v;
    };
    const auto cipher = [&](std::vector<double>& v) {
      v = values();
      return std::make_shared<const Ciphertext>(ev.upload(encryptor.encrypt(encoder.encode(v))));
    };
    x = cipher(vx);
    va.resize(kProducts);
    vb.resize(kProducts);
    vd.resize(kDiagonals);
    for (std::size_t i = 0; i < kProducts; ++i) {
      a.push_back(cipher(va[i]));
      b.push_back(cipher(vb[i]));
    }
    for (std::size_t i = 0; i < kDiagonals; ++i) {
      vd[i] = values();
      diagonals.push_back(std::make_shared<const Plaintext>(ev.upload(encoder.encode(vd[i]))));
    }
  }

  // --- the exact results, slot by slot ---
  static std::vector<double> rotated(const std::vector<double>& v, std::size_t steps) {
    std::vector<double> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[(i + steps) % v.size()];
    return out;
  }
  std::vector<double> bsgs_want() const {
    std::vector<double> total(vx.size(), 0.0);
    for (std::size_t j = 0; j < kGiant; ++j) {
      std::vector<double> inner(vx.size(), 0.0);
      for (std::size_t i = 0; i < kBaby; ++i) {
        const auto r = rotated(vx, i);
        for (std::size_t s = 0; s < vx.size(); ++s) inner[s] += r[s] * vd[j * kBaby + i][s];
      }
      const auto g = rotated(inner, j * kBaby);
      for (std::size_t s = 0; s < vx.size(); ++s) total[s] += g[s];
    }
    return total;
  }
  std::vector<double> products8_want() const {
    std::vector<double> total(vx.size(), 0.0);
    for (std::size_t i = 0; i < kProducts; ++i)
      for (std::size_t s = 0; s < vx.size(); ++s) total[s] += va[i][s] * vb[i][s];
    return total;
  }
  std::vector<double> poly15_want() const {
    const auto c = poly15_coefficients();
    std::vector<double> out(vx.size());
    for (std::size_t s = 0; s < vx.size(); ++s) {
      double acc = 0;
      for (std::size_t k = kDegree + 1; k-- > 0;) acc = acc * vx[s] + c[k];
      out[s] = acc;
    }
    return out;
  }

  // --- bsgs ---
  auto bsgs_expression() const {
    using namespace cerium;
    const auto lx = lift(x);
    using Inner = decltype(rotate(lx, 0) * lift(diagonals[0]));
    using Giant = decltype(rotate(sum(std::vector<Inner>{rotate(lx, 0) * lift(diagonals[0])}), 0));
    std::vector<Giant> giants;
    for (std::size_t j = 0; j < kGiant; ++j) {
      std::vector<Inner> inner;
      for (std::size_t i = 0; i < kBaby; ++i)
        inner.push_back(rotate(lx, static_cast<std::int64_t>(i)) * lift(diagonals[j * kBaby + i]));
      giants.push_back(rotate(sum(std::move(inner)), static_cast<std::int64_t>(j * kBaby)));
    }
    return rescale(sum(std::move(giants)));
  }
  Ciphertext bsgs_eager() const {
    std::vector<Ciphertext> babies;
    babies.push_back(x->clone());
    for (std::size_t i = 1; i < kBaby; ++i) babies.push_back(ev.rotate(*x, static_cast<std::int64_t>(i)));
    Ciphertext total;
    for (std::size_t j = 0; j < kGiant; ++j) {
      Ciphertext acc = ev.multiply(babies[0], *diagonals[j * kBaby]);
      for (std::size_t i = 1; i < kBaby; ++i) ev.add_inplace(acc, ev.multiply(babies[i], *diagonals[j * kBaby + i]));
      if (j > 0) acc = ev.rotate(acc, static_cast<std::int64_t>(j * kBaby));
      if (j == 0) total = std::move(acc); else ev.add_inplace(total, acc);
    }
    ev.rescale_inplace(total);
    return total;
  }

  // --- products8 ---
  auto products8_expression() const {
    using namespace cerium;
    std::vector<decltype(lift(a[0]) * lift(b[0]))> terms;
    for (std::size_t i = 0; i < kProducts; ++i) terms.push_back(lift(a[i]) * lift(b[i]));
    return rescale(sum(std::move(terms)));
  }
  Ciphertext products8_eager() const {
    Ciphertext acc = ev.multiply(*a[0], *b[0]);
    for (std::size_t i = 1; i < kProducts; ++i) ev.add_inplace(acc, ev.multiply(*a[i], *b[i]));
    ev.rescale_inplace(acc);
    return acc;
  }

  // --- poly15 ---
  auto poly15_expression() const { return cerium::polynomial(cerium::lift(x), poly15_coefficients()); }
  Ciphertext poly15_eager() const {
    const auto c = poly15_coefficients();
    cerium::plan::PowerBasis<B> powers(ev, *x);
    const int level = powers.sum_level(kDegree);
    Ciphertext sum;
    for (std::size_t k = 1; k <= kDegree; ++k) {
      Ciphertext term = powers.power(k).clone();
      powers.bring_to(term, level);
      ev.multiply_inplace(term, c[k]);
      ev.rescale_inplace(term);  // each term rescaled on its own: what the planner shares
      if (k == 1) sum = std::move(term); else ev.add_inplace(sum, term);
    }
    ev.add_inplace(sum, c[0]);
    return sum;
  }
};

// -log2 of the largest slot error.
inline double precision_bits(const std::vector<std::complex<double>>& got, const std::vector<double>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  return worst == 0 ? 100.0 : -std::log2(worst);
}

}  // namespace cerium_bench
