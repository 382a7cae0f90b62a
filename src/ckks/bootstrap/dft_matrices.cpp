#include "dft_matrices.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "cerium/core/check.hpp"

namespace cerium::ckks::bootstrap_detail {
namespace {

std::int64_t wrap(std::int64_t d, std::size_t n) {
  const auto m = static_cast<std::int64_t>(n);
  return ((d % m) + m) % m;
}

// (R^k v)_i = v_(i + k).
std::vector<Complex> rotated(const std::vector<Complex>& v, std::int64_t k) {
  const std::size_t n = v.size();
  std::vector<Complex> out(n);
  const auto shift = static_cast<std::size_t>(wrap(k, n));
  for (std::size_t i = 0; i < n; ++i) out[i] = v[(i + shift) % n];
  return out;
}

void add_to(DiagonalMatrix& m, std::int64_t offset, const std::vector<Complex>& values) {
  auto [it, inserted] = m.diagonals.try_emplace(wrap(offset, m.slots), values);
  if (!inserted) {
    for (std::size_t i = 0; i < values.size(); ++i) it->second[i] += values[i];
  }
}

void drop_negligible(DiagonalMatrix& m) {
  double largest = 0;
  for (const auto& [d, values] : m.diagonals)
    for (const auto& v : values) largest = std::max(largest, std::abs(v));
  std::erase_if(m.diagonals, [&](const auto& entry) {
    return std::all_of(entry.second.begin(), entry.second.end(),
                       [&](const Complex& v) { return std::abs(v) <= largest * 0x1p-40; });
  });
}

void scale_by(DiagonalMatrix& m, double factor) {
  for (auto& [d, values] : m.diagonals)
    for (auto& v : values) v *= factor;
}

// Stages h in `order`, merged into `levels` groups of near-equal size (earlier groups take the extra stages).
std::vector<DiagonalMatrix> grouped(const math::SpecialFftTables& tables, const std::vector<std::size_t>& order,
                                    int levels, double scalar, bool inverse) {
  const std::size_t stages = order.size();
  require<ParameterError>(levels >= 1 && static_cast<std::size_t>(levels) <= std::max<std::size_t>(stages, 1),
                          "bootstrapping: a homomorphic DFT over {} slots has {} butterfly stages; its level budget "
                          "{} must be between 1 and {}",
                          tables.slots(), stages, levels, std::max<std::size_t>(stages, 1));
  const double per_group = std::pow(scalar, 1.0 / levels);
  std::vector<DiagonalMatrix> groups;
  std::size_t next = 0;
  for (int g = 0; g < levels; ++g) {
    const std::size_t size = stages / levels + (static_cast<std::size_t>(g) < stages % levels ? 1 : 0);
    DiagonalMatrix m{tables.slots(), {}};
    m.diagonals.emplace(0, std::vector<Complex>(tables.slots(), Complex(1.0)));  // identity
    for (std::size_t s = 0; s < size; ++s, ++next) {
      const std::size_t h = order[next];
      m = compose(inverse ? inverse_fft_stage(tables, h) : fft_stage(tables, h), m);
    }
    scale_by(m, per_group);
    drop_negligible(m);
    groups.push_back(std::move(m));
  }
  return groups;
}

}  // namespace

DiagonalMatrix compose(const DiagonalMatrix& a, const DiagonalMatrix& b) {
  require(a.slots == b.slots, "composing diagonal matrices over {} and {} slots", a.slots, b.slots);
  // diag(x) R^p diag(y) R^q = diag(x * R^p y) R^(p + q).
  DiagonalMatrix out{a.slots, {}};
  for (const auto& [p, x] : a.diagonals) {
    for (const auto& [q, y] : b.diagonals) {
      std::vector<Complex> product = rotated(y, p);
      for (std::size_t i = 0; i < product.size(); ++i) product[i] *= x[i];
      add_to(out, p + q, product);
    }
  }
  return out;
}

std::vector<Complex> apply_matrix(const DiagonalMatrix& a, const std::vector<Complex>& v) {
  std::vector<Complex> out(a.slots);
  for (const auto& [d, diag] : a.diagonals) {
    const auto r = rotated(v, d);
    for (std::size_t i = 0; i < a.slots; ++i) out[i] += diag[i] * r[i];
  }
  return out;
}

// Forward stage h: for i = start + j, j < h: out_i = v_i + w_j v_(i+h); out_(i+h) = v_i - w_j v_(i+h), where
// w_j = twiddles[h + j].
DiagonalMatrix fft_stage(const math::SpecialFftTables& tables, std::size_t h) {
  const std::size_t n = tables.slots();
  const auto tw = tables.twiddles();
  std::vector<Complex> d0(n), up(n), down(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = i % (2 * h);
    if (j < h) {
      d0[i] = 1.0;
      up[i] = tw[h + j];
    } else {
      d0[i] = -tw[h + j - h];
      down[i] = 1.0;
    }
  }
  DiagonalMatrix m{n, {}};
  add_to(m, 0, d0);
  add_to(m, static_cast<std::int64_t>(h), up);
  add_to(m, -static_cast<std::int64_t>(h), down);
  return m;
}

// Inverse stage h: v_i = (a + b) / 2, v_(i+h) = (a - b) conj(w_j) / 2 for a = out_i, b = out_(i+h).
DiagonalMatrix inverse_fft_stage(const math::SpecialFftTables& tables, std::size_t h) {
  const std::size_t n = tables.slots();
  const auto tw = tables.twiddles();
  std::vector<Complex> d0(n), up(n), down(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = i % (2 * h);
    if (j < h) {
      d0[i] = 0.5;
      up[i] = 0.5;
    } else {
      const Complex c = std::conj(tw[h + j - h]) * 0.5;
      d0[i] = -c;
      down[i] = c;
    }
  }
  DiagonalMatrix m{n, {}};
  add_to(m, 0, d0);
  add_to(m, static_cast<std::int64_t>(h), up);
  add_to(m, -static_cast<std::int64_t>(h), down);
  return m;
}

std::vector<DiagonalMatrix> coeff_to_slot_matrices(const math::SpecialFftTables& tables, int levels, double scalar) {
  std::vector<std::size_t> order;
  for (std::size_t h = tables.slots() / 2; h >= 1; h /= 2) order.push_back(h);
  return grouped(tables, order, levels, scalar, true);
}

std::vector<DiagonalMatrix> slot_to_coeff_matrices(const math::SpecialFftTables& tables, int levels, double scalar) {
  std::vector<std::size_t> order;
  for (std::size_t h = 1; h < tables.slots(); h *= 2) order.push_back(h);
  return grouped(tables, order, levels, scalar, false);
}

std::size_t BsgsPlan::rotations() const {
  std::size_t count = 0;
  for (auto b : babies) count += b != 0 ? 1 : 0;
  for (const auto& [g, bs] : giants) count += g != 0 ? 1 : 0;
  return count;
}

BsgsPlan plan_bsgs(const DiagonalMatrix& matrix) {
  const auto n = static_cast<std::int64_t>(matrix.slots);
  std::vector<std::int64_t> offsets;  // signed, in (-n/2, n/2]
  for (const auto& [d, values] : matrix.diagonals) offsets.push_back(d > n / 2 ? d - n : d);
  BsgsPlan best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (std::int64_t stride = 1; stride <= std::max<std::int64_t>(n, 1); stride *= 2) {
    BsgsPlan plan;
    plan.stride = stride;
    for (const std::int64_t d : offsets) {
      const std::int64_t giant = (d >= 0 ? d / stride : -((-d + stride - 1) / stride)) * stride;
      plan.giants[giant].push_back(d - giant);
      plan.babies.push_back(d - giant);
    }
    std::sort(plan.babies.begin(), plan.babies.end());
    plan.babies.erase(std::unique(plan.babies.begin(), plan.babies.end()), plan.babies.end());
    double cost = 0;
    for (auto b : plan.babies) cost += b != 0 ? 1.0 : 0.0;
    for (const auto& [g, bs] : plan.giants) cost += g != 0 ? 1.5 : 0.0;
    if (cost < best_cost) {
      best_cost = cost;
      best = std::move(plan);
    }
  }
  return best;
}

std::vector<Complex> bsgs_diagonal(const DiagonalMatrix& matrix, std::int64_t giant, std::int64_t baby) {
  const auto& diag = matrix.diagonals.at(wrap(giant + baby, matrix.slots));
  return rotated(diag, -giant);
}

}  // namespace cerium::ckks::bootstrap_detail
