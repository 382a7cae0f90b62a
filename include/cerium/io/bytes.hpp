#pragma once
// Whole objects as byte vectors and files: save() into memory or a file, and loads that require the input to
// hold exactly one object (trailing bytes are a SerializationError).

#include <cstdint>
#include <filesystem>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "cerium/io/serialize.hpp"

namespace cerium::io {

namespace detail {
// Throws SerializationError naming `what` unless `in` is at its end (after one object of `bytes_used` bytes).
void require_at_end(std::istream& in, std::uint64_t bytes_used, const char* what);
std::string read_file(const std::filesystem::path& path);     // SystemError when it cannot be read
void write_file(const std::filesystem::path& path, const std::string& bytes);  // SystemError on failure
}  // namespace detail

// One object saved into memory: header and payload.
template <class T>
std::vector<std::uint8_t> to_bytes(const T& object) {
  std::ostringstream out(std::ios::binary);
  save(out, object);
  const std::string text = std::move(out).str();
  return std::vector<std::uint8_t>(text.begin(), text.end());
}

// One object from exactly these bytes.
template <class T>
T from_bytes(std::span<const std::uint8_t> bytes, const ckks::ContextPtr& context = nullptr) {
  std::istringstream in(std::string(bytes.begin(), bytes.end()), std::ios::binary);
  T object = load<T>(in, context);
  detail::require_at_end(in, static_cast<std::uint64_t>(in.tellg()), "the input");
  return object;
}

// One object saved into a file, replacing it; SystemError when it cannot be written.
template <class T>
void save_file(const std::filesystem::path& path, const T& object) {
  std::ostringstream out(std::ios::binary);
  save(out, object);
  detail::write_file(path, std::move(out).str());
}

// One object from exactly the file's bytes.
template <class T>
T load_file(const std::filesystem::path& path, const ckks::ContextPtr& context = nullptr) {
  std::istringstream in(detail::read_file(path), std::ios::binary);
  T object = load<T>(in, context);
  detail::require_at_end(in, static_cast<std::uint64_t>(in.tellg()), path.string().c_str());
  return object;
}

}  // namespace cerium::io
