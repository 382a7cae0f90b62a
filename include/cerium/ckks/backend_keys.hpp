#pragma once
// Relinearization and Galois keys made where a backend computes, from a KeyGenerator's seeds: the words of
// KeyGenerator::relinearization_key and galois_keys (expanded), made on a GPU in milliseconds a key instead of
// about a second a key on a host core and then copied over.
//
//   backend::CudaBackend gpu(context);
//   auto galois = std::make_shared<const GaloisKeys>(galois_keys_on(gpu, keygen, steps, true));  // device memory
//   evaluator.set_galois_keys(galois);  // already resident: nothing is copied
//
// Digit d of a key from s' to s is (e_d - a_d s + P g_d s', a_d) (rlwe/switching_key.hpp). The host draws only
// e_d's N small coefficients (the secret's Gaussian stream), which cross as one limb and are lifted to every
// prime by the backend's ModRaise; a_d is expanded from the public uniform seed by the backend
// (backend::UniformExpansion) or, without that, on the host and placed; the products and sums are the
// backend's. Every step is exact modular arithmetic that the backends compute to the same words, so the keys
// equal the host generator's (tests/unit/ckks/test_backend_keys.cpp on the CPU, tests/gpu on the GPU).
//
// The keys are always expanded (a seeded key would be expanded at every upload anyway: the device holds the
// a_d). The secret is copied to the backend for the call and freed after it.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/core/check.hpp"
#include "cerium/core/progress.hpp"
#include "cerium/rlwe/small_poly.hpp"
#include "cerium/rlwe/switching_key.hpp"
#include "cerium/rlwe/uniform.hpp"

namespace cerium::ckks {

namespace backend_keys_detail {

// The uniform half a_d where the backend computes.
template <backend::PolyBackend B>
ring::RnsPoly uniform(const B& backend, const ring::RnsBasisPtr& basis, const math::Seed& seed, std::uint64_t stream) {
  if constexpr (backend::UniformExpansion<B>) {
    return backend.expand_uniform(basis, seed, stream);
  } else {
    return backend.place(rlwe::expand_uniform(basis, seed, stream));
  }
}

// The Gaussian error e_d over the key basis in NTT form: rlwe::gaussian_poly's words. Its coefficients cross as
// residues modulo the first level's primes (a few hundred KiB) and are lifted to every prime there: they are
// far below those primes, so the centered lift is the signed value itself.
template <backend::PolyBackend B>
ring::RnsPoly gaussian(const B& backend, const rlwe::Context& context, const math::Seed& seed, std::uint64_t stream) {
  const std::vector<std::int32_t> e = rlwe::gaussian_coefficients(context.ring_degree(), seed, stream);
  const std::vector<std::int64_t> wide(e.begin(), e.end());
  ring::RnsPoly low = ring::RnsPoly::from_signed(context.q_basis(0), wide,
                                                 ring::PolyOptions{.form = ring::PolyForm::coefficient});
  return backend.mod_raise(backend.place(std::move(low)), context.key_basis());
}

}  // namespace backend_keys_detail

// rlwe::make_switching_key on a backend: the switching key from `from_secret` (s') to `secret` (s), both over
// context->key_basis() in NTT form where the backend computes; the key's polynomials are there too. The draw's
// storage is ignored (expanded; see the file comment).
template <backend::PolyBackend B>
rlwe::SwitchingKey make_switching_key_on(const B& backend, const rlwe::ContextPtr& context,
                                         const ring::RnsPoly& secret, const ring::RnsPoly& from_secret,
                                         const rlwe::SwitchingKeyDraw& draw) {
  rlwe::require_switching_key_secrets(context, secret, from_secret);
  const ring::RnsBasisPtr& key_basis = context->key_basis();
  const std::size_t digits = context->digit_count(context->max_level());
  std::vector<std::array<ring::RnsPoly, 2>> parts;
  parts.reserve(digits);
  for (std::size_t d = 0; d < digits; ++d) {
    ring::RnsPoly a = backend_keys_detail::uniform(backend, key_basis, draw.uniform, draw.base_stream + d);
    ring::RnsPoly b = backend_keys_detail::gaussian(backend, *context, draw.noise, draw.base_stream + d);
    backend.sub(b, backend.product(a, secret));
    // + P g_d s': [P]_{q_i} s'_i on the digit's limbs, nothing elsewhere (rlwe::gadget_factors).
    backend.add(b, backend.scalar_product(from_secret, rlwe::gadget_factors(*context, d)));
    parts.push_back({std::move(b), std::move(a)});
  }
  return rlwe::SwitchingKey(context, std::move(parts), rlwe::KeyStorage::expanded, std::nullopt, 0);
}

// KeyGenerator::relinearization_key's words, made on the backend.
template <backend::PolyBackend B>
RelinearizationKey relinearization_key_on(const B& backend, const KeyGenerator& keygen) {
  const ring::RnsPoly s = backend.place(keygen.secret_key().poly().clone());
  return RelinearizationKey(keygen.context(), make_switching_key_on(backend, keygen.context(), s,
                                                                    backend.product(s, s),
                                                                    keygen.relinearization_draw()));
}

// KeyGenerator::galois_keys' words (expanded), made on the backend one key after another; `progress` hears once
// per key.
template <backend::PolyBackend B>
GaloisKeys galois_keys_on(const B& backend, const KeyGenerator& keygen, std::span<const std::int64_t> rotation_steps,
                          bool conjugation = false, ProgressCallback progress = {}) {
  const ContextPtr& context = keygen.context();
  const std::vector<std::uint32_t> elements =
      KeyGenerator::galois_elements(rotation_steps, conjugation, context->ring_degree());
  GaloisKeys keys(context);
  ProgressReporter reporter(std::move(progress), "galois keys", elements.size());
  if (elements.empty()) return keys;
  const ring::RnsPoly s = backend.place(keygen.secret_key().poly().clone());
  for (const std::uint32_t element : elements) {
    const rlwe::SwitchingKeyDraw draw = keygen.galois_draw(element);  // checks the element
    const ring::RnsPoly rotated = backend.automorphism(context->automorphism(element), s);
    keys.insert(element, make_switching_key_on(backend, context, s, rotated, draw));
    reporter.advance();
  }
  return keys;
}

}  // namespace cerium::ckks
