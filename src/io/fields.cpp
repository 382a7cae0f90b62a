#include "fields.hpp"

#include "cerium/ckks/scale.hpp"

#include <bit>
#include <cmath>

#include "cerium/core/check.hpp"

namespace cerium::io::detail {

void write_poly(wire::Writer& writer, const ring::RnsPoly& poly) {
  if (poly.form() != ring::PolyForm::ntt) {
    ring::RnsPoly copy = poly.clone();
    copy.to_ntt();
    write_poly(writer, copy);
    return;
  }
  for (std::size_t i = 0; i < poly.limb_count(); ++i) writer.words(poly.limb(i));
}

ring::RnsPoly read_poly(wire::Reader& reader, const ring::RnsBasisPtr& basis, std::string_view field) {
  // Fail before allocating when the payload cannot hold the polynomial.
  const std::uint64_t size = std::uint64_t{basis->size()} * basis->ring_degree() * sizeof(std::uint32_t);
  require<SerializationError>(size <= reader.left(),
                              "{} at offset {} needs {} bytes ({} limbs of N = {}) but the payload length leaves {}",
                              field, reader.offset(), size, basis->size(), basis->ring_degree(), reader.left());
  ring::RnsPoly poly(basis, ring::PolyOptions{.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
  for (std::size_t i = 0; i < basis->size(); ++i) {
    const auto limb = poly.limb(i);
    const std::uint64_t start = reader.offset();
    reader.words(limb, field);
    const std::uint32_t q = basis->prime(i);
    bool bad = false;
    for (const std::uint32_t w : limb) bad |= w >= q;
    if (!bad) continue;
    for (std::size_t j = 0; j < limb.size(); ++j) {
      require<SerializationError>(limb[j] < q,
                                  "{}: coefficient {} of limb {} (offset {}) is {}, not below its prime {}", field, j,
                                  i, start + 4 * j, limb[j], q);
    }
  }
  return poly;
}

void write_seed(wire::Writer& writer, const math::Seed& seed) {
  for (const std::uint32_t w : seed.words) writer.u32(w);
}

math::Seed read_seed(wire::Reader& reader, std::string_view field) {
  math::Seed seed;
  for (auto& w : seed.words) w = reader.u32(field);
  return seed;
}

int read_level(wire::Reader& reader, const ckks::Context& context, std::string_view what) {
  const std::int32_t level = reader.i32("the level");
  require<SerializationError>(level >= 0 && level <= context.max_level(),
                              "{}: level {} is out of range [0, {}]", what, level, context.max_level());
  return level;
}

void read_exact(wire::Reader& reader, std::uint64_t expected, std::string_view field, std::string_view why) {
  const std::uint32_t value = reader.u32(field);
  require<SerializationError>(value == expected, "{} is {}, expected {} ({})", field, value, expected, why);
}

double read_scale(wire::Reader& reader, const ckks::Context& context, int level, std::string_view what) {
  const double scale = reader.f64("the scale");
  const std::string problem = ckks::scale_problem(scale, context.q_basis(level)->log2_product());
  require<SerializationError>(problem.empty(), "{} at level {}: {}", what, level, problem);
  return scale;
}

std::size_t read_slots(wire::Reader& reader, const ckks::Context& context, std::string_view what) {
  const std::uint64_t slots = reader.u64("the slot count");
  const std::uint64_t max = context.parameters().max_slots();
  require<SerializationError>(slots >= 1 && slots <= max && std::has_single_bit(slots),
                              "{}: slot count {} must be a power of two in [1, N/2 = {}]", what, slots, max);
  return static_cast<std::size_t>(slots);
}

bool read_flag(wire::Reader& reader, std::string_view field) {
  const std::uint8_t v = reader.u8(field);
  require<SerializationError>(v <= 1, "{} is {}, expected 0 or 1", field, v);
  return v == 1;
}

}  // namespace cerium::io::detail
