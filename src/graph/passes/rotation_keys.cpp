#include "cerium/graph/passes/rotation_keys.hpp"

#include <algorithm>
#include <set>

#include "cerium/core/check.hpp"
#include "cerium/ring/automorphism.hpp"

namespace cerium::graph {

std::size_t switching_key_bytes(const ckks::Context& context, ckks::KeyStorage storage) {
  const std::size_t digits = context.digit_count(context.max_level());
  const std::size_t limbs = context.key_basis()->size();
  const std::size_t halves = storage == ckks::KeyStorage::seeded ? 1 : 2;
  return digits * halves * limbs * context.ring_degree() * sizeof(std::uint32_t);
}

RotationKeys infer_rotation_keys(const Program& program, const std::optional<std::vector<std::int64_t>>& available,
                                 bool conjugation_available, ckks::KeyStorage storage) {
  const auto& context = *program.context();
  const std::size_t n = context.ring_degree();
  std::set<std::int64_t> steps;
  std::set<std::uint32_t> elements;
  RotationKeys keys;
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& node = program.node(id);
    if (node.op == Op::rotate) {
      if (available) {
        const auto slots = static_cast<std::int64_t>(node.slots);
        const bool found = std::any_of(available->begin(), available->end(), [&](std::int64_t s) {
          return ((s % slots) + slots) % slots == node.steps;
        });
        require<MissingKeyError>(found,
                                 "plan: {} rotates by {} steps, and the rotation keys the plan may use "
                                 "(PlanOptions::available_rotations) have no key for it; add step {}",
                                 program.describe(id), node.steps, node.steps);
      }
      steps.insert(node.steps);
      elements.insert(ring::rotation_galois_element(node.steps, n));
    } else if (node.op == Op::conjugate) {
      require<MissingKeyError>(conjugation_available,
                               "plan: {} conjugates, and the plan may not use a conjugation key "
                               "(PlanOptions::conjugation_available)",
                               program.describe(id));
      keys.conjugation = true;
      elements.insert(ring::conjugation_galois_element(n));
    }
  }
  keys.steps.assign(steps.begin(), steps.end());
  keys.galois_elements.assign(elements.begin(), elements.end());
  keys.bytes = keys.galois_elements.size() * switching_key_bytes(context, storage);
  return keys;
}

}  // namespace cerium::graph
