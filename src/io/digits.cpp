#include "cerium/io/digits.hpp"

#include <charconv>
#include <string>
#include <system_error>

#include "cerium/core/check.hpp"
#include "gz_file.hpp"

namespace cerium::io {

LabeledImages load_digits(const std::filesystem::path& path) {
  require(std::filesystem::exists(path),
          "digits: {} does not exist: install Debian's python3-sklearn (it ships digits.csv.gz) or pass the file",
          path.string());
  const detail::GzFile f = detail::open_gz(path, "rb", "digits");
  LabeledImages out{.count = 0, .height = 8, .width = 8, .pixels = {}, .labels = {}};
  char buffer[1024];
  std::size_t line = 0;
  while (gzgets(f.get(), buffer, sizeof buffer) != nullptr) {
    ++line;
    std::string text(buffer);
    require<SerializationError>(text.size() < sizeof buffer - 1 || text.back() == '\n',
                                "digits {}: line {} is longer than any image's", path.string(), line);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    if (text.empty()) continue;
    std::size_t field = 0;
    const char* p = text.data();
    const char* end = text.data() + text.size();
    while (true) {
      int value = 0;
      const auto [next, error] = std::from_chars(p, end, value);
      require<SerializationError>(error == std::errc{} && (next == end || *next == ','),
                                  "digits {}: line {}, field {} is not an integer", path.string(), line, field + 1);
      const bool label = field == 64;
      require<SerializationError>(field <= 64 && value >= 0 && value <= (label ? 9 : 16),
                                  "digits {}: line {}, field {} holds {} (pixels 0..16, then a label 0..9, 65 "
                                  "fields)",
                                  path.string(), line, field + 1, value);
      (label ? out.labels : out.pixels).push_back(static_cast<std::uint8_t>(value));
      ++field;
      if (next == end) break;
      p = next + 1;
    }
    require<SerializationError>(field == 65, "digits {}: line {} has {} fields; an image has 64 and a label",
                                path.string(), line, field);
    ++out.count;
  }
  require<SerializationError>(out.count > 0, "digits {}: no images", path.string());
  return out;
}

}  // namespace cerium::io
