#include "dft_matrices.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "cerium/core/check.hpp"

namespace cerium::boot::dft {

using circuits::Complex;
using circuits::DiagonalMatrix;

namespace {

// A butterfly stage over pairs (i, i + h), i = start + j, j < h: the diagonals 0, +h, -h, with `upper(j)` giving
// (out_i's coefficient of v_i, of v_(i+h)) and `lower(j)` (out_(i+h)'s coefficient of v_(i+h), of v_i).
template <class Upper, class Lower>
DiagonalMatrix butterfly_stage(std::size_t n, std::size_t h, Upper upper, Lower lower) {
  std::vector<Complex> d0(n), up(n), down(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = i % (2 * h);
    if (j < h) {
      std::tie(d0[i], up[i]) = upper(j);
    } else {
      std::tie(d0[i], down[i]) = lower(j - h);
    }
  }
  DiagonalMatrix m{n, {}};
  m.add_diagonal(0, std::move(d0));
  m.add_diagonal(static_cast<std::int64_t>(h), std::move(up));
  m.add_diagonal(-static_cast<std::int64_t>(h), std::move(down));
  return m;
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
    DiagonalMatrix m = DiagonalMatrix::identity(tables.slots());
    for (std::size_t s = 0; s < size; ++s, ++next) {
      const std::size_t h = order[next];
      m = circuits::compose(inverse ? inverse_fft_stage(tables, h) : fft_stage(tables, h), m);
    }
    circuits::scale_by(m, per_group);
    circuits::drop_negligible(m, 0x1p-40);
    groups.push_back(std::move(m));
  }
  return groups;
}

}  // namespace

// Forward stage h: out_i = v_i + w_j v_(i+h); out_(i+h) = v_i - w_j v_(i+h), where w_j = twiddles[h + j].
DiagonalMatrix fft_stage(const math::SpecialFftTables& tables, std::size_t h) {
  const auto tw = tables.twiddles();
  return butterfly_stage(
      tables.slots(), h, [&](std::size_t j) { return std::pair<Complex, Complex>(1.0, tw[h + j]); },
      [&](std::size_t j) { return std::pair<Complex, Complex>(-tw[h + j], 1.0); });
}

// Inverse stage h: v_i = (a + b) / 2, v_(i+h) = (a - b) conj(w_j) / 2 for a = out_i, b = out_(i+h).
DiagonalMatrix inverse_fft_stage(const math::SpecialFftTables& tables, std::size_t h) {
  const auto tw = tables.twiddles();
  return butterfly_stage(
      tables.slots(), h, [](std::size_t) { return std::pair<Complex, Complex>(0.5, 0.5); },
      [&](std::size_t j) {
        const Complex c = std::conj(tw[h + j]) * 0.5;
        return std::pair<Complex, Complex>(-c, c);
      });
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

circuits::DiagonalMatrix lower_half_output(const circuits::DiagonalMatrix& m) {
  const std::size_t n = m.slots;
  circuits::DiagonalMatrix out{.slots = 2 * n, .diagonals = {}};
  for (const std::int64_t d : m.offsets()) {
    std::vector<circuits::Complex> values = m.expanded(d);
    values.resize(2 * n, circuits::Complex(0.0, 0.0));
    out.add_diagonal(d, std::move(values));
  }
  return out;
}

circuits::DiagonalMatrix joined_input(const circuits::DiagonalMatrix& m) {
  const std::size_t n = m.slots;
  const auto wide = static_cast<std::int64_t>(2 * n);
  std::map<std::int64_t, std::vector<circuits::Complex>> diagonals;
  const auto put = [&](std::size_t row, std::int64_t column, circuits::Complex value) {
    auto [it, fresh] = diagonals.try_emplace(circuits::wrap_offset(column - static_cast<std::int64_t>(row), 2 * n));
    if (fresh) it->second.assign(2 * n, circuits::Complex(0.0, 0.0));
    it->second[row] += value;
  };
  for (const std::int64_t d : m.offsets()) {
    const std::vector<circuits::Complex> values = m.expanded(d);
    for (std::size_t row = 0; row < 2 * n; ++row) {
      const std::size_t i = row % n;  // both halves of the output are m's rows
      const auto column = circuits::wrap_offset(static_cast<std::int64_t>(i) + d, n);
      put(row, column, values[i]);                                       // r, in the lower half of the input
      put(row, column + wide / 2, values[i] * circuits::Complex(0, 1));  // i s, in the upper half
    }
  }
  circuits::DiagonalMatrix out{.slots = 2 * n, .diagonals = {}};
  for (auto& [offset, values] : diagonals) out.add_diagonal(offset, std::move(values));
  return out;
}

}  // namespace cerium::boot::dft
