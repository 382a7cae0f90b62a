// Plaintexts: level, scale, slot count and the polynomial over Q_level.

#include "cerium/core/check.hpp"
#include "cerium/io/serialize.hpp"
#include "fields.hpp"
#include "object.hpp"

namespace cerium::io {

void save(std::ostream& out, const ckks::Plaintext& plaintext) {
  require(!plaintext.empty(), "cannot save an empty plaintext");
  const ring::RnsPoly& poly = plaintext.poly();
  const auto fingerprint = plaintext.context()->parameters().fingerprint();
  detail::write_object(out, ObjectType::plaintext, fingerprint, [&](wire::Writer& w) {
    w.i32(plaintext.level());
    w.u32(static_cast<std::uint32_t>(poly.limb_count()));
    w.u32(static_cast<std::uint32_t>(poly.n()));
    w.f64(plaintext.scale());
    w.u64(plaintext.slots());
    detail::write_poly(w, poly);
  });
}

ckks::Plaintext load_plaintext(std::istream& in, const ckks::ContextPtr& context) {
  const auto fingerprint = detail::context_fingerprint(context, ObjectType::plaintext);
  const Header header = detail::read_header(in, ObjectType::plaintext, &fingerprint);
  wire::Reader r = detail::payload_reader(in, header);
  const int level = detail::read_level(r, *context, "plaintext");
  const auto& basis = context->q_basis(level);
  detail::read_exact(r, basis->size(), "the plaintext's limb count", "the limbs of its level");
  detail::read_exact(r, context->ring_degree(), "the plaintext's ring degree", "the context's N");
  const double scale = detail::read_scale(r, *context, level, "plaintext");
  const std::size_t slots = detail::read_slots(r, *context, "plaintext");
  ring::RnsPoly poly = detail::read_poly(r, basis, "the plaintext polynomial");
  r.finish("plaintext");
  return ckks::Plaintext(context, std::move(poly), level, scale, slots);
}

}  // namespace cerium::io
