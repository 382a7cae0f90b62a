// Writes the seed corpus of the io fuzzers: valid objects of every type for the fuzzers' toy context, one
// directory per harness (<out>/<type>/<n>.bin). Deterministic: fixed seeds and values.
//
// Usage: make_fuzz_corpus <output directory>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "fuzz_common.hpp"

namespace {

namespace fs = std::filesystem;
using namespace cerium::ckks;

cerium::math::Seed seed_of(std::uint32_t tag) {
  cerium::math::Seed seed;
  for (std::uint32_t i = 0; i < 8; ++i) seed.words[i] = tag * 0x9e3779b9u + i;
  return seed;
}

template <class T>
void write(const fs::path& dir, const std::string& name, int index, const T& object) {
  fs::create_directories(dir / name);
  cerium::io::save_file(dir / name / (std::to_string(index) + ".bin"), object);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_fuzz_corpus <output directory>\n";
    return 2;
  }
  const fs::path out = argv[1];
  const ContextPtr& context = cerium_fuzz::fuzz_context();
  KeyGenerator keygen(context, seed_of(1));
  const Encoder encoder(context);
  const Encryptor public_encryptor(keygen.public_key(), seed_of(2));
  const Encryptor secret_encryptor(keygen.secret_key(), seed_of(3));
  const std::vector<double> values = {0.5, -0.25, 1.0, 0.125};

  write(out, "parameters", 0, context->parameters());
  for (int level = 0; level <= context->max_level(); ++level) {
    const Plaintext pt = encoder.encode(values, EncodeOptions{.level = level, .slots = 4});
    write(out, "plaintext", level, pt);
    write(out, "ciphertext", 2 * level, public_encryptor.encrypt(pt));
    write(out, "ciphertext", 2 * level + 1, secret_encryptor.encrypt(pt));
  }
  write(out, "secret_key", 0, keygen.secret_key());
  write(out, "public_key", 0, keygen.public_key());
  write(out, "relinearization_key", 0, keygen.relinearization_key());
  write(out, "relinearization_key", 1, keygen.relinearization_key(KeyStorage::seeded));
  write(out, "galois_keys", 0, keygen.galois_keys({1}));
  write(out, "galois_keys", 1, keygen.galois_keys({1, 3}, /*conjugation=*/true, KeyStorage::seeded));
  write(out, "galois_keys", 2, GaloisKeys(context));
  std::cout << "corpus written to " << out.string() << "\n";
  return 0;
}
