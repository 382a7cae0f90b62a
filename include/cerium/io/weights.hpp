#pragma once
// Weight files: named tensors, the format trained models travel in (scripts/ write it from PyTorch; nn/ models
// read it). In memory every value is a double; in the file each tensor is stored as f64 or, to halve a large
// model (a 6-layer MiniLM encoder is 42 MB as f32), as f32. Little-endian:
//   version 2 (written): "CRWT" | version u32 (2) | tensor count u32 | per tensor: name length u32, name bytes,
//     element type u32 (1: f64, 2: f32), dimension count u32, dimensions u64 each, values (8 or 4 bytes each) |
//     FNV-1a 64 of every byte before it.
//   version 1 (still read): the same without the element type; every value f64.
// Loading checks every length against what is left before allocating, and the checksum: a truncated, corrupted or
// oversized file, or an unknown element type, is a SerializationError naming the file and the field; a tensor that
// is absent or has other dimensions than a model expects is a MismatchError naming it.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cerium::io {

// How a tensor's values are stored in the file (the codes are the file's element types).
enum class Precision : std::uint32_t { f64 = 1, f32 = 2 };

// One tensor of a weight file: its dimensions, its values and how the file stores them.
struct WeightTensor {
  std::vector<std::uint64_t> dims;       // outermost first
  std::vector<double> values;            // row-major; with f32 storage, each already rounded to the nearest float
  Precision precision = Precision::f64;  // in the file
};

// A weight file in memory: its tensors by name.
class WeightFile {
 public:
  // With Precision::f32 the values are rounded to float here, so what is held equals what loads back;
  // InvalidArgument for a value that is not finite or (f32) beyond float's range.
  void add(const std::string& name, std::vector<std::uint64_t> dims, std::vector<double> values,
           Precision precision = Precision::f64);
  // Whether a tensor of this name is held.
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // The tensor's values, after checking it exists with exactly these dimensions.
  const std::vector<double>& values(const std::string& name, const std::vector<std::uint64_t>& dims) const;
  // Every tensor, by name.
  const std::map<std::string, WeightTensor>& tensors() const { return tensors_; }

  // The file written (version 2) or read (version 1 or 2, checked as the header comment says), by path or as
  // bytes; source names the bytes in errors.
  void save(const std::filesystem::path& path) const;
  static WeightFile load(const std::filesystem::path& path);
  std::vector<unsigned char> to_bytes() const;  // always version 2
  static WeightFile from_bytes(const std::vector<unsigned char>& bytes, const std::string& source = "bytes");

 private:
  std::map<std::string, WeightTensor> tensors_;
};

}  // namespace cerium::io
