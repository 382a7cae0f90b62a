#pragma once
// The launchers of the batched CKKS primitive kernels (kernels/elementwise.cu, rescale.cu, basis_conversion.cu,
// automorphism.cu, key_switch.cu). Host code reaches the kernels only through these non-template functions, so no
// CUDA header reaches the public headers; the plans (elementwise.hpp, rescale.hpp, basis_conversion.hpp,
// automorphism.hpp, key_switch.hpp) are the user-facing interface and check arguments before launching.
//
// Every polynomial is raw limb-major device memory: limb i at words [i N, (i + 1) N), as the NTT uses. Each
// kernel covers all its limbs in one launch. The constant structs hold math::Modulus as the CPU builds it, so
// the device runs the very same Barrett/Shoup/WideAccumulator code on the same constants: the words match.

#include <cstddef>
#include <cstdint>

#include "cerium/math/modarith.hpp"

namespace cerium::cuda::detail {

// --- elementwise ---------------------------------------------------------------------------------------------
enum class ElementwiseOp : int {
  add,                 // out = a + b
  sub,                 // out = a - b
  negate,              // out = -a
  multiply,            // out = a b (Barrett, NTT form)
  multiply_accumulate, // out = out + a b
  multiply_scalar,     // out = a s_i (Shoup, s_i per limb)
  subtract_and_scale,  // out = (a - b) s_i (Shoup): the last step of rescale and ModDown in NTT form
  add_scalar,          // out = a + s_i: adding a constant in NTT form
};

// A per-limb Shoup constant, 8 bytes so that a limb's pair is one load.
struct ShoupPair {
  std::uint32_t value = 0;
  std::uint32_t quotient = 0;
};

// Scalars of up to this many limbs travel in the launch parameters: no upload, no host wait.
inline constexpr std::size_t inline_scalar_limbs = 64;

struct ElementwiseLaunch {
  ElementwiseOp op = ElementwiseOp::add;
  std::uint32_t* out = nullptr;
  const std::uint32_t* a = nullptr;
  const std::uint32_t* b = nullptr;
  const math::Modulus* moduli = nullptr;  // limbs entries
  const ShoupPair* scalars = nullptr;     // limbs entries, for the scalar ops (null: inline_scalars)
  ShoupPair inline_scalars[inline_scalar_limbs] = {};
  int log_degree = 0;                     // N >= 4: a thread moves 4 words as one 16-byte vector
  std::size_t limbs = 0;
  void* stream = nullptr;
};
void launch_elementwise(const ElementwiseLaunch& launch);

// The tensor product of two 2-part ciphertexts in one pass: d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1, every
// input read once (d0 may be a0, or b0 when squaring: each word is read before it is written).
struct TensorLaunch {
  std::uint32_t* d0 = nullptr;
  std::uint32_t* d1 = nullptr;
  std::uint32_t* d2 = nullptr;
  const std::uint32_t* a0 = nullptr;
  const std::uint32_t* a1 = nullptr;
  const std::uint32_t* b0 = nullptr;
  const std::uint32_t* b1 = nullptr;
  const math::Modulus* moduli = nullptr;
  int log_degree = 0;
  std::size_t limbs = 0;
  void* stream = nullptr;
};
void launch_tensor(const TensorLaunch& launch);

// A linear combination out = sum_t a_t b_t (+ out when accumulate) in one pass: each thread keeps the running
// residue of its 4 words in registers over all terms. Terms are passed by address in the launch parameters (up
// to linear_combination_max_terms per launch; the plan chains launches with accumulate for more).
inline constexpr std::size_t linear_combination_max_terms = 32;

struct LinearCombinationLaunch {
  const std::uint32_t* a[linear_combination_max_terms] = {};
  const std::uint32_t* b[linear_combination_max_terms] = {};
  std::size_t terms = 0;
  bool accumulate = false;
  std::uint32_t* out = nullptr;  // must not be one of the factors
  const math::Modulus* moduli = nullptr;
  int log_degree = 0;
  std::size_t limbs = 0;
  void* stream = nullptr;
};
void launch_linear_combination(const LinearCombinationLaunch& launch);

// --- rescale -------------------------------------------------------------------------------------------------
struct RescaleLimbConstants {
  math::Modulus modulus;       // kept prime q_i
  std::uint32_t p_mod = 0;     // [P]_{q_i}
  std::uint32_t p_inv = 0;     // [P^{-1}]_{q_i}
  std::uint32_t p_inv_shoup = 0;
  std::uint32_t reserved = 0;
};

// The rescale's remainder r = x mod P from the dropped limbs (kernels/rescale_remainder.cuh).
struct RescaleRemainder {
  math::Modulus second_last;               // a, for two dropped primes
  std::uint32_t last = 0;                  // b
  std::uint32_t last_inv = 0;              // [b^{-1}]_a and its Shoup quotient
  std::uint32_t last_inv_shoup = 0;
  std::uint64_t half = 0;                  // (P - 1) / 2 for nearest, P for floor (never flagged)
  int dropped_count = 1;
};

struct RescaleLaunch {
  const std::uint32_t* in = nullptr;       // the kept limbs of x (kept entries)
  const std::uint32_t* dropped = nullptr;  // the dropped limbs in coefficient form (1 or 2 limbs)
  std::uint32_t* out = nullptr;            // kept limbs; may equal in
  const RescaleLimbConstants* constants = nullptr;
  RescaleRemainder remainder;
  bool correction_only = false;            // write t_i = [centered r]_{q_i} instead of the result (NTT path)
  // correction_only over several terms' dropped limbs, term_stride words apart: t_i = sum of the terms' t_i (the
  // correction of a sum of separately rescaled polynomials).
  std::size_t terms = 1;
  std::size_t term_stride = 0;
  int log_degree = 0;
  std::size_t kept = 0;
  void* stream = nullptr;
};
void launch_rescale(const RescaleLaunch& launch);

// --- fast basis conversion, ModUp, ModDown ------------------------------------------------------------------
struct ConversionSource {
  std::uint32_t modulus = 0;       // q_i
  std::uint32_t q_hat_inv = 0;     // [Q_i^{-1}]_{q_i} and its Shoup quotient
  std::uint32_t q_hat_inv_shoup = 0;
  std::uint32_t shift = 0;         // added before the conversion (ModDown nearest: (P - 1) / 2 mod q_i)
  std::uint32_t in_limb = 0;       // the limb of `in` holding source i
  std::uint32_t copy_to = 0;       // ModUp: the output limb that receives source i unchanged (~0u: none)
  std::uint32_t reserved[2] = {};
};
static_assert(sizeof(ConversionSource) == 32);

struct ConversionTarget {
  math::Modulus modulus;           // p_j
  std::uint32_t out_limb = 0;      // the limb of `out` that receives target j
  std::uint32_t x_limb = 0;        // ModDown: the limb of `in` holding x at this kept prime
  std::uint32_t shift = 0;         // ModDown: h_j = [(P - 1) / 2]_{p_j} (0 for floor)
  std::uint32_t p_inv = 0;         // ModDown: [P^{-1}]_{p_j} and its Shoup quotient
  std::uint32_t p_inv_shoup = 0;
  std::uint32_t two32_mod = 0;     // 2^32 mod p_j: reduces the 128-bit sum with one Barrett step
};
static_assert(sizeof(ConversionTarget) == 48);

enum class ConversionEpilogue : int {
  store,           // out_j = Conv(x)_j
  mod_down,        // out_j = (x_j + h_j - Conv(x + h)_j) P^{-1}
  mod_down_shift,  // out_j = Conv(x + h)_j - h_j: ModDown's correction before its forward NTT (NTT form)
  // ModDown's correction T_j = Conv(x + h)_j - h_j plus, on the first rescale.kept targets, [P]_{q_j} t_j: t the
  // correction of a rescale by D (the other targets' primes, whose T_j are stored as they are) of
  // c_D = (x_D - T_D) P^{-1}, x_D read from ConversionPart::x_dropped. One pass for the corrections of a ModDown
  // that also rescales (register form only).
  mod_down_rescale,
};

// The constants of the mod_down_rescale epilogue.
struct ConversionRescale {
  std::uint32_t kept = 0;                            // targets below get the rescale's correction too
  RescaleRemainder remainder;                        // of c_D (D: targets kept .. kept + dropped_count - 1)
  const RescaleLimbConstants* constants = nullptr;   // kept entries: q_j and [D]_{q_j}
  const std::uint32_t* factors = nullptr;            // kept (value, Shoup quotient) pairs: [P]_{q_j}
};

struct ConversionLaunch {
  ConversionEpilogue epilogue = ConversionEpilogue::store;
  const std::uint32_t* in = nullptr;
  std::uint32_t* out = nullptr;
  const ConversionSource* sources = nullptr;  // source_count entries
  const ConversionTarget* targets = nullptr;  // target_count entries
  const std::uint32_t* q_hat_mod = nullptr;   // target_count x source_count: [Q_i]_{p_j} at j L + i
  std::size_t source_count = 0;
  std::size_t target_count = 0;
  bool copy_sources = false;                  // ModUp: write the source limbs to their copy_to limbs too
  const std::uint32_t* copy_in = nullptr;     // the copies' words, at in's limb positions (null: in itself)
  // A batch of polynomials with the same tables: polynomial b reads in (and copy_in) + b in_stride and writes
  // out + b out_stride (words).
  std::size_t batch = 1;
  std::size_t in_stride = 0;
  std::size_t out_stride = 0;
  // mod_down_rescale: polynomial b's D limbs of x (coefficient form, consecutive) at x_dropped + b x_dropped_stride.
  const std::uint32_t* x_dropped = nullptr;
  std::size_t x_dropped_stride = 0;
  ConversionRescale rescale;
  int log_degree = 0;
  void* stream = nullptr;
};
// Source counts up to conversion_max_sources (the per-block staging of [x_i Q_i^{-1}] in shared memory).
inline constexpr std::size_t conversion_max_sources = 96;
void launch_conversion(const ConversionLaunch& launch);

// One polynomial of a launch whose polynomials each have their own tables (ModUp's digits).
struct ConversionPart {
  const std::uint32_t* in = nullptr;
  const std::uint32_t* copy_in = nullptr;  // null: the copies come from in
  std::uint32_t* out = nullptr;
  const ConversionSource* sources = nullptr;
  const ConversionTarget* targets = nullptr;
  const std::uint32_t* q_hat_mod = nullptr;  // target_count x source_count
  std::uint32_t source_count = 0;
  std::uint32_t target_count = 0;
  const std::uint32_t* x_dropped = nullptr;  // mod_down_rescale: D's limbs of x
};
inline constexpr std::size_t conversion_max_parts = 16;
inline constexpr std::size_t conversion_parts_max_sources = 32;
struct ConversionParts {
  ConversionPart part[conversion_max_parts];
  std::size_t count = 0;
};
// Every part in one launch (one grid slice per part), with args' epilogue, copy_sources, log_degree and stream
// (its tables, in, out and batch unused); each part has at most conversion_parts_max_sources sources.
void launch_conversion_parts(const ConversionLaunch& args, const ConversionParts& parts);

// --- automorphism (NTT form) ----------------------------------------------------------------------------------
struct AutomorphismLaunch {
  const std::uint32_t* in = nullptr;
  std::uint32_t* out = nullptr;               // must not overlap in
  const std::uint32_t* permutation = nullptr; // N entries: out[j] = in[permutation[j]], every limb
  int log_degree = 0;
  std::size_t limbs = 0;
  void* stream = nullptr;
};
void launch_automorphism(const AutomorphismLaunch& launch);

// --- uniform expansion (seeded keys) --------------------------------------------------------------------------
// Limb i of out (N words) gets ckks::expand_uniform_limb(seed, stream, first_limb + i, primes[i]): the accepted
// words of its ChaCha20 stream, in stream order, reduced mod its prime moduli[i].
struct UniformExpansionLaunch {
  std::uint32_t* out = nullptr;
  const math::Modulus* moduli = nullptr;  // limbs entries, on the device
  std::uint32_t seed[8] = {};             // the ChaCha20 key words
  std::uint64_t stream = 0;               // the uniform stream (below 2^56)
  std::size_t first_limb = 0;             // limb position of out's limb 0 in the basis (below 256)
  int log_degree = 0;
  std::size_t limbs = 0;
  void* stream_handle = nullptr;          // cudaStream_t
};
void launch_uniform_expansion(const UniformExpansionLaunch& launch);

// --- compressed periodic plaintexts -----------------------------------------------------------------------------
// out (limbs x N words) gets, at word j of limb i, in[i N / gap + j / gap]: each compressed word fills its block.
struct BlockExpansionLaunch {
  std::uint32_t* out = nullptr;
  const std::uint32_t* in = nullptr;  // limbs x N / gap words, on the device
  int log_degree = 0;
  int log_gap = 0;
  std::size_t limbs = 0;
  void* stream_handle = nullptr;  // cudaStream_t
};
void launch_block_expansion(const BlockExpansionLaunch& launch);

// --- encoding from unscaled coefficients (ckks::UnscaledPlaintext) ---------------------------------------------
// Polynomial t of out (limbs x N words each, consecutive, coefficient form) gets, at word k gap_t of limb i,
// round(scale coefficients[t][k]) mod moduli[i] (rounded half away from zero, exact for any magnitude), and 0 at
// every other word: a sum's plaintexts in one launch.
inline constexpr std::size_t scaled_encoding_max_terms = 32;

struct ScaledEncodingLaunch {
  std::uint32_t* out = nullptr;
  const double* coefficients[scaled_encoding_max_terms] = {};  // term t's N / gap_t doubles, on the device
  int log_gap[scaled_encoding_max_terms] = {};
  std::size_t terms = 0;
  const math::Modulus* moduli = nullptr;  // limbs entries, on the device
  double scale = 1;
  int log_degree = 0;
  std::size_t limbs = 0;
  void* stream_handle = nullptr;  // cudaStream_t
  // launch_scaled_encoding_transformed only: the forward NTT's twiddle pairs (w, w_shoup) of the limbs' primes,
  // N pairs a limb, limb-major (cuda::NttPlan's table).
  const std::uint32_t* twiddles = nullptr;
  // launch_scaled_encoding_transformed only, every term at one gap: out gets each (term, limb)'s N / gap distinct
  // words alone (term-major, then limb), word k standing for words k gap .. k gap + gap - 1 of the NTT form: a
  // plaintext 1/gap of its size that the products read as it is (CombinationRange::b_log_gap).
  bool compact = false;
};
void launch_scaled_encoding(const ScaledEncodingLaunch& launch);

// The same words already in NTT form (out in NTT form, not coefficient form), for terms whose N / gap_t
// coefficients fit one block (scaled_encoding_transforms): each (term, limb) encodes its N / gap_t words in shared
// memory, runs the forward NTT's first log2(N / gap_t) stages on them alone and writes each result to its gap_t
// consecutive words (math::ntt_forward_compressed: the later stages only pair values with zeros). A weight of one
// token row's period (2048 words a limb at N = 2^16) costs one write of the limb instead of an encoding pass and a
// full NTT.
inline constexpr int scaled_encoding_max_transformed_log = 13;  // 2^13 words (32 KiB) of shared memory
constexpr bool scaled_encoding_transforms(int log_degree, int log_gap) {
  return log_gap >= 2 && log_gap <= log_degree && log_degree - log_gap <= scaled_encoding_max_transformed_log;
}
void launch_scaled_encoding_transformed(const ScaledEncodingLaunch& launch);

// --- special inverse FFT (encoding's first half) ----------------------------------------------------------------
// math::special_ifft of p complex values in place, then the bit-reversal and the 1/p factor while writing the real
// parts and then the imaginary parts to out (ckks::UnscaledPlaintext's layout), with the largest |word| as the bits
// of a non-negative double in *largest (zeroed before).
struct SpecialFftLaunch {
  double* values = nullptr;             // p complex values, (re, im) interleaved; transformed in place
  const double* twiddles = nullptr;     // p complex: entry h + j is stage h's j-th twiddle (SpecialFftTables)
  double* out = nullptr;                // 2p doubles
  unsigned long long* largest = nullptr;
  std::size_t size = 0;                 // p, a power of two
  double inverse_size = 1;              // 1 / p as the host computes it
  void* stream_handle = nullptr;        // cudaStream_t
};
void launch_special_ifft(const SpecialFftLaunch& launch);

// --- key-switch inner product ---------------------------------------------------------------------------------
// Digits and key digits are passed by address (in the launch parameters), so that they may live in separate
// allocations: the ModUp digits and the key's polynomials are each their own RnsPoly.
inline constexpr std::size_t inner_product_max_digits = 32;

struct InnerProductLaunch {
  const std::uint32_t* digits[inner_product_max_digits] = {};  // digit d over Q_l u P, limb-major
  const std::uint32_t* key_b[inner_product_max_digits] = {};   // key digit d, key limbs of the whole chain
  const std::uint32_t* key_a[inner_product_max_digits] = {};
  std::size_t digit_count = 0;
  std::size_t q_limbs = 0;                   // limb j < q_limbs reads key limb j, else j + key_p_shift
  std::size_t key_p_shift = 0;
  const math::Modulus* moduli = nullptr;     // limbs entries (Q_l u P)
  const std::uint32_t* permutation = nullptr; // optional automorphism, applied to the digits as they are read
  std::uint32_t* out0 = nullptr;             // sum_d digit_d b_d
  std::uint32_t* out1 = nullptr;             // sum_d digit_d a_d
  std::size_t limbs = 0;
  int log_degree = 0;
  void* stream = nullptr;
};
void launch_inner_product(const InnerProductLaunch& launch);

// --- ModRaise: the centered lift of a polynomial over one or two primes into a larger basis ------------------
struct ModRaiseLaunch {
  const std::uint32_t* in = nullptr;   // source_count limbs, coefficient form
  std::uint32_t* out = nullptr;        // target_count limbs, coefficient form (not overlapping in)
  std::size_t source_count = 1;        // 1 or 2
  std::uint32_t q0 = 0;                // the source primes
  std::uint32_t q1 = 0;
  std::uint32_t q0_inv_mod_q1 = 0;     // [q0^{-1}]_{q1} (two sources)
  const math::Modulus* targets = nullptr;  // target_count entries
  std::size_t target_count = 0;
  int log_degree = 0;
  void* stream = nullptr;
};
void launch_mod_raise(const ModRaiseLaunch& launch);

}  // namespace cerium::cuda::detail
