#pragma once
// The backend concept: the polynomial operations the CKKS evaluator is written against, in ring and RLWE types
// only (rlwe::Context, rlwe::SwitchingKey), so that the backends sit below any scheme.
//
// Why a concept: the CPU backend (the reference) runs these operations as loops over host limbs; the CUDA backend
// will run the same operations as kernels over device-resident shards of the same polynomials, and must produce
// the same words. The evaluator is a template over its backend (ckks::BasicEvaluator<B>), so each operation
// resolves at compile time: no virtual calls, no runtime switch on the device kind, and a backend that lacks an
// operation fails to compile where it is instantiated rather than at run time.
//
// Conventions every backend follows:
//  - Ciphertext and plaintext polynomials are in NTT form; the elementwise operations require both operands over
//    the same basis and in the same form (MismatchError otherwise).
//  - In-place operations write their first argument; operations that return a polynomial allocate it with the
//    input's shard layout (the same devices).
//  - Key switching is exposed at the granularity the GPU fuses it: ModUp of every digit (the expensive, shareable
//    half: hoisting) and the inner product with the key followed by ModDown, with an optional automorphism
//    applied to the digits as they are read; the inner product alone too, for callers that sum several before
//    one ModDown (double hoisting).

#include <array>
#include <concepts>
#include <functional>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "cerium/core/device.hpp"
#include "cerium/core/device_memory.hpp"
#include "cerium/math/chacha20.hpp"
#include "cerium/math/special_fft.hpp"
#include "cerium/ring/automorphism.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "cerium/rlwe/context.hpp"
#include "cerium/rlwe/key_switch.hpp"
#include "cerium/rlwe/switching_key.hpp"

