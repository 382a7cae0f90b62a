// Fast basis conversion (and the ModUp / ModDown built on it) over every limb in one launch.
//
// Why the GPU needs its own loop: the CPU converts block by block, staging y_i = [x_i Q_i^{-1}]_{q_i} for 1024
// coefficients and then sweeping the targets. Here a block of 128 threads owns 128 coefficients: each thread
// stages its own y_i in shared memory (a column per thread, so no barrier is needed), then produces a run of
// targets from them; the grid's y dimension splits the targets so that enough blocks run, each recomputing the
// y_i from the few source limbs (L2-resident for ModUp's alpha and ModDown's |P| primes). Sums of products are
// accumulated exactly (64-bit partial sums of 4 products in a 128-bit math::WideAccumulator, or one 64-bit sum
// where a block's bounds show it fits) and reduced once, as the CPU does, so the words are the CPU's. ModUp's copies of the digit limbs and ModDown's subtract-and-scale
// are fused into the same kernel (the source load and the epilogue), so neither costs another pass.

#include <cuda_runtime.h>

#include <type_traits>
#include <utility>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "rescale_remainder.cuh"

namespace cerium::cuda::detail {
namespace conversion_kernels {

using math::u32;
using math::u64;
constexpr int kThreads = 128;
constexpr int kTargetsPerBlock = 8;
constexpr int kChunk = 4;  // products per 64-bit partial sum: 4 x 2^62 < 2^64

// The reduced value of target j from the staged y_i and its row of [Q_i]_{p_j} (both in shared memory).
__device__ __forceinline__ math::WideAccumulator accumulate(const u32* staged, const u32* row, std::size_t l) {
  math::WideAccumulator acc;
  for (std::size_t i0 = 0; i0 < l; i0 += kChunk) {
    u64 partial = 0;
    const std::size_t end = i0 + kChunk < l ? i0 + kChunk : l;
    for (std::size_t i = i0; i < end; ++i) partial += static_cast<u64>(staged[i * kThreads]) * row[i];
    acc.add(partial);
  }
  return acc;
}

// Target t of coefficient k from its sum hi 2^64 + lo (Narrow: the sum is lo alone): reduced, then the epilogue
// (ModDown reads x from in).
template <ConversionEpilogue Epilogue, bool Narrow = false>
__device__ __forceinline__ u32 converted(const u32* in, const ConversionTarget& t, u64 lo, u32 hi, std::size_t l,
                                         std::size_t n, std::size_t k) {
  // hi 2^64 + lo = hi 2^64 + a 2^32 + b is congruent to hi [2^64]_p + a [2^32]_p + b < 2^6 2^31 + 2^63 + 2^32 (hi
  // stays below 2^6 for the at most 96 sources), so one Barrett step instead of WideAccumulator::reduce's three.
  u32 v;
  if constexpr (Narrow) {
    v = math::barrett_reduce(lo, t.modulus);
  } else {
    const u64 folded = static_cast<u64>(hi) * t.modulus.two64_mod +
                       static_cast<u64>(static_cast<u32>(lo >> 32)) * t.two32_mod + static_cast<u32>(lo);
    v = math::barrett_reduce(l <= kChunk ? lo : folded, t.modulus);
  }
  const u32 p = t.modulus.value;
  if constexpr (Epilogue == ConversionEpilogue::mod_down) {
    const u32 x = in[t.x_limb * n + k];
    return math::mul_shoup(math::sub_mod(math::add_mod(x, t.shift, p), v, p), t.p_inv, t.p_inv_shoup, p);
  } else if constexpr (Epilogue == ConversionEpilogue::mod_down_shift ||
                       Epilogue == ConversionEpilogue::mod_down_rescale) {
    return math::sub_mod(v, t.shift, p);
  } else {
    return v;
  }
}

// The same, stored to out.
template <ConversionEpilogue Epilogue>
__device__ __forceinline__ void finish_at(const u32* in, u32* out, const ConversionTarget& t, u64 lo, u32 hi,
                                          std::size_t l, std::size_t n, std::size_t k) {
  out[t.out_limb * n + k] = converted<Epilogue>(in, t, lo, hi, l, n, k);
}
template <ConversionEpilogue Epilogue>
__device__ __forceinline__ void finish_at(const u32* in, u32* out, const ConversionTarget& t,
                                          const math::WideAccumulator& acc, std::size_t l, std::size_t n,
                                          std::size_t k) {
  finish_at<Epilogue>(in, out, t, acc.lo, static_cast<u32>(acc.hi), l, n, k);
}

template <ConversionEpilogue Epilogue>
__global__ void __launch_bounds__(kThreads) conversion_kernel(ConversionLaunch args) {
  // staged: source_count x kThreads words (a column per thread); rows: the block's targets' [Q_i]_{p_j}, read
  // by every thread (a broadcast from shared memory instead of a dependent global load per product).
  extern __shared__ u32 shared[];
  const std::size_t l = args.source_count;
  u32* staged = shared;
  u32* rows = shared + l * kThreads;
  const std::size_t first = static_cast<std::size_t>(blockIdx.y) * kTargetsPerBlock;
  const std::size_t last = first + kTargetsPerBlock < args.target_count ? first + kTargetsPerBlock : args.target_count;
  for (std::size_t w = threadIdx.x; w < (last - first) * l; w += kThreads) rows[w] = args.q_hat_mod[first * l + w];
  __syncthreads();
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (k >= n) return;
  const bool copy = args.copy_sources && blockIdx.y == 0;
  u32* column = staged + threadIdx.x;
  for (std::size_t i = 0; i < l; ++i) {
    const ConversionSource s = args.sources[i];
    u32 x = args.in[s.in_limb * n + k];
    if (copy && s.copy_to != ~0u) args.out[s.copy_to * n + k] = args.copy_in ? args.copy_in[s.in_limb * n + k] : x;
    if constexpr (Epilogue != ConversionEpilogue::store) x = math::add_mod(x, s.shift, s.modulus);
    column[i * kThreads] = math::mul_shoup(x, s.q_hat_inv, s.q_hat_inv_shoup, s.modulus);
  }
  // Two targets at a time: two independent accumulation chains share each staged load.
  std::size_t j = first;
  for (; j + 1 < last; j += 2) {
    const u32* row0 = rows + (j - first) * l;
    const u32* row1 = row0 + l;
    math::WideAccumulator acc0, acc1;
    for (std::size_t i0 = 0; i0 < l; i0 += kChunk) {
      u64 partial0 = 0, partial1 = 0;
      const std::size_t end = i0 + kChunk < l ? i0 + kChunk : l;
      for (std::size_t i = i0; i < end; ++i) {
        const u64 y = column[i * kThreads];
        partial0 += y * row0[i];
        partial1 += y * row1[i];
      }
      acc0.add(partial0);
      acc1.add(partial1);
    }
    finish_at<Epilogue>(args.in, args.out, args.targets[j], acc0, l, n, k);
    finish_at<Epilogue>(args.in, args.out, args.targets[j + 1], acc1, l, n, k);
  }
  if (j < last) finish_at<Epilogue>(args.in, args.out, args.targets[j], accumulate(column, rows + (j - first) * l, l), l, n, k);
}

// The register-blocked form for up to 32 sources (every ModUp digit and ModDown of the parameter sets in use).
// A block of 128 threads owns 256 coefficients, two per thread (k and k + 128, both coalesced); each thread keeps
// its y_i of both in registers (Sources of each: the source count rounded up to a multiple of 4, the padding
// zero). The block's targets' rows of [Q_i]_{p_j} (zero-padded likewise), their constants and the sources'
// constants sit in shared memory, so that one 16-byte broadcast load feeds eight products: four of each
// coefficient, for two targets at a time (four independent accumulation chains, which hide the multiply latency
// that one or two chains left exposed). The loops are unrolled at compile time: per product one multiply-add
// into a 64-bit partial sum, per four products one 128-bit add. Exactly the same sums as the staged form,
// hence the same words.
constexpr int kRegisterTargets = 16;  // targets per block (grid.y splits the rest)

// What the register form reads of ConversionLaunch, passed instead of all of it. With the whole launch struct
// and the parts as parameters (1.25 KiB) ptxas gave this kernel 118 registers, with these 72 (the same code;
// -Xptxas -v, CUDA 13.0): session 4's kernel flipped from 72 to 118 when ConversionLaunch grew by 16 bytes, and
// at 118 ModUp's conversion (N = 2^16, 3 digits) took 77 us against 51 us at 72.
struct RegisterConversionArgs {
  int log_degree = 0;
  bool copy_sources = false;
  ConversionRescale rescale;  // mod_down_rescale only
};
constexpr int kCoefficientsPerThread = 2;

// The 4 products of chunk c (sources 4c .. 4c + 3) with a row's 16-byte chunk r, added to sum (one 64-bit
// multiply-add each).
template <int Sources>
__device__ __forceinline__ u64 chunk_sum(const u32 (&y)[Sources], const uint4 r, int c, u64 sum = 0) {
  sum += static_cast<u64>(y[4 * c]) * r.x;
  sum += static_cast<u64>(y[4 * c + 1]) * r.y;
  sum += static_cast<u64>(y[4 * c + 2]) * r.z;
  return sum + static_cast<u64>(y[4 * c + 3]) * r.w;
}

// A target's running sum. Wide: 64-bit partial sums of 4 products added into a 128-bit math::WideAccumulator
// (4 products of 31-bit words always fit in 64 bits). Narrow: one 64-bit sum of all products, for blocks whose
// sums are known to stay below 2^64 (sum_fits): 28-bit digit primes against 31-bit targets leave room for all 32
// sources, and it saves the 128-bit adds and the wide reduction (about 40% of the instructions per word).
// (A PTX carry-chain form of the wide sum with fewer instructions measured slower, 66 against 51 us for ModUp's
// conversion at N = 2^16: its dependent carries lengthened the accumulation chains of a kernel bound by latency.)
template <bool Narrow>
struct RowSum;
template <>
struct RowSum<false> {
  math::WideAccumulator acc;
  template <int Sources>
  __device__ __forceinline__ void add_chunk(const u32 (&y)[Sources], const uint4 r, int c) {
    acc.add(chunk_sum(y, r, c));
  }
  __device__ __forceinline__ u64 lo() const { return acc.lo; }
  __device__ __forceinline__ u32 hi() const { return static_cast<u32>(acc.hi); }
};
template <>
struct RowSum<true> {
  u64 sum = 0;
  template <int Sources>
  __device__ __forceinline__ void add_chunk(const u32 (&y)[Sources], const uint4 r, int c) {
    sum = chunk_sum(y, r, c, sum);
  }
  __device__ __forceinline__ u64 lo() const { return sum; }
  __device__ __forceinline__ u32 hi() const { return 0; }
};

// Whether every sum for target modulus p over the part's l sources stays below 2^64: y_i < q_i and the row's
// words are below p, so sum_i (q_i - 1)(p - 1) bounds it.
__device__ __forceinline__ bool sum_fits(const ConversionSource* sources, unsigned l, u32 p) {
  math::WideAccumulator bound;
  for (unsigned i = 0; i < l; ++i) bound.add(static_cast<u64>(sources[i].modulus - 1) * (p - 1));
  return bound.hi == 0;
}

// The block's rows of [Q_i]_{p_j} for targets [first, first + count), zero-padded, into rows (count rows of
// Stride words; words from Sources on are left to the caller).
template <int Sources, int Stride>
__device__ __forceinline__ void load_rows(u32* rows, const ConversionPart& part, unsigned first, unsigned count,
                                          unsigned l) {
  for (unsigned w = threadIdx.x; w < count * Sources; w += kThreads) {
    const unsigned j = w / Sources, i = w % Sources;
    rows[j * Stride + i] = i < l ? part.q_hat_mod[(first + j) * l + i] : 0u;
  }
}

// The sum of the first 4 Chunks words of y with a row.
template <int Chunks, bool Narrow, int Words>
__device__ __forceinline__ RowSum<Narrow> row_sum(const u32 (&y)[Words], const u32* row) {
  static_assert(4 * Chunks <= Words);
  RowSum<Narrow> a;
#pragma unroll
  for (int c = 0; c < Chunks; ++c) a.add_chunk(y, reinterpret_cast<const uint4*>(row)[c], c);
  return a;
}

// The rescale's remainder of coefficient k: c_D = (x_D - T_D) P^{-1} from the D targets' sums over the l sources
// (their rows in d_rows, Sources words each, their constants in d_targets).
template <int Sources, bool Narrow, int Words>
__device__ __forceinline__ u64 rescale_remainder_at(const RescaleRemainder r, const u32* x_dropped,
                                                    const u32 (&y)[Words], const u32* d_rows,
                                                    const ConversionTarget* d_targets, unsigned l, std::size_t n,
                                                    std::size_t k) {
  u32 c[2] = {0, 0};
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    if (j >= r.dropped_count) break;
    const ConversionTarget& t = d_targets[j];
    const RowSum<Narrow> a = row_sum<Sources / 4, Narrow>(y, d_rows + j * Sources);
    const u32 correction =
        converted<ConversionEpilogue::mod_down_rescale, Narrow>(nullptr, t, a.lo(), a.hi(), l, n, k);
    const u32 d = t.modulus.value;  // ModDown's target constants hold [P^{-1}]_d
    c[j] = math::mul_shoup(math::sub_mod(x_dropped[j * n + k], correction, d), t.p_inv, t.p_inv_shoup, d);
  }
  return rescale_remainder::remainder(r, r.dropped_count == 2 ? c[1] : c[0], c[0]);
}

// mod_down_rescale's correction as three more terms of each kept target's sum. The kept word is
// T_j + [P]_{q_j} ([r]_{q_j} - f [D]_{q_j}) for the rescale's remainder r < 2^63 (f its flag, D the dropped
// primes' product), and T_j = [sum]_{q_j} - h_j; with r = r_hi 2^32 + r_lo that is [sum + r_lo [P]_{q_j} +
// r_hi [P 2^32]_{q_j} + f [-P D]_{q_j}]_{q_j} - h_j, the same residue, so the same word, at three multiply-adds
// instead of a second Barrett reduction and a Shoup product per word. The terms: y words Sources .. Sources + 3
// = (r_lo, r_hi, f, 0), their row words the constants (zero on the D targets, whose T_j are stored as they are).
constexpr int kRescaleTerms = 4;
__device__ __forceinline__ void set_rescale_terms(u32* y, u64 r) {
  y[0] = static_cast<u32>(r);
  y[1] = static_cast<u32>((r & ~rescale_remainder::kNegative) >> 32);
  y[2] = static_cast<u32>(r >> 63);
  y[3] = 0;
}
__device__ __forceinline__ uint4 rescale_row_terms(const RescaleLimbConstants& rc, uint2 p_mod_q) {
  const math::Modulus& m = rc.modulus;
  const u32 p = p_mod_q.x;  // [P]_{q_j} (ModDown's P)
  const u32 p_two32 = math::mul_mod(p, math::barrett_reduce(u64{1} << 32, m), m);
  const u32 p_d = math::mul_mod(p, rc.p_mod, m);  // rc.p_mod: the rescale's [D]_{q_j}
  return make_uint4(p, p_two32, p_d == 0 ? 0u : m.value - p_d, 0u);
}

// Whether every sum for target modulus p stays below 2^64: y_i < q_i over the l sources (and with Terms, the
// rescale terms' y below 2^32, 2^31 and 2), the row's words below p.
template <bool Terms>
__device__ __forceinline__ bool sum_fits(const ConversionSource* sources, unsigned l, u32 p) {
  math::WideAccumulator bound;
  for (unsigned i = 0; i < l; ++i) bound.add(static_cast<u64>(sources[i].modulus - 1) * (p - 1));
  if constexpr (Terms) {
    bound.add(static_cast<u64>(~0u) * (p - 1));
    bound.add(static_cast<u64>(~0u >> 1) * (p - 1));
    bound.add(p - 1);
  }
  return bound.hi == 0;
}

// Target t's word of coefficient k from its sum of `terms` products.
template <ConversionEpilogue Epilogue, bool Narrow>
__device__ __forceinline__ void store_word(const u32* in, u32* out, const ConversionTarget& t, const RowSum<Narrow>& a,
                                           unsigned terms, std::size_t n, std::size_t k) {
  out[t.out_limb * n + k] = converted<Epilogue, Narrow>(in, t, a.lo(), a.hi(), terms, n, k);
}

// Grid slice blockIdx.z converts part blockIdx.z: a polynomial of a batch, or a ModUp digit with its own tables.
template <int Sources, ConversionEpilogue Epilogue>
__global__ void __launch_bounds__(kThreads) register_conversion_kernel(RegisterConversionArgs args, ConversionParts parts) {
  static_assert(Sources % 4 == 0 && Sources <= 32);
  constexpr bool kRescale = Epilogue == ConversionEpilogue::mod_down_rescale;
  constexpr int kWords = Sources + (kRescale ? kRescaleTerms : 0);  // y words and row words per target
  __shared__ __align__(16) u32 rows[kRegisterTargets * kWords];
  __shared__ ConversionTarget targets[kRegisterTargets];
  __shared__ ConversionSource sources[Sources];
  // mod_down_rescale: every block also sums the D targets (at most 2), whose corrections give c_D.
  __shared__ __align__(16) u32 d_rows[kRescale ? 2 * Sources : 4];
  __shared__ ConversionTarget d_targets[kRescale ? 2 : 1];
  const ConversionPart& part = parts.part[blockIdx.z];
  const unsigned l = part.source_count;
  const unsigned first = blockIdx.y * kRegisterTargets;
  const unsigned remaining = first < part.target_count ? part.target_count - first : 0u;
  const unsigned count = remaining < kRegisterTargets ? remaining : kRegisterTargets;
  load_rows<Sources, kWords>(rows, part, first, count, l);
  if (threadIdx.x < count) targets[threadIdx.x] = part.targets[first + threadIdx.x];
  if (threadIdx.x < l) sources[threadIdx.x] = part.sources[threadIdx.x];
  if constexpr (kRescale) {
    const unsigned kept = args.rescale.kept, dropped = static_cast<unsigned>(args.rescale.remainder.dropped_count);
    load_rows<Sources, Sources>(d_rows, part, kept, dropped, l);
    if (threadIdx.x < dropped) d_targets[threadIdx.x] = part.targets[kept + threadIdx.x];
    if (threadIdx.x < count) {
      const unsigned j = first + threadIdx.x;
      const uint4 terms = j < kept ? rescale_row_terms(args.rescale.constants[j],
                                                       reinterpret_cast<const uint2*>(args.rescale.factors)[j])
                                   : make_uint4(0, 0, 0, 0);
      *reinterpret_cast<uint4*>(rows + threadIdx.x * kWords + Sources) = terms;
    }
  }
  __syncthreads();
  // Whether all of the block's sums (its targets', and the D targets' of mod_down_rescale) fit in 64 bits: one
  // thread per target checks its bound (from shared memory: a loop of dependent global loads cost microseconds).
  bool fits = true;
  if (threadIdx.x < count) fits = sum_fits<kRescale>(sources, l, targets[threadIdx.x].modulus.value);
  if constexpr (kRescale) {
    const unsigned d = threadIdx.x - kRegisterTargets;  // threads past the targets' check the D targets
    if (threadIdx.x >= kRegisterTargets && d < static_cast<unsigned>(args.rescale.remainder.dropped_count))
      fits = sum_fits<false>(sources, l, d_targets[d].modulus.value);
  }
  const bool narrow = __syncthreads_and(fits) != 0;
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t k0 = static_cast<std::size_t>(blockIdx.x) * (kCoefficientsPerThread * kThreads) + threadIdx.x;
  const std::size_t k1 = k0 + kThreads;
  if (k0 >= n) return;
  const bool second = k1 < n;
  const u32* in = part.in;
  const u32* copy_in = part.copy_in;
  u32* out = part.out;
  const bool copy = args.copy_sources && blockIdx.y == 0;
  // The sources' words, all loads first. A copy's store between them would order every later load after it (as
  // far as the compiler knows, out may alias in), one DRAM round trip per source: that was most of this kernel's
  // time (ncu: stalls on long scoreboard). out never overlaps in: blocks of other targets read in while these
  // copies are written.
  u32 y0[kWords], y1[kWords];
#pragma unroll
  for (int i = 0; i < kWords; ++i) {
    y0[i] = 0;
    y1[i] = 0;
    if (i < static_cast<int>(l)) {  // only the padding sources fail it
      const u32* limb = in + sources[i].in_limb * n;
      y0[i] = limb[k0];
      if (second) y1[i] = limb[k1];
    }
  }
  if (copy) {  // four sources at a time: their loads (copy_in), then their stores
#pragma unroll
    for (int i0 = 0; i0 < Sources; i0 += 4) {
      u32 c0[4], c1[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int i = i0 + u;
        c0[u] = y0[i];
        c1[u] = y1[i];
        if (copy_in != nullptr && i < static_cast<int>(l)) {
          const u32* from = copy_in + sources[i].in_limb * n;
          c0[u] = from[k0];
          if (second) c1[u] = from[k1];
        }
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int i = i0 + u;
        if (i >= static_cast<int>(l) || sources[i].copy_to == ~0u) continue;
        u32* to = out + sources[i].copy_to * n;
        to[k0] = c0[u];
        if (second) to[k1] = c1[u];
      }
    }
  }
#pragma unroll
  for (int i = 0; i < Sources; ++i) {
    if (i < static_cast<int>(l)) {
      const ConversionSource& s = sources[i];
      u32 x0 = y0[i], x1 = y1[i];
      if constexpr (Epilogue != ConversionEpilogue::store) {
        x0 = math::add_mod(x0, s.shift, s.modulus);
        x1 = math::add_mod(x1, s.shift, s.modulus);
      }
      y0[i] = math::mul_shoup(x0, s.q_hat_inv, s.q_hat_inv_shoup, s.modulus);
      y1[i] = math::mul_shoup(x1, s.q_hat_inv, s.q_hat_inv_shoup, s.modulus);
    }
  }
  // Products per kept sum (the l sources and the rescale's terms): the reduction's shortcut for a single chunk
  // must see them all.
  const unsigned terms = l + (kRescale ? kRescaleTerms : 0);
  // The sums and stores, with 64-bit sums where they fit (block-uniform, so no divergence).
  const auto convert = [&](auto narrow_sums) {
    constexpr bool Narrow = decltype(narrow_sums)::value;
    if constexpr (kRescale) {  // the rescale's remainders of both coefficients, as the kept sums' last terms
      const RescaleRemainder& rr = args.rescale.remainder;
      set_rescale_terms(y0 + Sources, rescale_remainder_at<Sources, Narrow>(rr, part.x_dropped, y0, d_rows, d_targets, l, n, k0));
      if (second)
        set_rescale_terms(y1 + Sources,
                          rescale_remainder_at<Sources, Narrow>(rr, part.x_dropped, y1, d_rows, d_targets, l, n, k1));
    }
    unsigned j = 0;
    for (; j + 1 < count; j += 2) {
      const uint4* row0 = reinterpret_cast<const uint4*>(rows + j * kWords);
      const uint4* row1 = row0 + kWords / 4;
      RowSum<Narrow> a00, a01, a10, a11;  // a<target><coefficient>
#pragma unroll
      for (int c = 0; c < kWords / 4; ++c) {
        const uint4 r0 = row0[c], r1 = row1[c];
        a00.add_chunk(y0, r0, c);
        a01.add_chunk(y1, r0, c);
        a10.add_chunk(y0, r1, c);
        a11.add_chunk(y1, r1, c);
      }
      store_word<Epilogue>(in, out, targets[j], a00, terms, n, k0);
      store_word<Epilogue>(in, out, targets[j + 1], a10, terms, n, k0);
      if (second) {
        store_word<Epilogue>(in, out, targets[j], a01, terms, n, k1);
        store_word<Epilogue>(in, out, targets[j + 1], a11, terms, n, k1);
      }
    }
    if (j < count) {
      const RowSum<Narrow> a0 = row_sum<kWords / 4, Narrow>(y0, rows + j * kWords);
      store_word<Epilogue>(in, out, targets[j], a0, terms, n, k0);
      if (second) store_word<Epilogue>(in, out, targets[j], row_sum<kWords / 4, Narrow>(y1, rows + j * kWords), terms, n, k1);
    }
  };
  if (narrow) {
    convert(std::true_type{});
  } else {
    convert(std::false_type{});
  }
}

template <int Sources, ConversionEpilogue Epilogue>
void launch_registers(const ConversionLaunch& args, const ConversionParts& parts) {
  const std::size_t n = std::size_t{1} << args.log_degree;
  std::size_t targets = 0;
  for (std::size_t p = 0; p < parts.count; ++p) targets = targets > parts.part[p].target_count ? targets : parts.part[p].target_count;
  const std::size_t target_blocks = targets == 0 ? 1 : (targets + kRegisterTargets - 1) / kRegisterTargets;
  constexpr std::size_t per_block = kCoefficientsPerThread * kThreads;
  const dim3 grid(static_cast<unsigned>((n + per_block - 1) / per_block), static_cast<unsigned>(target_blocks),
                  static_cast<unsigned>(parts.count));
  const RegisterConversionArgs kernel_args{
      .log_degree = args.log_degree, .copy_sources = args.copy_sources, .rescale = args.rescale};
  register_conversion_kernel<Sources, Epilogue>
      <<<grid, kThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(kernel_args, parts);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

template <ConversionEpilogue Epilogue, int... Quads>
bool launch_quads(std::size_t quads, const ConversionLaunch& args, const ConversionParts& parts,
                  std::integer_sequence<int, Quads...>) {
  return ((quads == Quads + 1 ? (launch_registers<4 * (Quads + 1), Epilogue>(args, parts), true) : false) || ...);
}

// The source count rounded up to a multiple of 4: at most 3 padded products per target. (Exact even counts, with
// a last chunk of 2, measured slower together with the carry-chain sums; not measured on their own.)
template <ConversionEpilogue Epilogue>
bool launch_parts_in_registers(const ConversionLaunch& args, const ConversionParts& parts) {
  std::size_t sources = 0;
  for (std::size_t p = 0; p < parts.count; ++p) sources = sources > parts.part[p].source_count ? sources : parts.part[p].source_count;
  if (sources == 0 || sources > conversion_parts_max_sources) return false;
  return launch_quads<Epilogue>((sources + 3) / 4, args, parts,
                                std::make_integer_sequence<int, conversion_parts_max_sources / 4>{});
}

// A batch sharing one set of tables as parts, conversion_max_parts per launch.
template <ConversionEpilogue Epilogue>
bool launch_in_registers(const ConversionLaunch& args) {
  if (args.source_count > conversion_parts_max_sources) return false;
  for (std::size_t first = 0; first < args.batch; first += conversion_max_parts) {
    ConversionParts parts;
    parts.count = args.batch - first < conversion_max_parts ? args.batch - first : conversion_max_parts;
    for (std::size_t p = 0; p < parts.count; ++p) {
      const std::size_t b = first + p;
      parts.part[p] = ConversionPart{.in = args.in + b * args.in_stride,
                                     .copy_in = args.copy_in ? args.copy_in + b * args.in_stride : nullptr,
                                     .out = args.out + b * args.out_stride,
                                     .sources = args.sources,
                                     .targets = args.targets,
                                     .q_hat_mod = args.q_hat_mod,
                                     .source_count = static_cast<u32>(args.source_count),
                                     .target_count = static_cast<u32>(args.target_count),
                                     .x_dropped =
                                         args.x_dropped ? args.x_dropped + b * args.x_dropped_stride : nullptr};
    }
    launch_parts_in_registers<Epilogue>(args, parts);
  }
  return true;
}

template <ConversionEpilogue Epilogue>
void launch(const ConversionLaunch& args) {
  if (launch_in_registers<Epilogue>(args)) return;
  const std::size_t n = std::size_t{1} << args.log_degree;
  const std::size_t target_blocks = args.target_count == 0 ? 1 : (args.target_count + kTargetsPerBlock - 1) / kTargetsPerBlock;
  const dim3 grid(static_cast<unsigned>((n + kThreads - 1) / kThreads), static_cast<unsigned>(target_blocks));
  const std::size_t shared = args.source_count * (kThreads + kTargetsPerBlock) * sizeof(u32);
  // Above 48 KiB of shared memory a kernel must opt in (96 sources need 51 KiB).
  static const bool opted_in = [] {
    CERIUM_CUDA_CHECK(cudaFuncSetAttribute(conversion_kernel<Epilogue>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(conversion_max_sources * (kThreads + kTargetsPerBlock) *
                                                            sizeof(u32))));
    return true;
  }();
  (void)opted_in;
  // The staged form takes one polynomial per launch.
  for (std::size_t b = 0; b < args.batch; ++b) {
    ConversionLaunch one = args;
    one.in = args.in + b * args.in_stride;
    one.copy_in = args.copy_in ? args.copy_in + b * args.in_stride : nullptr;
    one.out = args.out + b * args.out_stride;
    conversion_kernel<Epilogue><<<grid, kThreads, shared, static_cast<cudaStream_t>(args.stream)>>>(one);
    CERIUM_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace conversion_kernels

void launch_conversion_parts(const ConversionLaunch& args, const ConversionParts& parts) {
  using namespace conversion_kernels;
  if (parts.count == 0) return;
  if (parts.count > conversion_max_parts) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // callers chunk first
  bool done = false;
  switch (args.epilogue) {
    case ConversionEpilogue::store: done = launch_parts_in_registers<ConversionEpilogue::store>(args, parts); break;
    case ConversionEpilogue::mod_down: done = launch_parts_in_registers<ConversionEpilogue::mod_down>(args, parts); break;
    case ConversionEpilogue::mod_down_shift:
      done = launch_parts_in_registers<ConversionEpilogue::mod_down_shift>(args, parts);
      break;
    case ConversionEpilogue::mod_down_rescale:
      done = launch_parts_in_registers<ConversionEpilogue::mod_down_rescale>(args, parts);
      break;
    default: break;
  }
  if (!done) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // more sources than the register form holds: plans check
}

void launch_conversion(const ConversionLaunch& args) {
  using namespace conversion_kernels;
  if (args.source_count == 0 || args.batch == 0 || (args.target_count == 0 && !args.copy_sources)) return;
  if (args.batch > 65535) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // the grid's z limit
  if (args.source_count > conversion_max_sources) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // plans check first
  switch (args.epilogue) {
    case ConversionEpilogue::store: launch<ConversionEpilogue::store>(args); break;
    case ConversionEpilogue::mod_down: launch<ConversionEpilogue::mod_down>(args); break;
    case ConversionEpilogue::mod_down_shift: launch<ConversionEpilogue::mod_down_shift>(args); break;
    case ConversionEpilogue::mod_down_rescale:  // the register form only (its plan checks the source count)
      if (!launch_in_registers<ConversionEpilogue::mod_down_rescale>(args)) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);
      break;
    default: CERIUM_CUDA_CHECK(cudaErrorInvalidValue);
  }
}

}  // namespace cerium::cuda::detail
