#include "wire.hpp"

#include <bit>
#include <cstring>

#include "cerium/core/check.hpp"

namespace cerium::io::wire {
namespace {

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big,
              "mixed-endian hosts are not supported");

template <class U>
U to_little(U v) {
  if constexpr (std::endian::native == std::endian::big) {
    U r = 0;
    for (std::size_t i = 0; i < sizeof(U); ++i) r = static_cast<U>((r << 8) | ((v >> (8 * i)) & 0xff));
    return r;
  }
  return v;
}

}  // namespace

void Writer::bytes(const void* data, std::size_t size) {
  written_ += size;
  if (out_ == nullptr) return;
  out_->write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  require<SystemError>(out_->good(), "writing {} bytes failed (stream error after {} bytes)", size, written_ - size);
}

void Writer::u16(std::uint16_t v) {
  v = to_little(v);
  bytes(&v, sizeof v);
}
void Writer::u32(std::uint32_t v) {
  v = to_little(v);
  bytes(&v, sizeof v);
}
void Writer::u64(std::uint64_t v) {
  v = to_little(v);
  bytes(&v, sizeof v);
}
void Writer::f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }

void Writer::words(std::span<const std::uint32_t> v) {
  if constexpr (std::endian::native == std::endian::little) {
    bytes(v.data(), v.size_bytes());
  } else {
    for (const std::uint32_t w : v) u32(w);
  }
}

void Reader::bytes(void* data, std::size_t size, std::string_view field) {
  require<SerializationError>(size <= left_,
                              "{} at offset {} needs {} bytes but the payload length leaves only {} "
                              "(payload length too small or a count too large)",
                              field, offset_, size, left_);
  in_.read(static_cast<char*>(data), static_cast<std::streamsize>(size));
  const auto got = static_cast<std::uint64_t>(in_.gcount());
  require<SerializationError>(got == size, "truncated input: {} at offset {} needs {} bytes, only {} remain", field,
                              offset_, size, got);
  left_ -= size;
  offset_ += size;
}

std::uint8_t Reader::u8(std::string_view field) {
  std::uint8_t v = 0;
  bytes(&v, 1, field);
  return v;
}
std::uint16_t Reader::u16(std::string_view field) {
  std::uint16_t v = 0;
  bytes(&v, sizeof v, field);
  return to_little(v);
}
std::uint32_t Reader::u32(std::string_view field) {
  std::uint32_t v = 0;
  bytes(&v, sizeof v, field);
  return to_little(v);
}
std::uint64_t Reader::u64(std::string_view field) {
  std::uint64_t v = 0;
  bytes(&v, sizeof v, field);
  return to_little(v);
}
double Reader::f64(std::string_view field) { return std::bit_cast<double>(u64(field)); }

void Reader::words(std::span<std::uint32_t> out, std::string_view field) {
  bytes(out.data(), out.size_bytes(), field);
  if constexpr (std::endian::native == std::endian::big) {
    for (auto& w : out) w = to_little(w);
  }
}

void Reader::finish(std::string_view what) const {
  require<SerializationError>(left_ == 0, "{}: {} trailing bytes inside the payload at offset {} (the payload length "
                              "is larger than what the {} holds)", what, left_, offset_, what);
}

}  // namespace cerium::io::wire
