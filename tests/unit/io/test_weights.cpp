// Weight files, version 2: f32 storage round trips (values rounded to float, exactly), version 1 files written by
// the old layout still load, and a v2 file whose fields are wrong (with a valid checksum, so the parser and not
// the checksum must notice) is a SerializationError naming the field.

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/io/weights.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;
using Bytes = std::vector<unsigned char>;

namespace {

std::uint64_t fnv1a(const Bytes& b, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

template <class T>
void put(Bytes& out, T v) {
  unsigned char raw[sizeof(T)];
  std::memcpy(raw, &v, sizeof(T));
  out.insert(out.end(), raw, raw + sizeof(T));
}

// Replaces the trailing checksum by the right one for the (edited) body.
Bytes with_checksum(Bytes body_and_old_checksum) {
  Bytes b = std::move(body_and_old_checksum);
  b.resize(b.size() - 8);
  const std::uint64_t h = fnv1a(b, b.size());
  put(b, h);
  return b;
}

// The message of the SerializationError that loading these bytes throws ("" when it loads).
std::string load_error(const Bytes& bytes) {
  try {
    io::WeightFile::from_bytes(bytes);
  } catch (const SerializationError& e) {
    return e.what();
  }
  return "";
}

std::vector<double> normal_values(std::mt19937_64& rng, std::size_t n, double sd) {
  std::normal_distribution<double> d(0, sd);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace

TEST_CASE("f32 storage rounds each value to float and round trips it exactly, in half the bytes", "[io][weights]") {
  auto rng = cerium_test::make_rng(73);
  const auto w = normal_values(rng, 6 * 5, 0.02);
  const auto b = normal_values(rng, 6, 1.0);
  io::WeightFile file;
  file.add("layer.weight", {6, 5}, w, io::Precision::f32);
  file.add("layer.bias", {6}, b);  // f64 beside f32 in one file
  const auto& held = file.values("layer.weight", {6, 5});
  for (std::size_t i = 0; i < w.size(); ++i) {
    CHECK(held[i] == static_cast<double>(static_cast<float>(w[i])));
    CHECK(std::abs(held[i] - w[i]) <= std::abs(w[i]) * 0x1p-24);
  }
  const io::WeightFile back = io::WeightFile::from_bytes(file.to_bytes());
  CHECK(back.values("layer.weight", {6, 5}) == held);
  CHECK(back.values("layer.bias", {6}) == b);
  CHECK(back.tensors().at("layer.weight").precision == io::Precision::f32);
  CHECK(back.tensors().at("layer.bias").precision == io::Precision::f64);

  io::WeightFile wide, narrow;
  wide.add("layer.weight", {6, 5}, w);
  narrow.add("layer.weight", {6, 5}, w, io::Precision::f32);
  CHECK(wide.to_bytes().size() - narrow.to_bytes().size() == 6 * 5 * 4);
  CHECK_THROWS_AS(file.add("big", {1}, {1e39}, io::Precision::f32), InvalidArgument);
  CHECK_NOTHROW(file.add("largest", {1}, {std::numeric_limits<float>::max()}, io::Precision::f32));
}

TEST_CASE("version 1 weight files (f64 only, no element types) still load", "[io][weights]") {
  // Written here by hand in the old layout, as scripts/train_resnet.py writes it.
  Bytes v1{'C', 'R', 'W', 'T'};
  put<std::uint32_t>(v1, 1);
  put<std::uint32_t>(v1, 2);
  const std::vector<std::pair<std::string, std::vector<double>>> tensors{{"a.bias", {0.5, -1.25}},
                                                                         {"a.weight", {1, 2, 3, 4, 5, 6}}};
  for (const auto& [name, values] : tensors) {
    put<std::uint32_t>(v1, static_cast<std::uint32_t>(name.size()));
    v1.insert(v1.end(), name.begin(), name.end());
    const std::vector<std::uint64_t> dims = values.size() == 2 ? std::vector<std::uint64_t>{2}
                                                               : std::vector<std::uint64_t>{2, 3};
    put<std::uint32_t>(v1, static_cast<std::uint32_t>(dims.size()));
    for (const auto d : dims) put(v1, d);
    for (const double v : values) put(v1, v);
  }
  put<std::uint64_t>(v1, 0);
  v1 = with_checksum(v1);
  const io::WeightFile file = io::WeightFile::from_bytes(v1);
  CHECK(file.values("a.bias", {2}) == tensors[0].second);
  CHECK(file.values("a.weight", {2, 3}) == tensors[1].second);
  CHECK(file.tensors().at("a.weight").precision == io::Precision::f64);
  // Saved again, it is version 2 with the same values.
  const Bytes v2 = file.to_bytes();
  std::uint32_t version;
  std::memcpy(&version, v2.data() + 4, 4);
  CHECK(version == 2);
  CHECK(io::WeightFile::from_bytes(v2).values("a.weight", {2, 3}) == tensors[1].second);
  // An unknown version is named.
  Bytes v3 = v1;
  v3[4] = 3;
  CHECK(load_error(with_checksum(v3)).find("version 3") != std::string::npos);
}

TEST_CASE("a v2 weight file with a wrong field is a SerializationError naming it", "[io][weights]") {
  io::WeightFile file;
  file.add("w", {2, 3}, {1, 2, 3, 4, 5, 6}, io::Precision::f32);
  const Bytes good = file.to_bytes();
  // Layout: magic 4 | version 4 | count 4 | name length 4 at 12 | "w" at 16 | element type 4 at 17 | rank 4 at 21 |
  // dims 8 each at 25 and 33 | six f32 at 41 | checksum at 65.
  REQUIRE(good.size() == 65 + 8);
  CHECK(load_error(good).empty());

  // Every truncation and flipped byte: the checksum (or the header length) catches it.
  for (std::size_t n = 0; n < good.size(); ++n) {
    CHECK_FALSE(load_error(Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n))).empty());
  }
  for (std::size_t i = 0; i < good.size(); ++i) {
    Bytes flipped = good;
    flipped[i] ^= 0x04;
    CHECK_FALSE(load_error(flipped).empty());
  }

  const auto patched = [&](std::size_t offset, std::uint32_t value) {
    Bytes b = good;
    std::memcpy(b.data() + offset, &value, 4);
    return with_checksum(b);
  };
  const auto names = [](const std::string& message, const std::string& what) {
    INFO(message);
    CHECK(message.find(what) != std::string::npos);
  };
  names(load_error(patched(17, 3)), "element type 3");
  names(load_error(patched(17, 0)), "element type 0");
  names(load_error(patched(21, 9)), "9 dimensions");
  // Cut inside the values, then a valid checksum: the tensor's value count does not fit.
  Bytes cut(good.begin(), good.begin() + 41 + 5 * 4);  // five of the six values
  put<std::uint64_t>(cut, 0);
  names(load_error(with_checksum(cut)), "tensor 'w' declares 6 values");
  // Cut inside the dimensions.
  Bytes cut_dims(good.begin(), good.begin() + 29);
  put<std::uint64_t>(cut_dims, 0);
  names(load_error(with_checksum(cut_dims)), "dimension");
  // Cut inside the element type.
  Bytes cut_type(good.begin(), good.begin() + 19);
  put<std::uint64_t>(cut_type, 0);
  names(load_error(with_checksum(cut_type)), "an element type");
  // An f32 value that is not finite.
  Bytes inf = good;
  const float infinity = std::numeric_limits<float>::infinity();
  std::memcpy(inf.data() + 45, &infinity, 4);
  names(load_error(with_checksum(inf)), "not finite");
  // A byte after the last tensor.
  Bytes extra(good.begin(), good.end() - 8);
  extra.push_back(0);
  put<std::uint64_t>(extra, 0);
  names(load_error(with_checksum(extra)), "1 bytes after the last tensor");
}
