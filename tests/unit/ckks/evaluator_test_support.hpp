#pragma once
// Shared set-up of the evaluator tests: a context with its keys, encoder, encryptor, decryptor and evaluator, and
// precision helpers (bits = -log2 of the largest absolute error over the slots).

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "support/random.hpp"

namespace evaluator_test {

using namespace cerium;
using namespace cerium::ckks;
using Complex = std::complex<double>;
using Values = std::vector<Complex>;

// Toy parameter sets: small N, both level widths, 1 to 3 digits. Insecure by explicit opt-out.
inline CkksConfig toy(int log_n, int levels, int width, int dnum) {
  return CkksConfig{.log_n = log_n,
                    .levels = levels,
                    .level_width = width,
                    .level_prime_bits = 28,
                    .dnum = dnum,
                    .insecure_opt_out = true};
}

inline math::Seed fixed_seed(std::uint32_t tag) {
  math::Seed seed;
  for (std::uint32_t i = 0; i < 8; ++i) seed.words[i] = tag * 0x9e3779b9u + 11 * i + 3;
  return seed;
}

struct KeyRequest {
  bool relinearization = true;
  std::vector<std::int64_t> rotations = {};
  bool conjugation = false;
};

// Everything one test needs. Keys come from fresh OS seeds unless `seed` is given.
struct Fixture {
  ContextPtr context;
  KeyGenerator keygen;
  Encoder encoder;
  Encryptor encryptor;
  Decryptor decryptor;
  Evaluator evaluator;

  explicit Fixture(const CkksConfig& config, const KeyRequest& keys = {}) : Fixture(Context::create(config), keys) {}
  Fixture(ContextPtr ctx, const KeyRequest& keys)
      : context(ctx),
        keygen(ctx),
        encoder(ctx),
        encryptor(keygen.public_key()),
        decryptor(keygen.secret_key()),
        evaluator(ctx) {
    attach(keys);
  }

  void attach(const KeyRequest& keys) {
    if (keys.relinearization) {
      evaluator.set_relinearization_key(std::make_shared<const RelinearizationKey>(keygen.relinearization_key()));
    }
    if (!keys.rotations.empty() || keys.conjugation) {
      evaluator.set_galois_keys(
          std::make_shared<const GaloisKeys>(keygen.galois_keys(keys.rotations, keys.conjugation)));
    }
  }

  std::size_t max_slots() const { return context->ring_degree() / 2; }

  Ciphertext encrypt(const Values& values, int level = -1, std::size_t slots = 0, double scale = 0) const {
    return encryptor.encrypt(encoder.encode(values, EncodeOptions{.level = level, .scale = scale, .slots = slots}));
  }
  Values decrypt(const Ciphertext& ct) const { return encoder.decode(decryptor.decrypt(ct)); }
};

inline Values random_complex(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Values v(n);
  for (auto& x : v) x = {dist(rng), dist(rng)};
  return v;
}

inline Values random_real(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Values v(n);
  for (auto& x : v) x = {dist(rng), 0.0};
  return v;
}

// -log2(max |got - want|); 100 for an exact result.
inline double precision_bits(const Values& got, const Values& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got.at(i) - want[i]));
  return worst == 0 ? 100.0 : -std::log2(worst);
}

template <class F>
Values map(const Values& a, F f) {
  Values out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = f(a[i]);
  return out;
}

template <class F>
Values zip(const Values& a, const Values& b, F f) {
  Values out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = f(a[i], b[i]);
  return out;
}

// Slot i of the result holds slot (i + steps) mod n of the input: a left rotation.
inline Values rotated(const Values& a, std::int64_t steps) {
  const auto n = static_cast<std::int64_t>(a.size());
  Values out(a.size());
  for (std::int64_t i = 0; i < n; ++i)
    out[static_cast<std::size_t>(i)] = a[static_cast<std::size_t>((((i + steps) % n) + n) % n)];
  return out;
}

inline bool same_words(const Ciphertext& a, const Ciphertext& b) {
  if (a.size() != b.size() || a.level() != b.level() || a.scale() != b.scale()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a.part(i) == b.part(i))) return false;
  }
  return true;
}

// The operations that run every batched CPU loop (ModUp, the key-switch inner product, ModDown, rescale, the NTT):
// multiply (relinearized), its rescale, rotate(x, 1) and rotate(rescaled, -5). Word-equality tests run them under
// each setting (thread counts, SIMD levels) against a first run; the fixture needs the keys of steps 1 and -5.
inline std::vector<Ciphertext> key_switching_results(const Fixture& f, const Ciphertext& x, const Ciphertext& y) {
  std::vector<Ciphertext> r;
  r.push_back(f.evaluator.multiply(x, y));
  r.push_back(f.evaluator.rescale(r.back()));
  r.push_back(f.evaluator.rotate(x, 1));
  r.push_back(f.evaluator.rotate(r[1], -5));
  return r;
}

inline bool message_contains(const std::exception& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

}  // namespace evaluator_test
