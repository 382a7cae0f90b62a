#pragma once
// Saving and loading parameters, plaintexts, ciphertexts and keys in the format of format.hpp.
//
// save() writes one object (header + payload) and throws SystemError when the stream fails. A ciphertext that
// records the seed of its c1 (a fresh secret-key encryption) and a switching key with seeded storage are stored
// seeded: the seed instead of the uniform polynomial, about half the size; loading re-expands it.
//
// load_*() reads exactly one object and validates everything before trusting it: magic, version, type, the
// parameter fingerprint against the context's, every count and size against the context before allocating,
// every word below its prime, the payload length against what the payload holds. Every failure is a
// SerializationError whose message names the field, the value found and the bound. Bytes after the object are
// left in the stream (a stream may hold several objects); the byte helpers of bytes.hpp reject them.

#include <istream>
#include <ostream>
#include <type_traits>

#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/ckks/parameters.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/io/format.hpp"

namespace cerium::io {

// One object (header + payload) written to out; SystemError when the stream fails.
void save(std::ostream& out, const ckks::Parameters& parameters);
void save(std::ostream& out, const ckks::Plaintext& plaintext);
void save(std::ostream& out, const ckks::Ciphertext& ciphertext);
void save(std::ostream& out, const ckks::SecretKey& key);
void save(std::ostream& out, const ckks::PublicKey& key);
void save(std::ostream& out, const ckks::RelinearizationKey& key);
void save(std::ostream& out, const ckks::GaloisKeys& keys);

// Parameters need no context: loading re-derives the primes from the stored configuration and requires them and
// the fingerprint to match what was stored.
ckks::Parameters load_parameters(std::istream& in);
// One object of each kind, read and validated against `context` (the header comment).
ckks::Plaintext load_plaintext(std::istream& in, const ckks::ContextPtr& context);
ckks::Ciphertext load_ciphertext(std::istream& in, const ckks::ContextPtr& context);
ckks::SecretKey load_secret_key(std::istream& in, const ckks::ContextPtr& context);
ckks::PublicKey load_public_key(std::istream& in, const ckks::ContextPtr& context);
ckks::RelinearizationKey load_relinearization_key(std::istream& in, const ckks::ContextPtr& context);
ckks::GaloisKeys load_galois_keys(std::istream& in, const ckks::ContextPtr& context);

// load<T>(in, context): the load_* function for T, for generic code (the context is ignored for Parameters).
template <class T>
T load(std::istream& in, const ckks::ContextPtr& context) {
  if constexpr (std::is_same_v<T, ckks::Parameters>) {
    return load_parameters(in);
  } else if constexpr (std::is_same_v<T, ckks::Plaintext>) {
    return load_plaintext(in, context);
  } else if constexpr (std::is_same_v<T, ckks::Ciphertext>) {
    return load_ciphertext(in, context);
  } else if constexpr (std::is_same_v<T, ckks::SecretKey>) {
    return load_secret_key(in, context);
  } else if constexpr (std::is_same_v<T, ckks::PublicKey>) {
    return load_public_key(in, context);
  } else if constexpr (std::is_same_v<T, ckks::RelinearizationKey>) {
    return load_relinearization_key(in, context);
  } else {
    static_assert(std::is_same_v<T, ckks::GaloisKeys>, "io::load: not a serializable type");
    return load_galois_keys(in, context);
  }
}

}  // namespace cerium::io
