#include <algorithm>

#include "cerium/core/check.hpp"
#include "object.hpp"

namespace cerium::io {

std::string_view to_string(ObjectType type) {
  switch (type) {
    case ObjectType::parameters: return "parameters";
    case ObjectType::plaintext: return "plaintext";
    case ObjectType::ciphertext: return "ciphertext";
    case ObjectType::secret_key: return "secret key";
    case ObjectType::public_key: return "public key";
    case ObjectType::relinearization_key: return "relinearization key";
    case ObjectType::galois_keys: return "Galois keys";
  }
  return "unknown";
}

namespace detail {

void write_header(std::ostream& out, const Header& header) {
  wire::Writer writer(&out);
  writer.bytes(format_magic.data(), format_magic.size());
  writer.u16(header.version);
  writer.u16(static_cast<std::uint16_t>(header.type));
  writer.u64(header.fingerprint);
  writer.u64(header.payload_length);
}

Header read_header(std::istream& in, ObjectType expected, const std::uint64_t* fingerprint) {
  const auto what = to_string(expected);
  wire::Reader reader(in, header_size, 0);
  char magic[4] = {};
  reader.bytes(magic, sizeof magic, "the magic number");
  require<SerializationError>(std::equal(magic, magic + 4, format_magic.begin()),
                              "not Cerium data: the magic number is {:02x} {:02x} {:02x} {:02x}, expected \"CERI\"",
                              static_cast<unsigned char>(magic[0]), static_cast<unsigned char>(magic[1]),
                              static_cast<unsigned char>(magic[2]), static_cast<unsigned char>(magic[3]));
  Header header;
  header.version = reader.u16("the format version");
  require<SerializationError>(header.version == format_version,
                              "format version {} is not supported: this library reads version {}", header.version,
                              format_version);
  const std::uint16_t type = reader.u16("the object type");
  header.type = static_cast<ObjectType>(type);
  require<SerializationError>(header.type == expected, "expected a {} (type {}), found type {} ({})", what,
                              static_cast<unsigned>(expected), type, to_string(header.type));
  header.fingerprint = reader.u64("the parameter fingerprint");
  if (fingerprint != nullptr) {
    require<SerializationError>(header.fingerprint == *fingerprint,
                                "this {} belongs to other parameters: fingerprint {:#018x}, the context's is {:#018x}",
                                what, header.fingerprint, *fingerprint);
  }
  header.payload_length = reader.u64("the payload length");
  return header;
}

std::uint64_t context_fingerprint(const ckks::ContextPtr& context, ObjectType type) {
  require(context != nullptr, "loading a {} needs a context", to_string(type));
  return context->parameters().fingerprint();
}

}  // namespace detail
}  // namespace cerium::io
