#pragma once
// IDX arrays (the MNIST and Fashion-MNIST file format), plain or gzip-compressed (zlib reads both): a magic of two
// zero bytes, the element type (0x08: unsigned bytes) and the dimension count, then each dimension as a big-endian
// 32-bit integer, then the elements. Every field is checked before it is used: a truncated, oversized or malformed
// file is a SerializationError naming the file and what is wrong.
//
// load_fashion_mnist reads the Debian package dataset-fashion-mnist (/usr/share/datasets/fashion-mnist): 28 x 28
// grey images with labels 0..9 (60000 for training, 10000 for test).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cerium::io {

// An IDX array of unsigned bytes.
struct IdxArray {
  std::vector<std::uint32_t> dims;  // outermost first
  std::vector<std::uint8_t> data;   // row-major
};

// Reads an unsigned-byte IDX file, plain or gzip-compressed; SerializationError as the header comment says.
IdxArray read_idx(const std::filesystem::path& path);
// Writes unsigned-byte IDX (gzip-compressed when the name ends in .gz): for tests and exports.
void write_idx(const std::filesystem::path& path, const IdxArray& array);

// Grey images with their labels: what the dataset loaders return.
struct LabeledImages {
  // The number of images, each one's height and width in pixels, and the labels (count of them).
  std::size_t count = 0, height = 0, width = 0;
  std::vector<std::uint8_t> pixels;  // count x height x width
  std::vector<std::uint8_t> labels;
};

// Where dataset-fashion-mnist installs the files: load_fashion_mnist's default.
inline const std::filesystem::path kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
// split: "train" or "t10k". SerializationError when the two files disagree or a label is above 9;
// InvalidArgument naming the package to install when the files are absent.
LabeledImages load_fashion_mnist(const std::string& split, const std::filesystem::path& dir = kFashionMnistDir);

}  // namespace cerium::io
