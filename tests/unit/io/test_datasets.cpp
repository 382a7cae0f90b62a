// IDX arrays (plain and gzip) and weight files: round trips on random contents, and every truncation, flipped
// byte or bad field a typed SerializationError; the Debian Fashion-MNIST files when they are installed.

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/io/digits.hpp"
#include "cerium/io/idx.hpp"
#include "cerium/io/weights.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;

namespace {

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "cerium_test_datasets";
  std::filesystem::create_directories(dir);
  return dir / name;
}

std::vector<unsigned char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::filesystem::path& path, const std::vector<unsigned char>& bytes, std::size_t count) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(count));
}

}  // namespace

TEST_CASE("IDX arrays round trip, plain and gzip, and reject malformed files", "[io][idx]") {
  auto rng = cerium_test::make_rng(71);
  io::IdxArray a{.dims = {3, 5, 7}, .data = {}};
  a.data.resize(3 * 5 * 7);
  for (auto& v : a.data) v = static_cast<std::uint8_t>(rng());
  for (const std::string name : {"a.idx", "a.idx.gz"}) {
    io::write_idx(scratch(name), a);
    const io::IdxArray b = io::read_idx(scratch(name));
    CHECK(b.dims == a.dims);
    CHECK(b.data == a.data);
  }
  // Every truncation of the plain file, and a header with bad fields.
  const auto bytes = file_bytes(scratch("a.idx"));
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    write_bytes(scratch("cut.idx"), bytes, n);
    CHECK_THROWS_AS(io::read_idx(scratch("cut.idx")), SerializationError);
  }
  auto bad = bytes;
  bad[2] = 0x0d;  // floats
  write_bytes(scratch("bad.idx"), bad, bad.size());
  CHECK_THROWS_AS(io::read_idx(scratch("bad.idx")), SerializationError);
  bad = bytes;
  bad[7] = 0;  // a zero dimension
  write_bytes(scratch("bad.idx"), bad, bad.size());
  CHECK_THROWS_AS(io::read_idx(scratch("bad.idx")), SerializationError);
  bad = bytes;
  bad.push_back(1);  // a byte more than declared
  write_bytes(scratch("bad.idx"), bad, bad.size());
  CHECK_THROWS_AS(io::read_idx(scratch("bad.idx")), SerializationError);
  CHECK_THROWS_AS(io::read_idx(scratch("absent.idx")), SerializationError);
  CHECK_THROWS_AS(io::load_fashion_mnist("t10k", scratch("no-such-dir")), InvalidArgument);
}

TEST_CASE("Fashion-MNIST from the Debian package", "[io][idx][data]") {
  // CERIUM_FASHION_MNIST_DIR: the files elsewhere (an unpacked .deb on a machine without root).
  const char* env = std::getenv("CERIUM_FASHION_MNIST_DIR");
  const std::filesystem::path dir = env != nullptr ? std::filesystem::path(env) : io::kFashionMnistDir;
  if (!std::filesystem::exists(dir / "t10k-images-idx3-ubyte.gz")) {
    WARN("dataset-fashion-mnist is not installed: skipped");
    SUCCEED("nothing to check without the dataset");
    return;
  }
  const io::LabeledImages test = io::load_fashion_mnist("t10k", dir);
  CHECK(test.count == 10000);
  CHECK(test.height == 28);
  CHECK(test.width == 28);
  std::vector<int> per_class(10, 0);
  for (const auto label : test.labels) ++per_class[label];
  for (const int n : per_class) CHECK(n == 1000);  // the test set is balanced
}

TEST_CASE("digits CSV files load and malformed ones are refused", "[io][digits]") {
  // Written here: two images, plain and gzip-compressed (zlib reads both).
  std::string two;
  for (int image = 0; image < 2; ++image) {
    for (int p = 0; p < 64; ++p) two += std::to_string((p * 7 + image) % 17) + ",";
    two += std::to_string(image + 3) + "\n";
  }
  const auto write_text = [](const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  };
  write_text(scratch("digits.csv"), two);
  const io::LabeledImages d = io::load_digits(scratch("digits.csv"));
  CHECK(d.count == 2);
  CHECK(d.pixels.size() == 128);
  CHECK(d.labels == std::vector<std::uint8_t>{3, 4});
  CHECK(d.pixels[65] == (7 + 1) % 17);
  // Each malformation is a SerializationError naming the line.
  const std::string good_line = two.substr(0, two.find('\n') + 1);
  for (const std::string& bad : {good_line + "1,2,3\n", good_line + good_line.substr(0, good_line.size() - 1) + ",5\n",
                                 good_line + "x" + good_line.substr(1), "17" + good_line.substr(1),
                                 good_line.substr(0, good_line.size() - 2) + "12\n", std::string()}) {
    write_text(scratch("bad_digits.csv"), bad);
    CHECK_THROWS_AS(io::load_digits(scratch("bad_digits.csv")), SerializationError);
  }
  CHECK_THROWS_AS(io::load_digits(scratch("no-such-digits.csv.gz")), InvalidArgument);
  // Debian's python3-sklearn, or CERIUM_DIGITS_FILE.
  const char* env = std::getenv("CERIUM_DIGITS_FILE");
  const std::filesystem::path real = env != nullptr ? std::filesystem::path(env) : io::kDigitsFile;
  if (!std::filesystem::exists(real)) {
    WARN("python3-sklearn's digits.csv.gz is not here: the real file is not checked");
    return;
  }
  const io::LabeledImages all = io::load_digits(real);
  CHECK(all.count == 1797);
  std::vector<int> per_class(10, 0);
  for (const auto label : all.labels) ++per_class[label];
  for (const int n : per_class) CHECK((n >= 174 && n <= 183));
}

TEST_CASE("weight files round trip, reject every truncation and flipped byte, and name what is missing", "[io][weights]") {
  auto rng = cerium_test::make_rng(72);
  std::normal_distribution<double> d(0, 1);
  io::WeightFile w;
  std::vector<double> conv(2 * 1 * 3 * 3), bias(2);
  for (auto& v : conv) v = d(rng);
  for (auto& v : bias) v = d(rng);
  w.add("stem.weight", {2, 1, 3, 3}, conv);
  w.add("stem.bias", {2}, bias);
  const auto bytes = w.to_bytes();
  const io::WeightFile back = io::WeightFile::from_bytes(bytes);
  CHECK(back.values("stem.weight", {2, 1, 3, 3}) == conv);
  CHECK(back.values("stem.bias", {2}) == bias);
  w.save(scratch("w.crwt"));
  CHECK(io::WeightFile::load(scratch("w.crwt")).values("stem.bias", {2}) == bias);

  for (std::size_t n = 0; n < bytes.size(); ++n) {
    CHECK_THROWS_AS(io::WeightFile::from_bytes(std::vector<unsigned char>(bytes.begin(), bytes.begin() + n)),
                    SerializationError);
  }
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    auto flipped = bytes;
    flipped[i] ^= 0x10;
    CHECK_THROWS_AS(io::WeightFile::from_bytes(flipped), SerializationError);
  }
  CHECK_THROWS_AS(back.values("fc.weight", {10, 64}), MismatchError);
  CHECK_THROWS_AS(back.values("stem.weight", {2, 1, 1, 9}), MismatchError);
  CHECK_THROWS_AS(w.add("nan", {1}, {std::nan("")}), InvalidArgument);
  CHECK_THROWS_AS(io::WeightFile::load(scratch("absent.crwt")), SerializationError);
}
