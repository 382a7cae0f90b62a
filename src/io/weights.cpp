#include "cerium/io/weights.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <utility>

#include "cerium/core/check.hpp"

namespace cerium::io {
namespace {

constexpr char kMagic[4] = {'C', 'R', 'W', 'T'};
constexpr std::uint32_t kVersion = 2;          // written
constexpr std::uint32_t kVersionF64Only = 1;   // read: no element types, every value f64

std::uint64_t fnv1a(const unsigned char* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::size_t element_size(Precision p) { return p == Precision::f32 ? 4 : 8; }

template <class T>
void put(std::vector<unsigned char>& out, T value) {
  static_assert(std::endian::native == std::endian::little, "weight files are little-endian; so is every target here");
  // Resized and copied into (not inserted from a pointer range), which GCC 12 at -O3 misreads as overlapping.
  const std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

struct Reader {
  const std::vector<unsigned char>& bytes;
  std::size_t end;  // the checksum's position
  const std::string& source;
  std::size_t at = 0;

  std::size_t left() const { return end - at; }

  template <class T>
  T get(const char* what) {
    require<SerializationError>(left() >= sizeof(T), "weight file {}: truncated in {} at byte {}", source, what, at);
    T value;
    std::memcpy(&value, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return value;
  }

  Precision element_type(std::uint32_t version, const std::string& name) {
    if (version == kVersionF64Only) return Precision::f64;
    const auto code = get<std::uint32_t>("an element type");
    require<SerializationError>(code == static_cast<std::uint32_t>(Precision::f64) ||
                                    code == static_cast<std::uint32_t>(Precision::f32),
                                "weight file {}: tensor '{}' has element type {}; known are 1 (f64) and 2 (f32)",
                                source, name, code);
    return static_cast<Precision>(code);
  }

  // `count` values of the stored type, widened to double, each checked finite.
  std::vector<double> values(std::uint64_t count, Precision precision, const std::string& name) {
    const std::size_t size = element_size(precision);
    require<SerializationError>(count <= left() / size, "weight file {}: tensor '{}' declares {} values; the file "
                                "holds fewer", source, name, count);
    std::vector<double> v(count);
    if (precision == Precision::f64) {
      std::memcpy(v.data(), bytes.data() + at, count * 8);
    } else {
      for (std::size_t i = 0; i < count; ++i) {
        float f;
        std::memcpy(&f, bytes.data() + at + 4 * i, 4);
        v[i] = f;
      }
    }
    at += count * size;
    for (const double x : v) {
      require<SerializationError>(std::isfinite(x), "weight file {}: tensor '{}' holds a value that is not finite",
                                  source, name);
    }
    return v;
  }

  std::pair<std::string, WeightTensor> tensor(std::uint32_t version, std::uint32_t index) {
    const auto name_size = get<std::uint32_t>("a name's length");
    require<SerializationError>(name_size >= 1 && name_size <= left(),
                                "weight file {}: tensor {}'s name of {} bytes does not fit", source, index, name_size);
    std::string name(reinterpret_cast<const char*>(bytes.data() + at), name_size);
    at += name_size;
    const Precision precision = element_type(version, name);
    const auto rank = get<std::uint32_t>("a dimension count");
    require<SerializationError>(rank <= 8, "weight file {}: tensor '{}' has {} dimensions; at most 8", source, name,
                                rank);
    const std::size_t size = element_size(precision);
    std::vector<std::uint64_t> dims;
    std::uint64_t count = 1;
    for (std::uint32_t d = 0; d < rank; ++d) {
      dims.push_back(get<std::uint64_t>("a dimension"));
      // Bounding each factor and the running product by what is left keeps the product from overflowing.
      require<SerializationError>(dims.back() >= 1 && dims.back() <= left() / size && count <= left() / size,
                                  "weight file {}: tensor '{}' dimension {} ({}) does not fit in the file", source,
                                  name, d, dims.back());
      count *= dims.back();
    }
    std::vector<double> v = values(count, precision, name);
    return {std::move(name), WeightTensor{std::move(dims), std::move(v), precision}};
  }
};

}  // namespace

void WeightFile::add(const std::string& name, std::vector<std::uint64_t> dims, std::vector<double> values,
                     Precision precision) {
  require(!name.empty(), "weight file: a tensor needs a name");
  require(precision == Precision::f64 || precision == Precision::f32, "weight file: tensor '{}': unknown precision {}",
          name, static_cast<std::uint32_t>(precision));
  std::uint64_t count = 1;
  for (const auto d : dims) count *= d;
  require(count == values.size(), "weight file: tensor '{}' has {} values for dimensions of {}", name, values.size(),
          count);
  for (double& v : values) {
    require(std::isfinite(v), "weight file: tensor '{}' holds a value that is not finite", name);
    if (precision == Precision::f32) {
      require(std::abs(v) <= static_cast<double>(std::numeric_limits<float>::max()),
              "weight file: tensor '{}' holds {}, beyond what f32 storage holds", name, v);
      v = static_cast<float>(v);
    }
  }
  tensors_[name] = WeightTensor{std::move(dims), std::move(values), precision};
}

const std::vector<double>& WeightFile::values(const std::string& name, const std::vector<std::uint64_t>& dims) const {
  const auto it = tensors_.find(name);
  require<MismatchError>(it != tensors_.end(), "weight file: no tensor '{}' ({} tensors in the file)", name,
                         tensors_.size());
  const auto describe = [](const std::vector<std::uint64_t>& d) {
    std::string s;
    for (const auto v : d) {
      if (!s.empty()) s += 'x';
      s += std::to_string(v);
    }
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
    put(out, static_cast<std::uint32_t>(t.precision));
    put(out, static_cast<std::uint32_t>(t.dims.size()));
    for (const auto d : t.dims) put(out, d);
    if (t.precision == Precision::f32) {
      for (const double v : t.values) put(out, static_cast<float>(v));  // exact: add() rounded them
    } else {
      for (const double v : t.values) put(out, v);
    }
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
                              "weight file {}: the checksum does not match (the file is corrupted or truncated)",
                              source);
  Reader r{bytes, end, source, 4};
  const auto version = r.get<std::uint32_t>("the version");
  require<SerializationError>(version == kVersion || version == kVersionF64Only,
                              "weight file {}: version {}; this build reads versions {} and {}", source, version,
                              kVersionF64Only, kVersion);
  const auto count = r.get<std::uint32_t>("the tensor count");
  WeightFile file;
  for (std::uint32_t i = 0; i < count; ++i) {
    auto [name, tensor] = r.tensor(version, i);
    require<SerializationError>(!file.contains(name), "weight file {}: tensor '{}' appears twice", source, name);
    file.tensors_[name] = std::move(tensor);
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
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  require<SerializationError>(in.good(), "weight file {}: cannot open it", path.string());
  // One read of the whole file: a model's encoder is tens of megabytes.
  const std::streamoff size = in.tellg();
  require<SerializationError>(size >= 0, "weight file {}: cannot read it", path.string());
  std::vector<unsigned char> bytes(static_cast<std::size_t>(size));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  require<SerializationError>(in.good(), "weight file {}: reading failed", path.string());
  return from_bytes(bytes, path.string());
}

}  // namespace cerium::io
