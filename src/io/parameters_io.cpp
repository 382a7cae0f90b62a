// Parameters: the configuration and the primes. Loading re-derives the primes from the configuration, so stored
// primes are only a check that both sides generate the same ones.

#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/io/serialize.hpp"
#include "fields.hpp"
#include "object.hpp"

namespace cerium::io {
namespace {

// Bounds that keep a hostile configuration from asking for endless prime searches before Parameters validates it.
constexpr std::uint32_t max_primes = 256;  // expand_uniform's limb bound

void write_primes(wire::Writer& writer, std::span<const std::uint32_t> primes) {
  writer.u32(static_cast<std::uint32_t>(primes.size()));
  for (const std::uint32_t q : primes) writer.u32(q);
}

std::vector<std::uint32_t> read_primes(wire::Reader& reader, std::string_view what) {
  const std::uint32_t count = reader.u32(what);
  require<SerializationError>(count <= max_primes, "{}: {} primes, at most {} are supported", what, count, max_primes);
  std::vector<std::uint32_t> primes(count);
  for (auto& q : primes) q = reader.u32(what);
  return primes;
}

std::int32_t read_bounded(wire::Reader& reader, std::string_view field, std::int32_t lo, std::int32_t hi) {
  const std::int32_t v = reader.i32(field);
  require<SerializationError>(v >= lo && v <= hi, "{} = {} is out of range [{}, {}]", field, v, lo, hi);
  return v;
}

void require_same(std::span<const std::uint32_t> stored, std::span<const std::uint32_t> derived,
                  std::string_view what) {
  require<SerializationError>(stored.size() == derived.size(),
                              "the stored parameters have {} {} but their configuration gives {}", stored.size(), what,
                              derived.size());
  for (std::size_t i = 0; i < stored.size(); ++i) {
    require<SerializationError>(stored[i] == derived[i],
                                "{} {}: stored {}, but the configuration gives {}", what, i, stored[i], derived[i]);
  }
}

}  // namespace

void save(std::ostream& out, const ckks::Parameters& parameters) {
  const ckks::CkksConfig& c = parameters.config();
  detail::write_object(out, ObjectType::parameters, parameters.fingerprint(), [&](wire::Writer& w) {
    for (const int v : {c.log_n, c.levels, c.level_width, c.level_prime_bits, c.base_primes, c.base_prime_bits,
                        c.dnum, c.special_prime_bits}) {
      w.i32(v);
    }
    w.u8(static_cast<std::uint8_t>(c.secret));
    w.i32(c.hamming_weight);
    w.u16(static_cast<std::uint16_t>(c.security));
    w.u8(c.insecure_opt_out ? 1 : 0);
    write_primes(w, parameters.q_primes());
    write_primes(w, parameters.p_primes());
    if (c.narrow_levels > 0) {  // a trailing field: parameters without narrow levels keep their earlier bytes
      w.i32(c.narrow_levels);
      w.i32(c.narrow_prime_bits);
    }
  });
}

ckks::Parameters load_parameters(std::istream& in) {
  const Header header = detail::read_header(in, ObjectType::parameters, nullptr);
  wire::Reader r = detail::payload_reader(in, header);
  ckks::CkksConfig c;
  c.log_n = read_bounded(r, "log_n", 1, 17);
  c.levels = read_bounded(r, "levels", 0, max_primes);
  c.level_width = read_bounded(r, "level_width", 1, 2);
  c.level_prime_bits = read_bounded(r, "level_prime_bits", 20, 31);
  c.base_primes = read_bounded(r, "base_primes", 1, max_primes);
  c.base_prime_bits = read_bounded(r, "base_prime_bits", 20, 31);
  c.dnum = read_bounded(r, "dnum", 1, max_primes);
  c.special_prime_bits = read_bounded(r, "special_prime_bits", 20, 31);
  const std::uint8_t secret = r.u8("the secret distribution");
  require<SerializationError>(secret <= 1, "the secret distribution is {}, expected 0 (uniform ternary) or 1 "
                              "(fixed Hamming weight)", secret);
  c.secret = static_cast<ckks::SecretDistribution>(secret);
  c.hamming_weight = read_bounded(r, "hamming_weight", 0, 1 << 17);
  const std::uint16_t security = r.u16("the security level");
  require<SerializationError>(security == 128 || security == 192 || security == 256,
                              "the security level is {}, expected 128, 192 or 256", security);
  c.security = static_cast<ckks::SecurityLevel>(security);
  c.insecure_opt_out = detail::read_flag(r, "insecure_opt_out");
  const std::vector<std::uint32_t> q = read_primes(r, "the Q primes");
  const std::vector<std::uint32_t> p = read_primes(r, "the P primes");
  if (r.left() == 8) {  // narrow levels (absent without them; other trailing bytes are refused by finish)
    c.narrow_levels = read_bounded(r, "narrow_levels", 1, c.levels);
    c.narrow_prime_bits = read_bounded(r, "narrow_prime_bits", 20, 30);
  }
  r.finish("the parameters");
  // Bounded so that a hostile configuration cannot ask for an endless prime search.
  const std::int64_t top =
      std::int64_t{c.base_primes} + c.narrow_levels + std::int64_t{c.level_width} * (c.levels - c.narrow_levels);
  require<SerializationError>(top <= max_primes, "the configuration asks for {} ciphertext primes, at most {}", top,
                              max_primes);
  try {
    ckks::Parameters parameters(c);
    require_same(q, parameters.q_primes(), "Q primes");
    require_same(p, parameters.p_primes(), "P primes");
    require<SerializationError>(parameters.fingerprint() == header.fingerprint,
                                "the parameters' fingerprint is {:#018x} but the header says {:#018x}",
                                parameters.fingerprint(), header.fingerprint);
    return parameters;
  } catch (const SerializationError&) {
    throw;
  } catch (const Error& e) {
    throw SerializationError(std::string("the stored configuration is invalid: ") + e.what());
  }
}

}  // namespace cerium::io
