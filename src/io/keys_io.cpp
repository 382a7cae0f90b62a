// Keys. The secret key is stored as its ternary coefficients (s is recomputed over the key basis); switching keys
// with seeded storage keep only the seed of their uniform halves.

#include <array>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/io/serialize.hpp"
#include "fields.hpp"
#include "object.hpp"

namespace cerium::io {
namespace {

std::uint64_t fingerprint_of(const ckks::ContextPtr& context, ObjectType type) {
  require(context != nullptr, "cannot save an empty {}", to_string(type));
  return context->parameters().fingerprint();
}

void write_switching_key(wire::Writer& w, const ckks::SwitchingKey& key) {
  const bool seeded = key.storage() == ckks::KeyStorage::seeded;
  const auto& basis = *key.context()->key_basis();
  w.u32(static_cast<std::uint32_t>(key.digit_count()));
  w.u32(static_cast<std::uint32_t>(basis.size()));
  w.u32(static_cast<std::uint32_t>(basis.ring_degree()));
  w.u8(seeded ? 1 : 0);
  w.u8(key.seed() ? 1 : 0);
  if (key.seed()) {
    detail::write_seed(w, *key.seed());
    w.u64(key.base_stream());
  }
  for (std::size_t d = 0; d < key.digit_count(); ++d) {
    detail::write_poly(w, key.b(d));
    if (!seeded) detail::write_poly(w, *key.stored_a(d));
  }
}

ckks::SwitchingKey read_switching_key(wire::Reader& r, const ckks::ContextPtr& context) {
  const std::size_t digits = context->digit_count(context->max_level());
  const auto& basis = context->key_basis();
  detail::read_exact(r, digits, "the switching key's digit count", "the digits of these parameters");
  detail::read_exact(r, basis->size(), "the switching key's limb count", "the primes of Q_top and P");
  detail::read_exact(r, context->ring_degree(), "the switching key's ring degree", "the context's N");
  const bool seeded = detail::read_flag(r, "the key storage");
  std::optional<math::Seed> seed;
  std::uint64_t base_stream = 0;
  if (detail::read_flag(r, "the has-seed flag")) {
    seed = detail::read_seed(r, "the key seed");
    base_stream = r.u64("the key's base stream");
    require<SerializationError>(base_stream < ckks::max_uniform_stream - digits,
                                "switching key: base stream {} (+ {} digits) is beyond the stream range 2^56",
                                base_stream, digits);
  }
  require<SerializationError>(!seeded || seed.has_value(), "a seeded switching key must store its seed");
  std::vector<std::array<ring::RnsPoly, 2>> parts;
  parts.reserve(digits);
  for (std::size_t d = 0; d < digits; ++d) {
    ring::RnsPoly b = detail::read_poly(r, basis, "b of a switching-key digit");
    ring::RnsPoly a = seeded ? ring::RnsPoly() : detail::read_poly(r, basis, "a of a switching-key digit");
    parts.push_back({std::move(b), std::move(a)});
  }
  return ckks::SwitchingKey(context, std::move(parts), seeded ? ckks::KeyStorage::seeded : ckks::KeyStorage::expanded,
                            seed, base_stream);
}

}  // namespace

// --- Secret key ---

void save(std::ostream& out, const ckks::SecretKey& key) {
  const auto fingerprint = fingerprint_of(key.context(), ObjectType::secret_key);
  detail::write_object(out, ObjectType::secret_key, fingerprint, [&](wire::Writer& w) {
    const auto& coefficients = key.coefficients();
    w.u32(static_cast<std::uint32_t>(coefficients.size()));
    w.bytes(coefficients.data(), coefficients.size());
  });
}

ckks::SecretKey load_secret_key(std::istream& in, const ckks::ContextPtr& context) {
  const auto fingerprint = detail::context_fingerprint(context, ObjectType::secret_key);
  const Header header = detail::read_header(in, ObjectType::secret_key, &fingerprint);
  wire::Reader r = detail::payload_reader(in, header);
  const std::size_t n = context->ring_degree();
  detail::read_exact(r, n, "the secret key's coefficient count", "the context's N");
  std::vector<std::int8_t> coefficients(n);
  r.bytes(coefficients.data(), n, "the secret key's coefficients");
  r.finish("secret key");
  std::vector<std::int64_t> wide(n);
  for (std::size_t i = 0; i < n; ++i) {
    require<SerializationError>(coefficients[i] >= -1 && coefficients[i] <= 1,
                                "secret key coefficient {} is {}, expected -1, 0 or 1", i, coefficients[i]);
    wide[i] = coefficients[i];
  }
  auto s = ring::RnsPoly::from_signed(context->key_basis(), wide, ring::PolyOptions{.form = ring::PolyForm::ntt});
  return ckks::SecretKey(context, std::move(s), std::move(coefficients));
}

// --- Public key ---

void save(std::ostream& out, const ckks::PublicKey& key) {
  const auto fingerprint = fingerprint_of(key.context(), ObjectType::public_key);
  detail::write_object(out, ObjectType::public_key, fingerprint, [&](wire::Writer& w) {
    w.u32(static_cast<std::uint32_t>(key.b().limb_count()));
    w.u32(static_cast<std::uint32_t>(key.b().n()));
    detail::write_poly(w, key.b());
    detail::write_poly(w, key.a());
  });
}

ckks::PublicKey load_public_key(std::istream& in, const ckks::ContextPtr& context) {
  const auto fingerprint = detail::context_fingerprint(context, ObjectType::public_key);
  const Header header = detail::read_header(in, ObjectType::public_key, &fingerprint);
  wire::Reader r = detail::payload_reader(in, header);
  const auto& basis = context->q_basis(context->max_level());
  detail::read_exact(r, basis->size(), "the public key's limb count", "the primes of Q_top");
  detail::read_exact(r, context->ring_degree(), "the public key's ring degree", "the context's N");
  ring::RnsPoly b = detail::read_poly(r, basis, "the public key's b");
  ring::RnsPoly a = detail::read_poly(r, basis, "the public key's a");
  r.finish("public key");
  return ckks::PublicKey(context, std::move(b), std::move(a));
}

// --- Relinearization key ---

void save(std::ostream& out, const ckks::RelinearizationKey& key) {
  const auto fingerprint = fingerprint_of(key.context(), ObjectType::relinearization_key);
  detail::write_object(out, ObjectType::relinearization_key, fingerprint,
                       [&](wire::Writer& w) { write_switching_key(w, key.key()); });
}

ckks::RelinearizationKey load_relinearization_key(std::istream& in, const ckks::ContextPtr& context) {
  const auto fingerprint = detail::context_fingerprint(context, ObjectType::relinearization_key);
  const Header header = detail::read_header(in, ObjectType::relinearization_key, &fingerprint);
  wire::Reader r = detail::payload_reader(in, header);
  ckks::RelinearizationKey key(context, read_switching_key(r, context));
  r.finish("relinearization key");
  return key;
}

// --- Galois keys ---

void save(std::ostream& out, const ckks::GaloisKeys& keys) {
  const auto fingerprint = fingerprint_of(keys.context(), ObjectType::galois_keys);
  const std::vector<std::uint32_t> elements = keys.galois_elements();  // increasing (a std::map's order)
  detail::write_object(out, ObjectType::galois_keys, fingerprint, [&](wire::Writer& w) {
    w.u32(static_cast<std::uint32_t>(elements.size()));
    for (const std::uint32_t k : elements) {
      w.u32(k);
      write_switching_key(w, keys.at(k));
    }
  });
}

ckks::GaloisKeys load_galois_keys(std::istream& in, const ckks::ContextPtr& context) {
  const auto fingerprint = detail::context_fingerprint(context, ObjectType::galois_keys);
  const Header header = detail::read_header(in, ObjectType::galois_keys, &fingerprint);
  wire::Reader r = detail::payload_reader(in, header);
  const std::uint64_t two_n = 2 * context->ring_degree();
  const std::uint32_t count = r.u32("the Galois key count");
  require<SerializationError>(count <= two_n / 2, "Galois keys: {} keys, but there are only N = {} Galois elements",
                              count, two_n / 2);
  ckks::GaloisKeys keys(context);
  std::uint64_t previous = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t k = r.u32("a Galois element");
    require<SerializationError>(k % 2 == 1 && k < two_n, "Galois element {} (key {}) must be odd and below 2N = {}", k,
                                i, two_n);
    require<SerializationError>(i == 0 || k > previous,
                                "Galois element {} (key {}) is not above the previous one, {}: elements are stored in "
                                "increasing order, once each", k, i, previous);
    previous = k;
    keys.insert(k, read_switching_key(r, context));
  }
  r.finish("Galois keys");
  return keys;
}

}  // namespace cerium::io
