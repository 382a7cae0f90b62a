#pragma once
// The eager CKKS evaluator: homomorphic operations on ciphertexts, one call each, in two forms: `op(a, ...)`
// returns a new ciphertext and `op_inplace(a, ...)` overwrites its first argument.
//
// BasicEvaluator is a template over the polynomial backend (backend::PolyBackend) so that the CPU and CUDA
// backends share this logic without a runtime switch; `Evaluator` is the CPU one. The member definitions live in
// src/ckks/evaluator_*.hpp and are explicitly instantiated, once per backend, in src/ckks/evaluator.cpp.
//
// Keys are attached once (set_relinearization_key, set_galois_keys) and shared: an evaluator is read-only during
// operations, so one instance serves many threads, and the keys (hundreds of MiB at N = 2^16) are never copied.
//
// Levels and scales of binary operations (add, sub, multiply) are aligned automatically, never silently wrong:
//  - Different levels: the higher operand comes down. If its scale already matches the other's (scales_match in
//    scale.hpp), dropping limbs is enough (exact, no noise). Otherwise it is dropped to one level above, multiplied
//    by the integer k = round(target P / scale) and rescaled by that level's primes P, which lands on the other's
//    scale within scale / (2P), about 1/2 (adjust_scale): the level it spends was going to be dropped anyway.
//    Multiplications only need equal levels (their scales multiply), so they never adjust scales.
//  - Same level, different scales: LevelError naming both scales; adjust_scale one of them (it costs a level).
//  - Plaintext operands are brought to the ciphertext's level by dropping limbs; a plaintext added to a ciphertext
//    must be encoded at the ciphertext's scale.
//
// Scale bounds: a multiplication whose result scale would leave fewer than `scale_headroom_bits` bits of Q_level
// above it (for the message's integer part and sign) throws LevelError naming both; so do multiplications and
// rescales with no level left.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/backend/cpu_backend.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/ckks/periodic_plaintext.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/ckks/scale.hpp"
#include "cerium/ckks/unscaled_plaintext.hpp"
#include "cerium/rlwe/key_switch.hpp"

namespace cerium::ckks {

// How an evaluator checks its operations.
struct EvaluatorOptions {
  // Bits of Q_level kept free above a product's scale: the message's integer part (|m| < 8) and its sign.
  int scale_headroom_bits = 4;
};

// The evaluator over backend B (see the file comment): operations on ciphertexts of one context, with the keys
// attached to it. Read-only once the keys are set, so one instance serves many threads.
template <backend::PolyBackend B = backend::CpuBackend>
class BasicEvaluator {
 public:
  // InvalidArgument for a null context or a negative scale_headroom_bits.
  explicit BasicEvaluator(ContextPtr context, B backend = B{}, EvaluatorOptions options = {});

  const ContextPtr& context() const { return context_; }        // the context every operand must share
  const B& backend() const { return backend_; }                 // where the polynomials are computed
  const EvaluatorOptions& options() const { return options_; }  // as given

  // --- Keys (MismatchError when they belong to another context) ---
  void set_relinearization_key(std::shared_ptr<const RelinearizationKey> key);
  void set_galois_keys(std::shared_ptr<const GaloisKeys> keys);
  const std::shared_ptr<const RelinearizationKey>& relinearization_key() const { return relin_key_; }
  const std::shared_ptr<const GaloisKeys>& galois_keys() const { return galois_keys_; }

