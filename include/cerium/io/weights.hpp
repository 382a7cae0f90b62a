#pragma once
// Weight files: named tensors of doubles, the format trained models travel in (scripts/ write it from PyTorch; nn/
// models read it). Little-endian:
//   "CRWT" | version u32 (1) | tensor count u32 | per tensor: name length u32, name bytes, dimension count u32,
//   dimensions u64 each, values f64 each | FNV-1a 64 of every byte before it.
// Loading checks every length against what is left before allocating, and the checksum: a truncated, corrupted or
// oversized file is a SerializationError naming the file and the field; a tensor that is absent or has other
// dimensions than a model expects is a MismatchError naming it.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cerium::io {

struct WeightTensor {
  std::vector<std::uint64_t> dims;
  std::vector<double> values;  // row-major
};

class WeightFile {
 public:
  void add(const std::string& name, std::vector<std::uint64_t> dims, std::vector<double> values);
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // The tensor's values, after checking it exists with exactly these dimensions.
  const std::vector<double>& values(const std::string& name, const std::vector<std::uint64_t>& dims) const;
  const std::map<std::string, WeightTensor>& tensors() const { return tensors_; }

  void save(const std::filesystem::path& path) const;
  static WeightFile load(const std::filesystem::path& path);
  std::vector<unsigned char> to_bytes() const;
  static WeightFile from_bytes(const std::vector<unsigned char>& bytes, const std::string& source = "bytes");

 private:
  std::map<std::string, WeightTensor> tensors_;
};

}  // namespace cerium::io