namespace cerium::backend {

template <class B>
concept PolyBackend = requires(const B& b, ring::RnsPoly& x, const ring::RnsPoly& y, const ring::RnsPoly& z,
                               const ring::RnsBasisPtr& basis, ring::PolyOptions options,
                               std::span<const std::uint32_t> per_limb, std::int64_t integer,
                               const ring::Rescaler& rescaler, const ring::ModDown& mod_down,
                               const ring::Automorphism& automorphism, const rlwe::Context& context, int level,
                               const rlwe::DecomposedPoly& decomposed, const rlwe::SwitchingKey& key,
                               std::shared_ptr<const rlwe::SwitchingKey> switching_key, std::span<ring::RnsPoly> parts,
                               std::span<const ring::RnsPoly* const> factors, bool accumulate,
                               std::array<const ring::RnsPoly*, 2> addends) {
  // Storage: a polynomial over basis placed as options says, and a deep copy on the same devices.
  { b.allocate(basis, options) } -> std::same_as<ring::RnsPoly>;
  { b.clone(y) } -> std::same_as<ring::RnsPoly>;

  // Placement: a host polynomial moved to where the backend computes (the CPU backend keeps it as it is), a
  // copy of any polynomial in host memory, and keys where the backend computes (the same object when they are
  // there already), so that the evaluator takes host objects from users and hands host objects back (a scheme's
  // key sets are placed key by key: ckks::resident).
  { b.place(std::move(x)) } -> std::same_as<ring::RnsPoly>;
  { b.download(y) } -> std::same_as<ring::RnsPoly>;
  { b.resident(switching_key) } -> std::same_as<std::shared_ptr<const rlwe::SwitchingKey>>;

  // Elementwise arithmetic (x op= y), in NTT form for the products.
  b.add(x, y);
  b.sub(x, y);
  b.negate(x);
  b.multiply(x, y);                // x = x * y
  b.multiply_accumulate(x, y, z);  // x = x + y * z
  // The fused linear combination x = sum_i a_i b_i (+ x's old value when accumulate), NTT form, one pass over
  // the limbs however many terms: the planner's sums of products (plan/lower.hpp). Its words equal the eager
  // multiply + add sequence (every step reduced to the canonical residue, so any exact order agrees).
  b.multiply_accumulate_many(x, factors, factors, accumulate);
  // The same with products by constants too: x = sum_t a_t b_t + sum_u c_u s_u (+ x), s_u one scalar per limb
  // (scalars[u * limbs + i], reduced): a sum's polynomial and constant products in one pass (plan/fused_sum.hpp).
  b.linear_combination(x, factors, factors, factors, per_limb, accumulate);
  // Rescale folded into it: x (over rescaler.kept()) = rescale of that sum (the factors over rescaler.basis(),
  // NTT form), the words of linear_combination then rescale; the GPU computes the dropped limbs first and
  // writes the kept ones once, already divided.
  b.linear_combination_rescaled(rescaler, x, factors, factors, factors, per_limb);
  // The tensor product of (x, y) and (z, w): x becomes x z; returns {x w + y z, y w} (from x's old value). x may
  // be z itself (squaring).
  { b.tensor(x, y, z, y) } -> std::same_as<std::array<ring::RnsPoly, 2>>;
  // Out of place: the result in a new polynomial, the operands untouched, in one pass (a copy followed by the
  // in-place operation would read and write the first operand once more). The words of the in-place forms.
  { b.sum(y, z) } -> std::same_as<ring::RnsPoly>;
  { b.difference(y, z) } -> std::same_as<ring::RnsPoly>;
  { b.product(y, z) } -> std::same_as<ring::RnsPoly>;  // NTT form
  { b.negation(y) } -> std::same_as<ring::RnsPoly>;
  { b.scalar_product(y, per_limb) } -> std::same_as<ring::RnsPoly>;
  { b.tensor_product(y, y, z, z) } -> std::same_as<std::array<ring::RnsPoly, 3>>;
  // The first limbs of y, over basis (a prefix of y's basis): drop_to without copying the dropped limbs.
  { b.prefix(y, basis) } -> std::same_as<ring::RnsPoly>;
  b.multiply_scalar(x, per_limb);  // limb i times per_limb[i] (reduced mod q_i)
  b.add_scalar(x, per_limb);       // limb i plus per_limb[i]: a constant polynomial in NTT form
  b.multiply_integer(x, integer);  // every limb times the integer, reduced per prime

  // Domain changes.
  b.to_ntt(x);
  b.to_coeff(x);

  // Levels: exact division by the level's primes (rounded), and dropping the last limbs (exact).
  b.rescale(rescaler, x);
  b.rescale(rescaler, parts);  // every polynomial of a ciphertext at once
  b.drop_to(x, basis);

  // Bootstrapping's ModRaise: the centered lift of y (over a basis of product below 2^63, either form) to the
  // given basis, in NTT form.
  { b.mod_raise(y, basis) } -> std::same_as<ring::RnsPoly>;

  // X -> X^k as a permutation of the input's words (in its form).
  { b.automorphism(automorphism, y) } -> std::same_as<ring::RnsPoly>;

  // Hybrid key switching.
  { b.mod_up(context, y, level) } -> std::same_as<rlwe::DecomposedPoly>;
  { b.key_switch_apply(context, decomposed, key, &automorphism) } -> std::same_as<std::array<ring::RnsPoly, 2>>;
  // The same plus addends[i] on sum i (a null entry adds nothing; addends in NTT form over Q_l): relinearization's
  // c + (b, a) and a rotation's sigma(c0) + b, which the CUDA backend adds inside ModDown's last pass.
  { b.key_switch_apply(context, decomposed, key, &automorphism, addends) } -> std::same_as<std::array<ring::RnsPoly, 2>>;
  // The same, then both sums rescaled (rescaler over Q_l; the result over its kept primes): the words of
  // key_switch_apply followed by rescale, which the CUDA backend makes with one forward NTT fewer.
  {
    b.key_switch_apply(context, decomposed, key, &automorphism, addends, rescaler)
  } -> std::same_as<std::array<ring::RnsPoly, 2>>;
  // The inner product alone, before ModDown: the two sums over context.qp_basis(level) in NTT form, the words of
  // rlwe::key_switch_inner_product. Sums of them (times plaintexts over Q_l u P) share one mod_down: double
  // hoisting (circuits/linear_transform.hpp).
  {
    b.key_switch_inner_product(context, decomposed, key, &automorphism)
  } -> std::same_as<std::array<ring::RnsPoly, 2>>;
  // ModDown by the dropped primes (P), in the input's form: NTT form over Q_l u P gives NTT form over Q_l.
  { b.mod_down(mod_down, y) } -> std::same_as<ring::RnsPoly>;
};

// Optional: ModUp followed by key_switch_apply without an automorphism, as one call with the same words (addends
// and rescaler as key_switch_apply takes them; a null rescaler: none). A backend that can fuse the two (the CUDA
// backend sums ModUp's digits with the key inside its last NTT pass) provides it; the evaluator uses it for
// relinearization where it is there.
template <class B>
concept FusedKeySwitch = requires(const B& b, const rlwe::Context& context, const ring::RnsPoly& y, int level,
                                  const rlwe::SwitchingKey& key, std::array<const ring::RnsPoly*, 2> addends,
                                  const ring::Rescaler* rescaler) {
  { b.key_switch(context, y, level, key, addends, rescaler) } -> std::same_as<std::array<ring::RnsPoly, 2>>;
};

// Optional: out (over rescaler.kept()) = sum_t rescale(a_t b_t), the factors over rescaler.basis() in NTT form:
// the words of product, rescale and add term by term (each product rounded on its own, unlike
// linear_combination_rescaled, which rounds the sum once). A backend that can fuse it (the CUDA backend sums the
// products in one pass and the terms' rounding corrections in another, so the kept limbs are transformed once
// for the whole sum instead of once per term) provides it; the evaluator's multiply_plain_rescale_sum uses it
// where it is there: the sums of plaintext products that fill a program's matrix products.
template <class B>
concept RescaledProductSum = requires(const B& b, const ring::Rescaler& rescaler, ring::RnsPoly& x,
                                      std::span<const ring::RnsPoly* const> factors) {
  b.sum_of_rescaled_products(rescaler, x, factors, factors);
};

// Optional: rlwe::expand_uniform(basis, seed, stream) made where the backend computes, the same words. A backend
// that computes away from the host (the CUDA backend) provides it: seeded keys are expanded there on upload, and
// keys are made there from their seeds (ckks/backend_keys.hpp) instead of on the host and copied over.
template <class B>
concept UniformExpansion = requires(const B& b, const ring::RnsBasisPtr& basis, const math::Seed& seed,
                                    std::uint64_t stream) {
  { b.expand_uniform(basis, seed, stream) } -> std::same_as<ring::RnsPoly>;
};

// Optional: encoding's second half on the backend's device. `coefficients` holds `count` doubles (2 words each,
// on device()); the result over basis in NTT form has round(scale d_k) reduced modulo each prime at coefficient
// k gap and zero elsewhere: the host encoder's words from the same doubles (ckks::UnscaledPlaintext). A backend
// that computes away from the host (the CUDA backend) provides it, so that weights kept unscaled in its memory are
// encoded there at each use; the evaluator checks the range before calling.
// encode_scaled_batch: the same for several (each count = N / gap doubles), one polynomial each, in one pass.
template <class B>
concept CoefficientEncoding = requires(const B& b, const ring::RnsBasisPtr& basis, const DeviceWords& coefficients,
                                       std::size_t count, double scale, std::span<const DeviceWords* const> many,
                                       std::span<const std::size_t> gaps) {
  { b.device() } -> std::same_as<Device>;
  { b.encode_scaled(basis, coefficients, count, count, scale) } -> std::same_as<ring::RnsPoly>;
  { b.encode_scaled_batch(basis, many, gaps, scale) } -> std::same_as<std::vector<ring::RnsPoly>>;
};

// Plaintexts in NTT form kept as their distinct words: a slot vector of period p at ring degree N has, in NTT
// form, each word repeated gap = N / 2p times in a row, so `terms` plaintexts over `basis` need only
// terms x limbs x N / gap words (term-major, then limb); word k of a limb stands for words k gap .. k gap + gap - 1.
struct CompactPlaintexts {
  ring::RnsBasisPtr basis;  // the primes the plaintexts are encoded over (a level's)
  std::size_t terms = 0;    // how many plaintexts
  std::size_t gap = 0;      // N / 2p for a slot period p: how many times each word repeats in NTT form
  DeviceWords words;        // terms x basis->size() x N / gap words, where the backend computes
};

// Optional: a sum of products by plaintexts that are never written whole. encode_compact_batch is
// encode_scaled_batch's words kept compact (CompactPlaintexts; every gap the same, one that compact_encoding
// accepts); sum_of_rescaled_compact_products is sum_of_rescaled_products with those as the right factors, and
// sum_of_compact_products multiply_accumulate_many's sum with them (rounded later, once). A
// backend that encodes on its device (the CUDA backend) provides it: a transformer's weight diagonals (one token
// row's period) then cost a read of 1/gap of a plaintext per use instead of a write and a read of all of it.
template <class B>
concept CompactProductSum = requires(const B& b, const ring::RnsBasisPtr& basis, std::size_t gap, double scale,
                                     std::span<const DeviceWords* const> many, std::span<const std::size_t> gaps,
                                     const ring::Rescaler& rescaler, ring::RnsPoly& x,
                                     std::span<const ring::RnsPoly* const> factors, const CompactPlaintexts& c) {
  { b.compact_encoding(gap) } -> std::same_as<bool>;
  { b.encode_compact_batch(basis, many, gaps, scale) } -> std::same_as<CompactPlaintexts>;
  b.sum_of_rescaled_compact_products(rescaler, x, factors, c);
  b.sum_of_compact_products(x, factors, c);  // x = sum_t a_t c_t over c's basis, not rescaled
};

// Optional: encoding's first half on the backend's device. `values` holds tables.slots() complex doubles there
// (overwritten); `out` receives their special inverse FFT split into real parts then imaginary parts, the host's
// words (math::special_ifft); returns the largest magnitude among them. A backend that computes away from the host
// provides it, so that a plaintext crosses to it as its slot values and is transformed there
// (ckks::BasicEvaluator::unscaled).
template <class B>
concept SlotTransform = requires(const B& b, const math::SpecialFftTables& tables, DeviceWords& words) {
  { b.special_ifft_split(tables, words, words) } -> std::same_as<double>;
};

// Optional: the device work that a callable queues, recorded once and replayed without the host issuing each
// operation again (a CUDA graph), and a copy of words into an existing polynomial, queued in the same order. A
// backend whose operations are launched by the host onto a device queue provides it: issuing thousands of small
// operations costs the host about as long as the device takes to run them (graph::CapturedRun).
template <class B>
concept WorkCapture = requires(const B& b, const std::function<void()>& work, ring::RnsPoly& x, const ring::RnsPoly& y) {
  { b.capture(work) };
  b.capture(work).replay();
  b.copy_into(x, y);
};

}  // namespace cerium::backend
