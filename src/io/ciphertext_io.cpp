// Ciphertexts. A fresh secret-key encryption records the seed of its c1; it is then stored as the seed and
// stream instead of c1 (half the size) and c1 is re-expanded on loading, word for word.

#include <optional>
#include <vector>

#include "cerium/ckks/keys.hpp"
#include "cerium/core/check.hpp"
#include "cerium/io/serialize.hpp"
#include "fields.hpp"
#include "object.hpp"

namespace cerium::io {
namespace {

// The seed to store instead of c1, when the ciphertext has one that still regenerates its c1 (c1 may have been
// changed in place through part(1) without dropping the seed; storing a stale seed would corrupt the data).
std::optional<ckks::PolySeed> usable_seed(const ckks::Ciphertext& ct) {
  const auto& seed = ct.c1_seed();
  if (!seed || ct.size() < 2 || seed->stream >= ckks::max_uniform_stream) return std::nullopt;
  const ring::RnsPoly& c1 = ct.part(1);
  if (c1.form() != ring::PolyForm::ntt) return std::nullopt;
  if (ckks::expand_uniform(c1.basis_ptr(), seed->seed, seed->stream) == c1) return seed;
  return std::nullopt;
}

}  // namespace

void save(std::ostream& out, const ckks::Ciphertext& ciphertext) {
  require(!ciphertext.empty(), "cannot save an empty ciphertext");
  const auto seed = usable_seed(ciphertext);
  const ring::RnsPoly& c0 = ciphertext.part(0);
  const auto fingerprint = ciphertext.context()->parameters().fingerprint();
  detail::write_object(out, ObjectType::ciphertext, fingerprint, [&](wire::Writer& w) {
    w.i32(ciphertext.level());
    w.u32(static_cast<std::uint32_t>(ciphertext.size()));
    w.u32(static_cast<std::uint32_t>(c0.limb_count()));
    w.u32(static_cast<std::uint32_t>(c0.n()));
    w.f64(ciphertext.scale());
    w.u64(ciphertext.slots());
    w.u8(seed ? 1 : 0);
    if (seed) {
      detail::write_seed(w, seed->seed);
      w.u64(seed->stream);
    }
    for (std::size_t i = 0; i < ciphertext.size(); ++i) {
      if (!(seed && i == 1)) detail::write_poly(w, ciphertext.part(i));
    }
  });
}

ckks::Ciphertext load_ciphertext(std::istream& in, const ckks::ContextPtr& context) {
  const auto fingerprint = detail::context_fingerprint(context, ObjectType::ciphertext);
  const Header header = detail::read_header(in, ObjectType::ciphertext, &fingerprint);
  wire::Reader r = detail::payload_reader(in, header);
  const int level = detail::read_level(r, *context, "ciphertext");
  const std::uint32_t parts = r.u32("the part count");
  require<SerializationError>(parts == 2 || parts == 3, "ciphertext: {} parts, expected 2 or 3", parts);
  const auto& basis = context->q_basis(level);
  detail::read_exact(r, basis->size(), "the ciphertext's limb count", "the limbs of its level");
  detail::read_exact(r, context->ring_degree(), "the ciphertext's ring degree", "the context's N");
  const double scale = detail::read_scale(r, *context, level, "ciphertext");
  const std::size_t slots = detail::read_slots(r, *context, "ciphertext");
  std::optional<ckks::PolySeed> seed;
  if (detail::read_flag(r, "the seeded flag")) {
    ckks::PolySeed s;
    s.seed = detail::read_seed(r, "the c1 seed");
    s.stream = r.u64("the c1 stream");
    require<SerializationError>(s.stream < ckks::max_uniform_stream,
                                "ciphertext: c1 stream {} is out of range (streams are below 2^56)", s.stream);
    seed = s;
  }
  std::vector<ring::RnsPoly> polys;
  polys.reserve(parts);
  for (std::uint32_t i = 0; i < parts; ++i) {
    if (seed && i == 1) {
      polys.push_back(ring::RnsPoly());  // expanded once the stored parts are known to be there
    } else {
      polys.push_back(detail::read_poly(r, basis, i == 0 ? "c0" : i == 1 ? "c1" : "c2"));
    }
  }
  r.finish("ciphertext");
  if (seed) polys[1] = ckks::expand_uniform(basis, seed->seed, seed->stream);
  ckks::Ciphertext ciphertext(context, std::move(polys), level, scale, slots);
  ciphertext.set_c1_seed(seed);
  return ciphertext;
}

}  // namespace cerium::io
