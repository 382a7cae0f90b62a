#include "cerium/io/idx.hpp"

#include <zlib.h>

#include <memory>

#include "cerium/core/check.hpp"
#include "gz_file.hpp"

namespace cerium::io {
namespace {

constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 32;  // 4 GiB of bytes: far above any dataset here

using detail::GzFile;

GzFile open(const std::filesystem::path& path, const char* mode) { return detail::open_gz(path, mode, "IDX"); }

void read_exactly(gzFile_s* f, void* out, std::size_t bytes, const std::filesystem::path& path, const char* what) {
  std::size_t done = 0;
  while (done < bytes) {
    const auto chunk = static_cast<unsigned>(std::min<std::size_t>(bytes - done, 1u << 30));
    const int got = gzread(f, static_cast<char*>(out) + done, chunk);
    require<SerializationError>(got > 0, "IDX {}: truncated in {} ({} of {} bytes read)", path.string(), what, done,
                                bytes);
    done += static_cast<std::size_t>(got);
  }
}

}  // namespace

IdxArray read_idx(const std::filesystem::path& path) {
  const GzFile f = open(path, "rb");
  unsigned char magic[4];
  read_exactly(f.get(), magic, 4, path, "the magic number");
  require<SerializationError>(magic[0] == 0 && magic[1] == 0, "IDX {}: the magic number must start with two zero bytes",
                              path.string());
  require<SerializationError>(magic[2] == 0x08, "IDX {}: element type 0x{:02x}; only unsigned bytes (0x08) are read",
                              path.string(), magic[2]);
  require<SerializationError>(magic[3] >= 1 && magic[3] <= 4, "IDX {}: {} dimensions; 1 to 4 are read", path.string(),
                              magic[3]);
  IdxArray out;
  std::uint64_t elements = 1;
  for (int d = 0; d < magic[3]; ++d) {
    unsigned char b[4];
    read_exactly(f.get(), b, 4, path, "a dimension");
    const std::uint32_t dim = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
    require<SerializationError>(dim >= 1, "IDX {}: dimension {} is zero", path.string(), d);
    elements *= dim;
    require<SerializationError>(elements <= kMaxElements, "IDX {}: {} elements and more; the limit is 2^32",
                                path.string(), elements);
    out.dims.push_back(dim);
  }
  out.data.resize(elements);
  read_exactly(f.get(), out.data.data(), out.data.size(), path, "the elements");
  unsigned char extra;
  require<SerializationError>(gzread(f.get(), &extra, 1) == 0, "IDX {}: bytes after the {} elements the header declares",
                              path.string(), elements);
  return out;
}

void write_idx(const std::filesystem::path& path, const IdxArray& array) {
  require(!array.dims.empty() && array.dims.size() <= 4, "IDX: {} dimensions; 1 to 4", array.dims.size());
  std::uint64_t elements = 1;
  for (const auto d : array.dims) elements *= d;
  require(elements == array.data.size(), "IDX: dimensions of {} elements for {} bytes", elements, array.data.size());
  const bool gz = path.extension() == ".gz";
  const GzFile f = open(path, gz ? "wb" : "wbT");
  std::vector<unsigned char> header = {0, 0, 0x08, static_cast<unsigned char>(array.dims.size())};
  for (const auto d : array.dims) {
    for (int shift = 24; shift >= 0; shift -= 8) header.push_back(static_cast<unsigned char>((d >> shift) & 0xff));
  }
  const bool ok = gzwrite(f.get(), header.data(), static_cast<unsigned>(header.size())) == static_cast<int>(header.size()) &&
                  (array.data.empty() || gzwrite(f.get(), array.data.data(), static_cast<unsigned>(array.data.size())) ==
                                             static_cast<int>(array.data.size()));
  require<SerializationError>(ok, "IDX {}: writing failed", path.string());
}

LabeledImages load_fashion_mnist(const std::string& split, const std::filesystem::path& dir) {
  require(split == "train" || split == "t10k", "Fashion-MNIST: split '{}'; 'train' or 't10k'", split);
  const auto images_path = dir / (split + "-images-idx3-ubyte.gz");
  const auto labels_path = dir / (split + "-labels-idx1-ubyte.gz");
  require(std::filesystem::exists(images_path) && std::filesystem::exists(labels_path),
          "Fashion-MNIST: {} or {} is missing; install the Debian package dataset-fashion-mnist", images_path.string(),
          labels_path.string());
  const IdxArray images = read_idx(images_path);
  const IdxArray labels = read_idx(labels_path);
  require<SerializationError>(images.dims.size() == 3, "Fashion-MNIST {}: {} dimensions; images have 3",
                              images_path.string(), images.dims.size());
  require<SerializationError>(labels.dims.size() == 1 && labels.dims[0] == images.dims[0],
                              "Fashion-MNIST: {} labels for {} images", labels.dims.empty() ? 0 : labels.dims[0],
                              images.dims[0]);
  for (std::size_t i = 0; i < labels.data.size(); ++i) {
    require<SerializationError>(labels.data[i] <= 9, "Fashion-MNIST {}: label {} of image {} is above 9",
                                labels_path.string(), labels.data[i], i);
  }
  return LabeledImages{.count = images.dims[0], .height = images.dims[1], .width = images.dims[2],
                       .pixels = images.data, .labels = labels.data};
}

}  // namespace cerium::io
