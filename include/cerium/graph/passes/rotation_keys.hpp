#pragma once
// Rotation-key inference: exactly the Galois elements a program's rotations and conjugations need, so that the
// key generator makes only those (KeyGenerator::galois_keys(keys.steps, keys.conjugation)), with their size.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/graph/program.hpp"

namespace cerium::graph {

// The rotation keys a program needs (see the file comment).
struct RotationKeys {
  std::vector<std::int64_t> steps;              // distinct rotation steps, increasing (each in [1, slots))
  bool conjugation = false;                     // the conjugation key is needed
  std::vector<std::uint32_t> galois_elements;   // one per key, increasing
  std::size_t bytes = 0;                        // of the keys, stored as `storage` says
};

// `available`: the steps the user will generate keys for; a rotation that needs another step is a MissingKeyError
// naming its node. Without it, every needed step is reported.
RotationKeys infer_rotation_keys(const Program& program, const std::optional<std::vector<std::int64_t>>& available,
                                 bool conjugation_available, ckks::KeyStorage storage);

// Bytes of one switching key of the context (all digits), stored expanded or seeded.
std::size_t switching_key_bytes(const ckks::Context& context, ckks::KeyStorage storage);

}  // namespace cerium::graph