  // --- Addition and subtraction (levels and scales aligned as described above) ---
  Ciphertext add(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext add(const Ciphertext& a, const Plaintext& b) const;
  Ciphertext add(const Ciphertext& a, double constant) const;
  Ciphertext add(const Ciphertext& a, std::complex<double> constant) const;
  void add_inplace(Ciphertext& a, const Ciphertext& b) const;
  void add_inplace(Ciphertext& a, const Plaintext& b) const;
  void add_inplace(Ciphertext& a, double constant) const;
  void add_inplace(Ciphertext& a, std::complex<double> constant) const;

  // a - b, aligned and checked as add.
  Ciphertext sub(const Ciphertext& a, const Ciphertext& b) const;
  Ciphertext sub(const Ciphertext& a, const Plaintext& b) const;
  Ciphertext sub(const Ciphertext& a, double constant) const;
  Ciphertext sub(const Ciphertext& a, std::complex<double> constant) const;
  void sub_inplace(Ciphertext& a, const Ciphertext& b) const;
  void sub_inplace(Ciphertext& a, const Plaintext& b) const;
  void sub_inplace(Ciphertext& a, double constant) const;
  void sub_inplace(Ciphertext& a, std::complex<double> constant) const;

  // -a: every part negated; level and scale unchanged.
  Ciphertext negate(const Ciphertext& a) const;
  void negate_inplace(Ciphertext& a) const;

  // --- Multiplication ---
  // Tensor product then relinearization (needs the relinearization key); scale a.scale() * b.scale(), not
  // rescaled. Both operands must have 2 parts.
  Ciphertext multiply(const Ciphertext& a, const Ciphertext& b) const;
  void multiply_inplace(Ciphertext& a, const Ciphertext& b) const;
  // The tensor product alone: 3 parts (d0, d1, d2) with d0 + d1 s + d2 s^2 = product. Sums of such products can
  // share one relinearization.
  Ciphertext multiply_no_relin(const Ciphertext& a, const Ciphertext& b) const;
  void multiply_no_relin_inplace(Ciphertext& a, const Ciphertext& b) const;
  // 3 parts -> 2 by a key switch of the s^2 part; a 2-part ciphertext is returned unchanged.
  Ciphertext relinearize(const Ciphertext& a) const;
  void relinearize_inplace(Ciphertext& a) const;
  // multiply then rescale, relinearize then rescale: the words of the two calls in sequence, with one forward
  // NTT fewer on the GPU (the relinearization's ModDown and the rescale share it). Need a level left.
  Ciphertext multiply_rescale(const Ciphertext& a, const Ciphertext& b) const;
  void multiply_rescale_inplace(Ciphertext& a, const Ciphertext& b) const;
  Ciphertext relinearize_rescale(const Ciphertext& a) const;
  void relinearize_rescale_inplace(Ciphertext& a) const;

  // By a plaintext (any scale; scale a.scale() * b.scale()). Allowed at level 0 if the scale fits.
  Ciphertext multiply(const Ciphertext& a, const Plaintext& b) const;
  void multiply_inplace(Ciphertext& a, const Plaintext& b) const;
  // sum_t rescale(a_t * p_t): the words of multiply, rescale_inplace and add_inplace term by term (each product
  // rounded on its own), computed where the backend can (backend::RescaledProductSum: the terms at one level, 2
  // parts, each plaintext at its ciphertext's level, one product scale) with one rescale's transforms for the
  // whole sum instead of one per term: a matrix product's inner sums. Level >= 1 and a scale that stays >= 1.
  Ciphertext multiply_plain_rescale_sum(std::span<const Ciphertext* const> a,
                                        std::span<const Plaintext* const> p) const;
  // The same with each p_t encoded from its unscaled form by options (encode(p, options)'s words and checks):
  // with a backend that keeps plaintexts compact (backend::CompactProductSum, the CUDA backend) and terms whose
  // plaintexts share a short period (a token row's) and are encoded at their ciphertexts' level and slots, the
  // plaintexts are made as their distinct words only (1/gap of their size) and read so by the products.
  Ciphertext multiply_plain_rescale_sum(std::span<const Ciphertext* const> a,
                                        std::span<const UnscaledPlaintext* const> p,
                                        const EncodeOptions& options) const;
  // sum_t a_t * p_t, not rescaled (a's level, scale a_t.scale() * p_t.scale()): a sum of plaintext products
  // rounded once, by one rescale after it, instead of term by term (fewer roundings, and on the GPU no per-term
  // transforms: graph::RunOptions::round_sums_once). One pass over the products' limbs. The terms must share a
  // level (their plaintexts too), a slot count, 2 parts and one product scale (MismatchError / LevelError).
  Ciphertext multiply_plain_sum(std::span<const Ciphertext* const> a, std::span<const Plaintext* const> p) const;
  // The same with each p_t encoded from its unscaled form by options; where the backend keeps plaintexts compact
  // (backend::CompactProductSum) and the terms share a short period, they are never written whole.
  Ciphertext multiply_plain_sum(std::span<const Ciphertext* const> a, std::span<const UnscaledPlaintext* const> p,
                                const EncodeOptions& options) const;
  // By a constant encoded at the scale P_l (the product of the primes of a's level), so that one rescale brings
  // the scale back to a.scale(): the result has scale a.scale() * P_l. Needs level >= 1.
  Ciphertext multiply(const Ciphertext& a, double constant) const;
  Ciphertext multiply(const Ciphertext& a, std::complex<double> constant) const;
  void multiply_inplace(Ciphertext& a, double constant) const;
  void multiply_inplace(Ciphertext& a, std::complex<double> constant) const;
  // By an integer: no encoding, no level, the scale is unchanged (the message is multiplied by c).
  Ciphertext multiply_integer(const Ciphertext& a, std::int64_t c) const;
  void multiply_integer_inplace(Ciphertext& a, std::int64_t c) const;

  // --- Levels and scales ---
  // Divides by the primes of a's level (rounding to nearest): level - 1, scale / P_level exactly.
  Ciphertext rescale(const Ciphertext& a) const;
  void rescale_inplace(Ciphertext& a) const;
  // Drops limbs down to `level` (exact: scale unchanged). LevelError for a level above a's.
  Ciphertext level_down(const Ciphertext& a, int level) const;
  void level_down_inplace(Ciphertext& a, int level) const;
  // Moves a one level down onto `target_scale` (multiply by round(target P / scale), rescale by P): what the
  // automatic alignment does, for operands at the same level whose scales differ. LevelError when no level is
  // left or the target cannot be reached within scales_match.
  Ciphertext adjust_scale(const Ciphertext& a, double target_scale) const;
  void adjust_scale_inplace(Ciphertext& a, double target_scale) const;

  // --- Rotations (need the Galois keys; 2-part ciphertexts) ---
  // Slots rotated left by `steps` (right for negative steps), cyclically over a.slots(). Steps that are a
  // multiple of the slot count return a copy without a key.
  Ciphertext rotate(const Ciphertext& a, std::int64_t steps) const;
  void rotate_inplace(Ciphertext& a, std::int64_t steps) const;
  // Complex conjugation of every slot.
  Ciphertext conjugate(const Ciphertext& a) const;
  void conjugate_inplace(Ciphertext& a) const;
  // One rotation per step, sharing one ModUp of c1 (hoisting). Each result equals rotate(a, step) word for word:
  // rotate itself applies the automorphism to the ModUp digits, so both take the same path.
  std::vector<Ciphertext> rotate_hoisted(const Ciphertext& a, std::span<const std::int64_t> steps) const;

  // The Galois element and key of a rotation by `steps` of `slots` slots (a key made for a step equal mod slots
  // serves too; MissingKeyError naming the step when none is set), for circuits that run their own key switches
  // through the backend (double hoisting, circuits/linear_transform.hpp). The key lives as long as galois_keys().
  struct RotationKey {
    std::uint32_t element = 1;          // the element whose key serves: 5^r mod 2N, r = steps or one equal mod slots
    const SwitchingKey* key = nullptr;  // from sigma_k(s) to s, owned by galois_keys()
  };
  // A rotation's RotationKey (see the struct); InvalidArgument unless slots is a power of two in [1, N/2].
  RotationKey rotation_key(std::int64_t steps, std::size_t slots) const;

  // The product of the primes of `level` (level >= 1): what a rescale at that level divides the scale by.
  double level_prime_product(int level) const;

  // Placement: copies of ciphertexts and plaintexts where this evaluator's backend computes (device memory for
  // the CUDA backend; a plain copy for the CPU backend), and copies in host memory, for the Decryptor, the
  // Encoder and serialization. Operands of the evaluator's operations must be where its backend computes.
  Ciphertext upload(const Ciphertext& a) const;
  Plaintext upload(const Plaintext& a) const;
  Plaintext upload(Plaintext&& a) const;  // moves a host plaintext (no copy on the CPU backend)
  // A compressed periodic plaintext, expanded where the evaluator computes (on the GPU from its compressed words:
  // N / gap times less to copy); PeriodicPlaintext::expand's words.
  Plaintext upload(const PeriodicPlaintext& a) const;
  // An unscaled plaintext's coefficients where the evaluator computes (a copy on the CPU backend), and the
  // plaintext of options (Encoder::encode's defaults: level -1 the top, slots 0 the unscaled plaintext's) encoded
  // from them there: with a backend that encodes on its device (backend::CoefficientEncoding, the CUDA backend)
  // a scaling, rounding and NTT kernel pass in place of a host encoding and a copy. Encoder::encode(unscaled,
  // options)'s words and checks (Encoder::resolve).
  UnscaledPlaintext upload(const UnscaledPlaintext& a) const;
  Plaintext encode(const UnscaledPlaintext& a, const EncodeOptions& options = {}) const;
  // The same integers over Q_level u P where the evaluator computes (Encoder::encode_extended(a, options)'s
  // words): a double-hoisted transform's diagonals (circuits/linear_transform.hpp) encoded on the device.
  ring::RnsPoly encode_extended(const UnscaledPlaintext& a, const EncodeOptions& options = {}) const;
  // Encoding's first half where the evaluator computes: Encoder::unscaled(period, slots)'s words and checks. With
  // a backend that transforms on its device (backend::SlotTransform, the CUDA backend) the p slot values cross
  // over and the special inverse FFT runs there (it waits for the device: the range check needs the largest
  // coefficient); elsewhere the host encoder's, uploaded.
  UnscaledPlaintext unscaled(std::span<const std::complex<double>> period, std::size_t slots = 0) const;
  // Several at once with the same options (a sum's plaintexts): on a device that encodes, one launch and one
  // batched NTT per 32 of them. The words of encode one by one.
  std::vector<Plaintext> encode(std::span<const UnscaledPlaintext* const> many, const EncodeOptions& options = {}) const;
  // Copies in host memory, wherever the operand is: for the Decryptor, the Encoder and serialization.
  Ciphertext download(const Ciphertext& a) const;
  Plaintext download(const Plaintext& a) const;

 private:
  void check_operand(const Ciphertext& a, const char* operation) const;
  void check_binary(const Ciphertext& a, const Ciphertext& b, const char* operation) const;
  void check_binary(const Ciphertext& a, const Plaintext& b, const char* operation) const;
  void check_scale_fits(double scale, int level, const char* operation) const;
  void check_level_left(const Ciphertext& a, const char* operation) const;
  // A level to rescale at, and a scale that stays at least 1 after it (LevelError naming both otherwise).
  void check_rescalable(const Ciphertext& a, const char* operation) const;
  void require_relinearization_key(const char* operation) const;
  // c2's key switch with the relinearization key plus addends (rescaled by rescaler unless null): the backend's
  // fused key_switch where it has one (backend::FusedKeySwitch), else mod_up and key_switch_apply.
  std::array<ring::RnsPoly, 2> relinearized(const ring::RnsPoly& c2, int level,
                                            std::array<const ring::RnsPoly*, 2> addends,
                                            const ring::Rescaler* rescaler) const;
  // A rescale's bookkeeping once a's parts are divided: the level's basis object, level - 1, scale / P_level.
  void finish_rescale(Ciphertext& a, int level) const;

  // The integer k that moves `scale` at `level` onto target_scale after a rescale; LevelError naming `operation`
  // when none does.
  double scale_factor(double scale, double target_scale, int level, const char* operation) const;
  // Brings a to `level` with `scale` (level_down, or one level above then adjust_scale); see the header comment.
  void bring_to(Ciphertext& a, int level, double scale, const char* operation) const;
  // Aligns a (in place) and b (in place, or into `copy`, which then replaces it) for a binary operation; with
  // match_scales false only the levels are aligned. Returns the ciphertext to use as b.
  const Ciphertext& align(Ciphertext& a, const Ciphertext& b, Ciphertext& copy, bool match_scales,
                          const char* operation) const;
  // The plaintext's polynomial at a's level (dropping limbs into `copy` when needed), after bringing a down to
  // the plaintext's level when that is lower.
  const ring::RnsPoly& align(Ciphertext& a, const Plaintext& b, ring::RnsPoly& copy, const char* operation) const;
  void add_or_sub(Ciphertext& a, const Ciphertext& b, bool subtract) const;
  void add_or_sub_plain(Ciphertext& a, const Plaintext& b, bool subtract) const;
  void add_constant(Ciphertext& a, std::complex<double> constant, const char* operation) const;
  // A constant value * scale as an NTT-form polynomial over a level: Re at X^0, Im at X^(N/2), made where the
  // backend computes from half_monomial() by scalar passes (no upload: a CUDA graph can capture it).
  ring::RnsPoly constant_poly(std::complex<double> value, double scale, int level, const char* operation) const;
  // X^(N/2) over the top level's primes in NTT form where the backend computes: made (uploaded) on first use,
  // shared by copies of this evaluator.
  const ring::RnsPoly& half_monomial() const;
  void tensor(Ciphertext& a, const Ciphertext& b) const;
  double tensor_scale(const Ciphertext& a, const Ciphertext& b) const;  // the checks of a product; its scale
  Ciphertext tensor_product(const Ciphertext& a, const Ciphertext& b) const;  // out of place
  // The ciphertext with a's level, scale and slots and these parts (c1's seed dropped).
  Ciphertext like(const Ciphertext& a, std::vector<ring::RnsPoly> parts, double scale) const;
  Ciphertext apply_galois(const Ciphertext& a, const rlwe::DecomposedPoly& c1_digits, std::uint32_t galois_element,
                          const SwitchingKey& key) const;

  ContextPtr context_;
  B backend_;
  EvaluatorOptions options_;
  std::vector<double> level_products_;  // index: level; [0] unused
  std::shared_ptr<const RelinearizationKey> relin_key_;
  std::shared_ptr<const GaloisKeys> galois_keys_;
  struct HalfMonomial {
    std::once_flag made;
    ring::RnsPoly poly;
  };
  std::shared_ptr<HalfMonomial> half_monomial_ = std::make_shared<HalfMonomial>();
};

// The evaluator on the CPU: operands in host memory, upload and download plain copies.
using Evaluator = BasicEvaluator<backend::CpuBackend>;

extern template class BasicEvaluator<backend::CpuBackend>;

}  // namespace cerium::ckks
