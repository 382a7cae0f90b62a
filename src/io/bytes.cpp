// The helpers of bytes.hpp that need no template.

#include <fstream>
#include <iterator>

#include "cerium/core/check.hpp"
#include "cerium/io/bytes.hpp"

namespace cerium::io::detail {

void require_at_end(std::istream& in, std::uint64_t bytes_used, const char* what) {
  std::uint64_t extra = 0;
  while (in.get() != std::istream::traits_type::eof()) ++extra;
  require<SerializationError>(extra == 0, "{} holds {} trailing bytes after the object's {} bytes", what, extra,
                              bytes_used);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  require<SystemError>(file.is_open(), "cannot open {} for reading", path.string());
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  require<SystemError>(!file.bad(), "reading {} failed", path.string());
  return bytes;
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  require<SystemError>(file.is_open(), "cannot open {} for writing", path.string());
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  require<SystemError>(!file.fail(), "writing {} bytes to {} failed", bytes.size(), path.string());
}

}  // namespace cerium::io::detail
