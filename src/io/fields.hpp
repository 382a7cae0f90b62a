#pragma once
// Shared payload fields (internal): polynomials and the level/size/scale/slot/seed fields, each read with its
// bound checked against the context before anything is allocated.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cerium/ckks/context.hpp"
#include "cerium/math/chacha20.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "wire.hpp"

namespace cerium::io::detail {

// The limbs of poly (NTT form; a coefficient-form polynomial is converted on a copy).
void write_poly(wire::Writer& writer, const ring::RnsPoly& poly);
// A polynomial over `basis` in NTT form; every word must be below its prime.
ring::RnsPoly read_poly(wire::Reader& reader, const ring::RnsBasisPtr& basis, std::string_view field);

void write_seed(wire::Writer& writer, const math::Seed& seed);
math::Seed read_seed(wire::Reader& reader, std::string_view field);

// A level in [0, max_level].
int read_level(wire::Reader& reader, const ckks::Context& context, std::string_view what);
// A u32 that must equal `expected` (limb counts, N, digit counts); `field` names it.
void read_exact(wire::Reader& reader, std::uint64_t expected, std::string_view field, std::string_view why);
// A finite scale > 0.
// Finite, at least 1 and below Q at the level (ckks::scale_problem); SerializationError otherwise.
double read_scale(wire::Reader& reader, const ckks::Context& context, int level, std::string_view what);
// A slot count: a power of two in [1, N/2].
std::size_t read_slots(wire::Reader& reader, const ckks::Context& context, std::string_view what);
// A boolean byte (0 or 1).
bool read_flag(wire::Reader& reader, std::string_view field);

}  // namespace cerium::io::detail
