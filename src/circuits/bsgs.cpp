#include "cerium/circuits/bsgs.hpp"

#include <algorithm>
#include <bit>
#include <limits>

#include "cerium/core/check.hpp"

namespace cerium::circuits {

std::size_t BsgsPlan::baby_rotations() const {
  return static_cast<std::size_t>(std::count_if(babies.begin(), babies.end(), [](auto b) { return b != 0; }));
}

std::size_t BsgsPlan::giant_rotations() const {
  return static_cast<std::size_t>(
      std::count_if(giants.begin(), giants.end(), [](const auto& g) { return g.first != 0; }));
}

std::vector<std::int64_t> BsgsPlan::rotation_steps() const {
  std::vector<std::int64_t> steps;
  for (auto b : babies)
    if (b != 0) steps.push_back(b);
  for (const auto& [g, bs] : giants)
    if (g != 0) steps.push_back(g);
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

namespace {

// hoist_all (an explicit stride of at least slots): one giant, 0, and every offset a baby in [0, slots). The
// search keeps the plain split at stride = slots (negative offsets under the free giant -slots), as it always has,
// so that the plans it picks, and the words of the transforms, stay the same.
BsgsPlan plan_with_stride(const std::vector<std::int64_t>& signed_offsets, std::size_t slots, std::int64_t stride,
                          bool hoist_all) {
  BsgsPlan plan;
  plan.slots = slots;
  plan.stride = stride;
  if (hoist_all) {
    for (const std::int64_t d : signed_offsets) {
      const std::int64_t baby = wrap_offset(d, slots);
      plan.giants[0].push_back(baby);
      plan.babies.push_back(baby);
    }
    std::sort(plan.babies.begin(), plan.babies.end());
    return plan;
  }
  for (const std::int64_t d : signed_offsets) {
    const std::int64_t giant = (d >= 0 ? d / stride : -((-d + stride - 1) / stride)) * stride;
    plan.giants[giant].push_back(d - giant);
    plan.babies.push_back(d - giant);
  }
  std::sort(plan.babies.begin(), plan.babies.end());
  plan.babies.erase(std::unique(plan.babies.begin(), plan.babies.end()), plan.babies.end());
  return plan;
}

double cost(const BsgsPlan& plan, double giant_cost) {
  return static_cast<double>(plan.baby_rotations()) + giant_cost * static_cast<double>(plan.giant_rotations());
}

}  // namespace

BsgsPlan plan_bsgs(std::span<const std::int64_t> offsets, std::size_t slots, const BsgsOptions& options) {
  require(std::has_single_bit(slots), "BSGS plan: slots = {} must be a power of two", slots);
  const bool stride_ok =
      options.stride == 0 || (options.stride > 0 && std::has_single_bit(static_cast<std::uint64_t>(options.stride)));
  require(stride_ok, "BSGS plan: stride = {} must be a power of two (or 0 to search)", options.stride);
  const auto n = static_cast<std::int64_t>(slots);
  std::vector<std::int64_t> wrapped;
  for (const auto d : offsets) wrapped.push_back(wrap_offset(d, slots));
  std::sort(wrapped.begin(), wrapped.end());
  for (std::size_t i = 1; i < wrapped.size(); ++i)
    require(wrapped[i] != wrapped[i - 1], "BSGS plan: offset {} appears twice (mod {} slots)", wrapped[i], slots);
  std::vector<std::int64_t> signed_offsets;  // in (-n/2, n/2], in the order of their offsets in [0, n)
  for (const auto d : wrapped) signed_offsets.push_back(d > n / 2 ? d - n : d);
  if (options.stride != 0) return plan_with_stride(signed_offsets, slots, options.stride, options.stride >= n);
  BsgsPlan best;
  double best_cost = std::numeric_limits<double>::infinity();
  for (std::int64_t stride = 1; stride <= std::max<std::int64_t>(n, 1); stride *= 2) {
    BsgsPlan plan = plan_with_stride(signed_offsets, slots, stride, false);
    const double c = cost(plan, options.giant_cost);
    if (c < best_cost) {
      best_cost = c;
      best = std::move(plan);
    }
  }
  return best;
}

BsgsPlan plan_bsgs(const DiagonalMatrix& matrix, const BsgsOptions& options) {
  const auto offsets = matrix.offsets();
  return plan_bsgs(offsets, matrix.slots, options);
}

std::vector<Complex> bsgs_diagonal(const DiagonalMatrix& matrix, std::int64_t giant, std::int64_t baby) {
  const auto it = matrix.diagonals.find(wrap_offset(giant + baby, matrix.slots));
  require(it != matrix.diagonals.end(), "BSGS: the matrix has no diagonal at offset {} (giant {} + baby {})",
          wrap_offset(giant + baby, matrix.slots), giant, baby);
  return rotate_values(it->second, -giant);  // a period divides every giant's shift modulo itself
}

}  // namespace cerium::circuits
