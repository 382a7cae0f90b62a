#include "cerium/circuits/diagonal_matrix.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "cerium/core/check.hpp"

namespace cerium::circuits {

std::int64_t wrap_offset(std::int64_t k, std::size_t n) {
  const auto m = static_cast<std::int64_t>(n);
  return ((k % m) + m) % m;
}

std::vector<Complex> tile(std::span<const Complex> values, std::size_t slots) {
  require(!values.empty() && slots % values.size() == 0,
          "tile: {} values do not divide {} slots; give all slots or a period that divides them", values.size(),
          slots);
  std::vector<Complex> out(slots);
  for (std::size_t i = 0; i < slots; ++i) out[i] = values[i % values.size()];
  return out;
}

std::vector<Complex> rotate_values(std::span<const Complex> v, std::int64_t k) {
  const std::size_t n = v.size();
  std::vector<Complex> out(n);
  if (n == 0) return out;
  const auto shift = static_cast<std::ptrdiff_t>(wrap_offset(k, n));
  std::rotate_copy(v.begin(), v.begin() + shift, v.end(), out.begin());  // out[i] = v[(i + shift) mod n]
  return out;
}

DiagonalMatrix DiagonalMatrix::from_dense(const std::vector<std::vector<Complex>>& rows) {
  const std::size_t n = rows.size();
  require(std::has_single_bit(n), "DiagonalMatrix::from_dense: {} rows; the side must be a power of two (pad the "
                                  "matrix with zeros)", n);
  for (std::size_t i = 0; i < n; ++i)
    require(rows[i].size() == n, "DiagonalMatrix::from_dense: row {} has {} entries and the matrix has {} rows; it "
                                 "must be square", i, rows[i].size(), n);
  DiagonalMatrix m{n, {}};
  for (std::size_t d = 0; d < n; ++d) {
    std::vector<Complex> diag(n);
    bool nonzero = false;
    for (std::size_t i = 0; i < n; ++i) {
      diag[i] = rows[i][(i + d) % n];
      nonzero = nonzero || diag[i] != Complex(0.0);
    }
    if (nonzero) m.diagonals.emplace(static_cast<std::int64_t>(d), std::move(diag));
  }
  return m;
}

DiagonalMatrix DiagonalMatrix::from_dense(const std::vector<std::vector<double>>& rows) {
  std::vector<std::vector<Complex>> complex_rows(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) complex_rows[i].assign(rows[i].begin(), rows[i].end());
  return from_dense(complex_rows);
}

DiagonalMatrix DiagonalMatrix::identity(std::size_t slots) {
  DiagonalMatrix m{slots, {}};
  m.diagonals.emplace(0, std::vector<Complex>(slots, Complex(1.0)));
  return m;
}

void DiagonalMatrix::add_diagonal(std::int64_t offset, std::vector<Complex> values) {
  require(slots > 0 && std::has_single_bit(slots), "DiagonalMatrix: slots = {} must be a power of two", slots);
  require(!values.empty() && slots % values.size() == 0,
          "DiagonalMatrix: a diagonal of {} values over {} slots; give all slots or a period that divides them",
          values.size(), slots);
  auto [it, inserted] = diagonals.try_emplace(wrap_offset(offset, slots), std::move(values));
  if (inserted) return;
  std::vector<Complex>& held = it->second;
  const std::vector<Complex>& added = values;
  const std::size_t period = std::max(held.size(), added.size());  // periods divide slots: powers of two
  std::vector<Complex> sum(period);
  for (std::size_t i = 0; i < period; ++i) sum[i] = held[i % held.size()] + added[i % added.size()];
  held = std::move(sum);
}

namespace {

const std::vector<Complex>& diagonal_at(const DiagonalMatrix& m, std::int64_t offset) {
  const auto it = m.diagonals.find(wrap_offset(offset, m.slots));
  require(it != m.diagonals.end(), "DiagonalMatrix: no diagonal at offset {} (mod {} slots); offsets() lists them",
          offset, m.slots);
  return it->second;
}

}  // namespace

Complex DiagonalMatrix::at(std::int64_t offset, std::size_t i) const {
  const auto& values = diagonal_at(*this, offset);
  return values[i % values.size()];
}

std::vector<Complex> DiagonalMatrix::expanded(std::int64_t offset) const {
  return tile(diagonal_at(*this, offset), slots);
}

std::size_t DiagonalMatrix::stored_values() const {
  std::size_t count = 0;
  for (const auto& [d, values] : diagonals) count += values.size();
  return count;
}

std::vector<std::int64_t> DiagonalMatrix::offsets() const {
  std::vector<std::int64_t> out;
  for (const auto& [d, values] : diagonals) out.push_back(d);
  return out;
}

DiagonalMatrix compose(const DiagonalMatrix& a, const DiagonalMatrix& b) {
  require(a.slots == b.slots, "composing diagonal matrices over {} and {} slots", a.slots, b.slots);
  // diag(x) R^p diag(y) R^q = diag(x * R^p y) R^(p + q).
  DiagonalMatrix out{a.slots, {}};
  for (const auto& [p, x] : a.diagonals) {
    const std::vector<Complex> xs = a.expanded(p);
    for (const auto& [q, y] : b.diagonals) {
      std::vector<Complex> product = rotate_values(b.expanded(q), p);
      for (std::size_t i = 0; i < product.size(); ++i) product[i] *= xs[i];
      auto [it, inserted] = out.diagonals.try_emplace(wrap_offset(p + q, out.slots), product);
      if (!inserted)
        for (std::size_t i = 0; i < product.size(); ++i) it->second[i] += product[i];
    }
  }
  return out;
}

std::vector<Complex> apply(const DiagonalMatrix& a, std::span<const Complex> v) {
  require(v.size() == a.slots, "apply: a vector of {} values to a matrix over {} slots", v.size(), a.slots);
  std::vector<Complex> out(a.slots);
  for (const auto& [d, diag] : a.diagonals) {
    const auto r = rotate_values(v, d);
    for (std::size_t i = 0; i < a.slots; ++i) out[i] += diag[i % diag.size()] * r[i];
  }
  return out;
}

void scale_by(DiagonalMatrix& m, double factor) {
  for (auto& [d, values] : m.diagonals)
    for (auto& v : values) v *= factor;
}

void drop_negligible(DiagonalMatrix& m, double relative) {
  double largest = 0;
  for (const auto& [d, values] : m.diagonals)
    for (const auto& v : values) largest = std::max(largest, std::abs(v));
  std::erase_if(m.diagonals, [&](const auto& entry) {
    return std::all_of(entry.second.begin(), entry.second.end(),
                       [&](const Complex& v) { return std::abs(v) <= largest * relative; });
  });
}

}  // namespace cerium::circuits
