#include "cerium/io/weights.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "cerium/core/check.hpp"

namespace cerium::io {
namespace {

constexpr char kMagic[4] = {'C', 'R', 'W', 'T'};
constexpr std::uint32_t kVersion = 1;

std::uint64_t fnv1a(const unsigned char* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

template <class T>
void put(std::vector<unsigned char>& out, T value) {
  static_assert(std::endian::native == std::endian::little, "weight files are little-endian; so is every target here");
  const auto* p = reinterpret_cast<const unsigned char*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

struct Reader {
  const std::vector<unsigned char>& bytes;
  std::size_t end;  // the checksum's position
  const std::string& source;
  std::size_t at = 0;

  template <class T>
  T get(const char* what) {
    require<SerializationError>(end - at >= sizeof(T), "weight file {}: truncated in {} at byte {}", source, what, at);
    T value;
    std::memcpy(&value, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return value;
  }
};

}  // namespace

void WeightFile::add(const std::string& name, std::vector<std::uint64_t> dims, std::vector<double> values) {
  require(!name.empty(), "weight file: a tensor needs a name");
  std::uint64_t count = 1;
  for (const auto d : dims) count *= d;
  require(count == values.size(), "weight file: tensor '{}' has {} values for dimensions of {}", name, values.size(),
          count);
  for (const double v : values) require(std::isfinite(v), "weight file: tensor '{}' holds a value that is not finite", name);
  tensors_[name] = WeightTensor{std::move(dims), std::move(values)};
}

const std::vector<double>& WeightFile::values(const std::string& name, const std::vector<std::uint64_t>& dims) const {
  const auto it = tensors_.find(name);
  require<MismatchError>(it != tensors_.end(), "weight file: no tensor '{}' ({} tensors in the file)", name,
                         tensors_.size());
  const auto describe = [](const std::vector<std::uint64_t>& d) {
    std::string s;
    for (const auto v : d) s += (s.empty() ? "" : "x") + std::to_string(v);
    return s.empty() ? std::string("a scalar") : s;
  };
  require<MismatchError>(it->second.dims == dims, "weight file: tensor '{}' is {}; the model expects {}", name,
                         describe(it->second.dims), describe(dims));
  return it->second.values;
}

std::vector<unsigned char> WeightFile::to_bytes() const {
  std::vector<unsigned char> out(std::begin(kMagic), std::end(kMagic));
  put(out, kVersion);
  put(out, static_cast<std::uint32_t>(tensors_.size()));
  for (const auto& [name, t] : tensors_) {
    put(out, static_cast<std::uint32_t>(name.size()));
    out.insert(out.end(), name.begin(), name.end());
    put(out, static_cast<std::uint32_t>(t.dims.size()));
    for (const auto d : t.dims) put(out, d);
    for (const double v : t.values) put(out, v);
  }
  put(out, fnv1a(out.data(), out.size()));
  return out;
}

WeightFile WeightFile::from_bytes(const std::vector<unsigned char>& bytes, const std::string& source) {
  require<SerializationError>(bytes.size() >= 4 + 4 + 4 + 8, "weight file {}: {} bytes is too short for a header",
                              source, bytes.size());
  require<SerializationError>(std::memcmp(bytes.data(), kMagic, 4) == 0, "weight file {}: not a weight file (magic)",
                              source);
  const std::size_t end = bytes.size() - 8;
  std::uint64_t stored;
  std::memcpy(&stored, bytes.data() + end, 8);
  require<SerializationError>(stored == fnv1a(bytes.data(), end),
                              "weight file {}: the checksum does not match (the file is corrupted or truncated)", source);
  Reader r{bytes, end, source, 4};
  const auto version = r.get<std::uint32_t>("the version");
  require<SerializationError>(version == kVersion, "weight file {}: version {}; this build reads version {}", source,
                              version, kVersion);
  const auto count = r.get<std::uint32_t>("the tensor count");
  WeightFile file;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto name_size = r.get<std::uint32_t>("a name's length");
    require<SerializationError>(name_size >= 1 && name_size <= end - r.at,
                                "weight file {}: tensor {}'s name of {} bytes does not fit", source, i, name_size);
    std::string name(reinterpret_cast<const char*>(bytes.data() + r.at), name_size);
    r.at += name_size;
    const auto rank = r.get<std::uint32_t>("a dimension count");
    require<SerializationError>(rank <= 8, "weight file {}: tensor '{}' has {} dimensions; at most 8", source, name,
                                rank);
    std::vector<std::uint64_t> dims;
    std::uint64_t values = 1;
    for (std::uint32_t d = 0; d < rank; ++d) {
      dims.push_back(r.get<std::uint64_t>("a dimension"));
      require<SerializationError>(dims.back() >= 1 && dims.back() <= (end - r.at) / 8 && values <= (end - r.at) / 8,
                                  "weight file {}: tensor '{}' dimension {} ({}) does not fit in the file", source, name,
                                  d, dims.back());
      values *= dims.back();
    }
    require<SerializationError>(values <= (end - r.at) / 8, "weight file {}: tensor '{}' declares {} values; the file "
                                "holds fewer", source, name, values);
    std::vector<double> v(values);
    std::memcpy(v.data(), bytes.data() + r.at, values * 8);
    r.at += values * 8;
    require<SerializationError>(!file.contains(name), "weight file {}: tensor '{}' appears twice", source, name);
    for (const double x : v) {
      require<SerializationError>(std::isfinite(x), "weight file {}: tensor '{}' holds a value that is not finite",
                                  source, name);
    }
    file.tensors_[name] = WeightTensor{std::move(dims), std::move(v)};
  }
  require<SerializationError>(r.at == end, "weight file {}: {} bytes after the last tensor", source, end - r.at);
  return file;
}

void WeightFile::save(const std::filesystem::path& path) const {
  const auto bytes = to_bytes();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  require<SerializationError>(out.good(), "weight file {}: writing failed", path.string());
}

WeightFile WeightFile::load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  require<SerializationError>(in.good(), "weight file {}: cannot open it", path.string());
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return from_bytes(bytes, path.string());
}

}  // namespace cerium::io
