#pragma once
// A gzip (or plain) file through zlib, closed by its handle (internal to cerium_io).

#include <zlib.h>

#include <filesystem>
#include <memory>

#include "cerium/core/check.hpp"

namespace cerium::io::detail {

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// SerializationError naming the file (what: "IDX", "digits") when it cannot be opened.
inline GzFile open_gz(const std::filesystem::path& path, const char* mode, const char* what) {
  GzFile f(gzopen(path.c_str(), mode));
  require<SerializationError>(f != nullptr, "{} {}: cannot open the file for {}", what, path.string(),
                              mode[0] == 'r' ? "reading" : "writing");
  return f;
}

}  // namespace cerium::io::detail
