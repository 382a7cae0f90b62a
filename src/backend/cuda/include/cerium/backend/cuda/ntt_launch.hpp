#pragma once
// The launchers of the batched NTT kernels (kernels/ntt.cu). Host code reaches the kernels only through these
// non-template functions, so no CUDA header reaches the public headers. NttPlan is the user-facing interface.

#include <cstddef>
#include <cstdint>

namespace cerium::cuda::detail {

struct InnerProductLaunch;  // primitives_launch.hpp

inline constexpr int ntt_min_log_degree = 10;
inline constexpr int ntt_max_log_degree = 17;
// Up to 2^13 words a limb is one block's tile (one pass); above, the transform makes a column pass and a row
// pass over rows of 2^11 words whose first 3 stages use the row's own twiddles, the rest row 0's after a twist
// (math/ntt_row_twist.hpp).
inline constexpr int ntt_max_single_log_degree = 13;
inline constexpr int ntt_row_log = 11;
inline constexpr int ntt_row_direct_stages = 3;
// Twist pairs per limb: N / 2^11 rows of 2^(11 - 3) factors each.
constexpr std::size_t ntt_twists_per_limb(std::size_t n) { return n >> ntt_row_direct_stages; }

// Per-limb constants of the inverse's last stage, into which N^{-1} is folded: both outputs are multiplied by
// N^{-1}, the difference by the stage's twiddle w times N^{-1} (one Shoup product each instead of two).
struct NttLimbConstants {
  std::uint32_t modulus = 0;
  std::uint32_t n_inv = 0;               // N^{-1} mod q
  std::uint32_t n_inv_shoup = 0;         // its Shoup quotient
  std::uint32_t last_twiddle = 0;        // psi^{-N/2} N^{-1} mod q
  std::uint32_t last_twiddle_shoup = 0;
  std::uint32_t reserved[3] = {};        // 32 bytes, one aligned sector per limb
};
static_assert(sizeof(NttLimbConstants) == 32);

// What the forward transform's last pass can do instead of storing the transform T: finish a rescale or a ModDown,
// out = (minuend - T) s (+ addend), so that T never goes to global memory and back. Limb l of polynomial b of the
// batch reads minuend + b minuend_stride + l N and writes out + b out_stride + l N; s is the pair (value, Shoup
// quotient) at scale[2 l], scale[2 l + 1]. Polynomials 0 and 1 also add addend[b] + l N where it is not null (a
// key switch's two parts), times the pair at addend_scale[2 l] when that table is given (a ModDown that also
// rescales). out may be the minuend (each word is read before it is written, by the same thread); the
// transformed data is left as it was.
struct NttFinish {
  const std::uint32_t* minuend = nullptr;
  std::size_t minuend_stride = 0;
  const std::uint32_t* addend[2] = {nullptr, nullptr};
  const std::uint32_t* addend_scale = nullptr;  // optional: period pairs on the device
  std::uint32_t* out = nullptr;
  std::size_t out_stride = 0;
  const std::uint32_t* scale = nullptr;   // period pairs on the device
};

// Limb i of the batch is local limb l = i mod period of its polynomial and uses table l (l < split) or l + shift
// (counted from `twiddles` / `constants`): one launch transforms several polynomials at once, over a basis
// whose primes are two runs of the table set (a level's Q_l u P within the tables of Q_top u P).
struct NttLaunch {
  std::uint32_t* data = nullptr;               // limbs x N words, limb-major, transformed in place
  const std::uint32_t* twiddles = nullptr;     // limbs x N pairs (w, w_shoup) of this direction, limb-major
  const std::uint32_t* twists = nullptr;       // two passes: limbs x ntt_twists_per_limb pairs, limb-major
  const NttLimbConstants* constants = nullptr;  // limbs entries
  int log_degree = 0;                          // ntt_min_log_degree .. ntt_max_log_degree
  std::size_t limbs = 0;
  std::size_t period = 0;                      // 0: one polynomial of `limbs` limbs
  std::size_t split = ~std::size_t{0};
  std::size_t shift = 0;
  // Limbs left as they are: in polynomial b of the batch, local limbs l with b skip_stride <= l <
  // min(b skip_stride + skip_width, skip_limit) (ModUp's digits, whose own limbs arrive already transformed).
  std::size_t skip_stride = 0;
  std::size_t skip_width = 0;
  std::size_t skip_limit = 0;
  // Where the batch lies: polynomial b's limb l at data + b poly_stride + l N (0: period N, consecutive). When
  // source is given, the transform's first pass reads polynomial b from source + b source_stride (0: period N)
  // instead of data, so the input is left as it was and data receives the result.
  std::size_t poly_stride = 0;
  const std::uint32_t* source = nullptr;
  std::size_t source_stride = 0;
  void* stream = nullptr;                      // cudaStream_t
  const NttFinish* finish = nullptr;           // forward only: the last pass's epilogue (see NttFinish)
  // Forward only, instead of storing: the last pass multiplies the batch's polynomials (the digits of a ModUp, one
  // per period, inner_product->digit_count of them, at most 4) by their key digits and writes the two sums to
  // inner_product->out0 / out1, as launch_inner_product would from the stored transforms (its digits and
  // permutation unused). Skipped limbs enter the sums as they are. data keeps the first pass's output.
  const InnerProductLaunch* inner_product = nullptr;
};

// Forward (Cooley-Tukey) and inverse (Gentleman-Sande, N^{-1} folded in) over all limbs, one launch per pass.
// Throw DeviceError when a launch fails.
void launch_ntt_forward(const NttLaunch& launch);
void launch_ntt_inverse(const NttLaunch& launch);

// Passes over global memory one transform makes at this degree (1 while a limb fits one block, else 2).
int ntt_pass_count(int log_degree);

}  // namespace cerium::cuda::detail
