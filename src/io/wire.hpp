#pragma once
// Little-endian primitives over streams (internal to the io layer).
//
// Writer either writes to a stream or only counts bytes: payloads are written twice, once to learn their length
// for the header and once for real, so that nothing is buffered. Reader reads from a stream within a byte budget
// (the header's payload length) and turns every short read into a SerializationError naming the field.

#include <cstddef>
#include <cstdint>
#include <istream>
#include <ostream>
#include <span>
#include <string_view>

namespace cerium::io::wire {

class Writer {
 public:
  explicit Writer(std::ostream* out) : out_(out) {}  // null: count only
  void u8(std::uint8_t v) { bytes(&v, 1); }
  void u16(std::uint16_t v);
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
  void f64(double v);
  void words(std::span<const std::uint32_t> v);
  void bytes(const void* data, std::size_t size);
  std::uint64_t written() const { return written_; }

 private:
  std::ostream* out_;
  std::uint64_t written_ = 0;
};

class Reader {
 public:
  // Reads at most `budget` bytes; `start` is the offset of the first one in the input (for messages).
  Reader(std::istream& in, std::uint64_t budget, std::uint64_t start) : in_(in), left_(budget), offset_(start) {}
  std::uint8_t u8(std::string_view field);
  std::uint16_t u16(std::string_view field);
  std::uint32_t u32(std::string_view field);
  std::uint64_t u64(std::string_view field);
  std::int32_t i32(std::string_view field) { return static_cast<std::int32_t>(u32(field)); }
  double f64(std::string_view field);
  void words(std::span<std::uint32_t> out, std::string_view field);
  void bytes(void* data, std::size_t size, std::string_view field);
  std::uint64_t left() const { return left_; }
  std::uint64_t offset() const { return offset_; }
  // SerializationError unless the budget is used up exactly (`what` names the object).
  void finish(std::string_view what) const;

 private:
  std::istream& in_;
  std::uint64_t left_;
  std::uint64_t offset_;
};

}  // namespace cerium::io::wire
