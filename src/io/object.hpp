#pragma once
// Framing of one object (internal): the header of format.hpp around a payload.

#include <cstdint>
#include <istream>
#include <ostream>

#include "cerium/ckks/context.hpp"
#include "cerium/io/format.hpp"
#include "wire.hpp"

namespace cerium::io::detail {

void write_header(std::ostream& out, const Header& header);

// Reads and checks the header: magic, version, type == expected; the fingerprint against `fingerprint` unless
// that is null (parameters check theirs after re-deriving). Returns the header and leaves `in` at the payload.
Header read_header(std::istream& in, ObjectType expected, const std::uint64_t* fingerprint);

// Writes header + payload; `payload(Writer&)` runs twice, first only counting bytes.
template <class Payload>
void write_object(std::ostream& out, ObjectType type, std::uint64_t fingerprint, Payload&& payload) {
  wire::Writer counter(nullptr);
  payload(counter);
  write_header(out, Header{.type = type, .fingerprint = fingerprint, .payload_length = counter.written()});
  wire::Writer writer(&out);
  payload(writer);
}

// The context's fingerprint, after checking that there is a context (InvalidArgument otherwise).
std::uint64_t context_fingerprint(const ckks::ContextPtr& context, ObjectType type);

// Reader for the payload that follows a header just read.
inline wire::Reader payload_reader(std::istream& in, const Header& header) {
  return wire::Reader(in, header.payload_length, header_size);
}

}  // namespace cerium::io::detail
