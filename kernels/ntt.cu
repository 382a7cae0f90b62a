// Batched negacyclic NTT kernels: every limb of an RNS polynomial in one launch per pass.
//
// Why the GPU needs its own loops: the CPU runs the stages one after another over the whole limb, which on a GPU
// would be log2(N) passes over global memory. Here a block loads a tile of 2^LT words, runs as many stages as
// the tile closes over, and writes it back once:
//  - N <= 2^13: the whole limb is one tile, one pass;
//  - N >= 2^14: pass "columns" runs the first log2(N) - 11 stages, whose butterflies pair words 2^11 or more
//    apart, on tiles of 2^11 / 2^(log2(N)-11) adjacent columns (words k 2^11 + c); pass "rows" runs the last
//    11 stages on contiguous 2^11-word rows. The inverse runs the same passes in the opposite order.
// Inside a tile each thread holds 8 words in registers and runs up to 3 stages on them (a radix-8 step), so a
// tile of 11 stages exchanges words through shared memory only 3 times. The first group of stages reads its
// words straight from global memory and the last one writes straight back.
//
// The butterflies are math::ct_butterfly / math::gs_butterfly, the CPU's own, with its twiddle tables; values
// stay in [0, 2q) between stages and passes and are reduced fully at the end, so the output words equal the
// CPU's. The inverse's last stage also multiplies by N^{-1} (folded into its twiddle), saving a pass.
//
// The rows' twiddles: each row would need its own 2^11 - 1 (8-byte pairs), one per word, read from DRAM. They
// factor into row 0's twiddles times a power of a per-row constant (math/ntt_row_twist.hpp), so a row runs its
// first group with its own twiddles, multiplies each word by a twist factor (8 bytes per thread, shared by its 8
// words), and runs the other groups with row 0's twiddles, which stay in cache for all rows of the limb.
//
// Where it stands (H200, N = 2^16, 64 limbs, bench/RESULTS.md): forward 26.3 us and inverse 24.7 us, 3.3x and
// 3.1x the time of copying the polynomial once (28.5 and 33.2 us before the twist, 28.5 and 26.5 before the padded
// tiles). The row passes run at 22-30% of DRAM peak and 58-64% SM throughput: bound by instruction issue and
// latency. A forward row-pass thread runs 616 instructions, 308 of them its 44 butterflies; the next levers are
// the rest (addresses, twiddle loads) and one pass at 2^16 (thread-block clusters sharing the limb).
//
// ModUp's forward transform can end in the key-switch inner product instead of a store (NttLaunch::inner_product,
// ntt_inner_product_kernel): 54.5 us for 3 digits of 54 limbs, against 29.3 us for the row pass plus 37.2 us for
// the separate inner product (N = 2^16, 40 limbs, dnum 3).
//
// Tile-local stage s (0-based) pairs tile positions p and p + 2^(LT-1-s), with twiddle index
// (root << s) + (p >> (LT - s)): root is 1 for a column tile and for a whole-limb tile, and
// 2^(log2(N) - 11) + row for row `row` (that is m + i of the CPU loop, m = 2^(global stage), i = j / 2t).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/ntt_launch.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/math/ntt_butterfly.hpp"

namespace cerium::cuda::detail {
// A named namespace rather than an anonymous one: nvcc warns (#177) about every unused static member of a
// class template with internal linkage.
namespace ntt_kernels {

using math::u32;

constexpr int kLogValues = 3;  // words per thread: 8
constexpr int kValues = 1 << kLogValues;
constexpr int kMaxSingleLog = ntt_max_single_log_degree;  // 2^13 words (32 KiB) in one block of 1024 threads
constexpr int kRowLog = ntt_row_log;  // tiles of the two-pass transform: 2^11 words, 256 threads
static_assert(ntt_row_direct_stages == kLogValues, "the row twist comes between the rows' first and second groups");

struct KernelArgs {
  u32* data;
  const u32* source;          // the first pass reads here instead of data when not null
  std::size_t poly_stride;    // words from polynomial b of the batch to b + 1
  std::size_t source_stride;  // the same in source
  const uint2* twiddles;  // (w, w_shoup)
  const uint2* twists;    // rows of two-pass transforms: ntt_twists_per_limb pairs per table
  const NttLimbConstants* constants;
  std::size_t first_limb;  // of this launch within the batch (launches are chunked by the grid's y limit)
  std::size_t period;      // limbs per polynomial of the batch
  std::size_t split;       // local limbs below split use table local, the others table local + shift
  std::size_t shift;
  std::size_t skip_stride, skip_width, skip_limit;  // see NttLaunch
  NttFinish finish;  // used by the kernels instantiated with Finish
};

// Where a block's limb sits in the batch: polynomial b, local limb l. 32-bit arithmetic: a 64-bit division is a
// long subroutine on the GPU, and every thread of the block runs it (the launcher checks the range).
struct LimbPosition {
  u32 b, l;
  __device__ explicit LimbPosition(const KernelArgs& args) {
    const u32 global = static_cast<u32>(args.first_limb) + blockIdx.y;
    const u32 period = static_cast<u32>(args.period);
    b = global / period;
    l = global - b * period;
  }
};

// Whether the block's limb is one the launch leaves alone (NttLaunch's skip range of its polynomial).
__device__ __forceinline__ bool skipped(const KernelArgs& args, const LimbPosition& at) {
  if (args.skip_width == 0) return false;
  const std::size_t begin = at.b * args.skip_stride;
  const std::size_t end = begin + args.skip_width < args.skip_limit ? begin + args.skip_width : args.skip_limit;
  return at.l >= begin && at.l < end;
}

// The table of a limb of the batch (see NttLaunch).
__device__ __forceinline__ std::size_t table_of(const KernelArgs& args, const LimbPosition& at) {
  return at.l < args.split ? at.l : at.l + args.shift;
}

// Shared-memory layout: 4 padding words after every 32, which spreads the strided accesses of the middle stages
// over the banks and keeps every aligned run of 4 words contiguous (the 16-byte accesses of the last stages).
// Unlike an XOR swizzle it is additive on the positions a thread touches (a run's base has zeros where u << L
// has ones), padded(base + (u << L)) = padded(base) + padded(u << L), so every access but a run's first is an
// immediate offset: the XOR form cost four integer instructions per access, in an issue-bound kernel.
__host__ __device__ constexpr int padded(int p) { return p + ((p >> 5) << 2); }
template <int LT>
inline constexpr int kPaddedTileWords = padded(1 << LT);

// A block's tile: 2^LT words of a limb of 2^LogN words on which it runs B stages. Columns: 2^(LT-B) adjacent
// columns of the first pass (row k of the tile is words k 2^(LogN-B) + column); rows: 2^LT contiguous words.
// Everything but the block's position is known at compile time, so per-word offsets are immediates.
template <int LogN, int LT, int B, bool Columns>
struct Tile {
  static constexpr int kLogN = LogN;
  static constexpr int kLog = LT;
  static constexpr int kStages = B;
  static constexpr bool kColumns = Columns;
  static constexpr int kLogCols = LT - B;
  static_assert(!Columns || kLogCols >= 5, "column tiles need at least 32 adjacent columns to coalesce");

  // Offset in the limb of tile position p.
  __device__ static u32 offset(int p) {
    if constexpr (Columns) {
      return (static_cast<u32>(p >> kLogCols) << (LogN - B)) + (blockIdx.x << kLogCols) +
             static_cast<u32>(p & ((1 << kLogCols) - 1));
    } else {
      return (blockIdx.x << LT) + static_cast<u32>(p);
    }
  }
  // offset(base + (u << L)) == offset(base) + (u << shift<L>()) for the runs of a group with that L (for column
  // tiles L >= kLogCols always, so u moves whole rows).
  template <int L>
  static constexpr int shift() {
    return Columns ? L - kLogCols + (LogN - B) : L;
  }
  // Rows of a two-pass transform: group 0 uses the row's own twiddles, the later groups row 0's after the twist.
  static constexpr bool kTwisted = !Columns && LogN > LT;
  // The twiddle root of group I: 1 for columns and whole limbs, 2^(LogN - LT) + row for rows, whose groups after
  // the first use row 0's (2^(LogN - LT)) once twisted.
  template <int I>
  __device__ static u32 root() {
    if constexpr (Columns) return 1u;
    else if constexpr (kTwisted && I > 0) return 1u << (LogN - LT);
    else return (1u << (LogN - LT)) + blockIdx.x;
  }
};

// A group of K (1..3) consecutive tile stages [S, S + K). The positions it touches split into runs
// {base + (u << L) : u < 2^K}, L = LT - S - K; each thread takes 2^(3-K) runs, word u of run r in x[r 2^K + u].
template <int LT, int S_, int K_>
struct Group {
  static constexpr int kThreads = 1 << (LT - kLogValues);
  static constexpr int S = S_;
  static constexpr int K = K_;
  static constexpr int L = LT - S - K;
  static constexpr int kRuns = 1 << (kLogValues - K);
  static constexpr int kRunLength = 1 << K;
  static constexpr int kVector = kRunLength < 4 ? kRunLength : 4;  // words per vector access of a run

  __device__ static int run(int r) { return static_cast<int>(threadIdx.x) + r * kThreads; }
  __device__ static int base(int r) {
    const int g = run(r);
    return (g & ((1 << L) - 1)) | ((g >> L) << (L + K));
  }
  // Twiddle index of the run's first stage: (root << S) + (p >> (LT - S)) for any p of the run.
  __device__ static u32 twiddle_base(int r, u32 root) { return (root << S) + static_cast<u32>(run(r) >> L); }
};

// Runs are contiguous when L == 0: then they move as 8- or 16-byte vectors (Words = 2 or 4). Global memory
// goes through PTX vector instructions: a plain uint4 assignment was split into 4-byte stores, and the cache
// intrinsics (__ldcg, __stwb) come out as "strong" accesses. The loads may stay unordered (no "memory"
// clobber): a thread reads its words before it writes them, and no other thread touches them in this pass.
template <int Words>
__device__ __forceinline__ void load_shared_vector(u32* x, const u32* src) {
  if constexpr (Words == 2) {
    const uint2 v = *reinterpret_cast<const uint2*>(src);
    x[0] = v.x, x[1] = v.y;
  } else {
    const uint4 v = *reinterpret_cast<const uint4*>(src);
    x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
  }
}
template <int Words>
__device__ __forceinline__ void store_shared_vector(u32* dst, const u32* x) {
  if constexpr (Words == 2) {
    *reinterpret_cast<uint2*>(dst) = make_uint2(x[0], x[1]);
  } else {
    *reinterpret_cast<uint4*>(dst) = make_uint4(x[0], x[1], x[2], x[3]);
  }
}
template <int Words>
__device__ __forceinline__ void load_global_vector(u32* x, const u32* src) {
  if constexpr (Words == 2) {
    asm("ld.global.v2.u32 {%0, %1}, [%2];" : "=r"(x[0]), "=r"(x[1]) : "l"(src));
  } else {
    asm("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3]) : "l"(src));
  }
}
template <int Words>
__device__ __forceinline__ void store_global_vector(u32* dst, const u32* x) {
  if constexpr (Words == 2) {
    asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(dst), "r"(x[0]), "r"(x[1]) : "memory");
  } else {
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3])
                 : "memory");
  }
}

template <class G>
__device__ __forceinline__ void load_shared(u32 (&x)[kValues], const u32* tile) {
#pragma unroll
  for (int r = 0; r < G::kRuns; ++r) {
    const u32* run = tile + padded(G::base(r));
    if constexpr (G::L == 0) {
#pragma unroll
      for (int c = 0; c < G::kRunLength; c += G::kVector)
        load_shared_vector<G::kVector>(&x[r * G::kRunLength + c], run + padded(c));
    } else {
#pragma unroll
      for (int u = 0; u < G::kRunLength; ++u) x[r * G::kRunLength + u] = run[padded(u << G::L)];
    }
  }
}

template <class G>
__device__ __forceinline__ void store_shared(const u32 (&x)[kValues], u32* tile) {
#pragma unroll
  for (int r = 0; r < G::kRuns; ++r) {
    u32* run = tile + padded(G::base(r));
    if constexpr (G::L == 0) {
#pragma unroll
      for (int c = 0; c < G::kRunLength; c += G::kVector)
        store_shared_vector<G::kVector>(run + padded(c), &x[r * G::kRunLength + c]);
    } else {
#pragma unroll
      for (int u = 0; u < G::kRunLength; ++u) run[padded(u << G::L)] = x[r * G::kRunLength + u];
    }
  }
}

// Global memory: runs with L >= 5 give each warp 32 consecutive words per access (coalesced); runs with
// L == 0 (the row pass's last stages) are contiguous and move as vectors.
template <class G, class T>
__device__ __forceinline__ void load_global(u32 (&x)[kValues], const u32* limb) {
  static_assert(G::L == 0 || G::L >= 5, "global accesses must be contiguous or coalesced");
  constexpr int shift = T::template shift<G::L>();
#pragma unroll
  for (int r = 0; r < G::kRuns; ++r) {
    const u32* run = limb + T::offset(G::base(r));
    if constexpr (G::L == 0 && !T::kColumns) {
#pragma unroll
      for (int c = 0; c < G::kRunLength; c += G::kVector)
        load_global_vector<G::kVector>(&x[r * G::kRunLength + c], run + c);
    } else {
#pragma unroll
      for (int u = 0; u < G::kRunLength; ++u) x[r * G::kRunLength + u] = run[u << shift];
    }
  }
}

template <class G, class T>
__device__ __forceinline__ void store_global(const u32 (&x)[kValues], u32* limb) {
  static_assert(G::L == 0 || G::L >= 5, "global accesses must be contiguous or coalesced");
  constexpr int shift = T::template shift<G::L>();
#pragma unroll
  for (int r = 0; r < G::kRuns; ++r) {
    u32* run = limb + T::offset(G::base(r));
    if constexpr (G::L == 0 && !T::kColumns) {
#pragma unroll
      for (int c = 0; c < G::kRunLength; c += G::kVector)
        store_global_vector<G::kVector>(run + c, &x[r * G::kRunLength + c]);
    } else {
#pragma unroll
      for (int u = 0; u < G::kRunLength; ++u) run[u << shift] = x[r * G::kRunLength + u];
    }
  }
}

// base + index in one wide multiply-add: left to itself the compiler re-associates (table N + index) into 64-bit
// arithmetic at every twiddle load, four instructions instead of one.
__device__ __forceinline__ const uint2* at_index(const uint2* base, u32 index) {
  const uint2* out;
  asm("mad.wide.u32 %0, %1, 8, %2;" : "=l"(out) : "r"(index), "l"(base));
  return out;
}

// The inverse's very last butterfly with N^{-1} folded in; outputs fully reduced.
__device__ __forceinline__ void gs_butterfly_scaled(u32& x, u32& y, const NttLimbConstants& c) {
  const u32 q = c.modulus;
  const u32 u = math::csub(x, q);
  const u32 v = math::csub(y, q);
  x = math::mul_shoup(u + v, c.n_inv, c.n_inv_shoup, q);
  y = math::mul_shoup(u - v + q, c.last_twiddle, c.last_twiddle_shoup, q);
}

// The group's K stages on registers: forward in order, inverse in reverse. Stage j of the group pairs words
// u and u + 2^(K-1-j) of a run; the pair's twiddle is (twiddle_base << j) + (u >> (K - j)).
template <class G, bool Forward, bool Fold>
__device__ __forceinline__ void butterflies(u32 (&x)[kValues], const uint2* twiddles, u32 root,
                                            const NttLimbConstants& c) {
  const u32 q = c.modulus;
#pragma unroll
  for (int r = 0; r < G::kRuns; ++r) {
    u32* v = &x[r * G::kRunLength];
    const u32 tw0 = G::twiddle_base(r, root);
#pragma unroll
    for (int step = 0; step < G::K; ++step) {
      const int j = Forward ? step : G::K - 1 - step;
      const int half = 1 << (G::K - 1 - j);
      uint2 w[1 << (G::K - 1)];
      const uint2* stage_twiddles = at_index(twiddles, tw0 << j);
#pragma unroll
      for (int t = 0; t < (1 << j); ++t) w[t] = __ldg(stage_twiddles + t);
#pragma unroll
      for (int u = 0; u < G::kRunLength; ++u) {
        if (u & half) continue;
        const uint2 wt = w[u >> (G::K - j)];
        if constexpr (Forward) {
          math::ct_butterfly(v[u], v[u + half], wt.x, wt.y, q);
        } else if (Fold && G::S + j == 0) {
          gs_butterfly_scaled(v[u], v[u + half], c);
        } else {
          math::gs_butterfly(v[u], v[u + half], wt.x, wt.y, q);
        }
      }
    }
  }
}

// Group I of a tile of B stages: stages [3I, min(3I + 3, B)).
template <class T, int I>
using GroupAt = Group<T::kLog, 3 * I, (T::kStages - 3 * I < 3 ? T::kStages - 3 * I : 3)>;

// Where the last pass of a finishing forward transform reads and writes (NttFinish) for one limb.
struct FinishLimb {
  const u32* minuend;
  const u32* addend;  // null: none
  u32* out;
  uint2 scale;
  uint2 addend_scale;  // (1, 0) when unscaled: the value 1 is then skipped
  bool scaled_addend;
};

// Multiplies the row's words by its twist, between group 0 and group 1: group 0's thread holds words
// threadIdx.x + 2^8 u, all with k mod 2^8 = threadIdx.x, so one factor serves its 8 words.
template <class T>
__device__ __forceinline__ void twist(u32 (&x)[kValues], uint2 factor, u32 q) {
  using G = GroupAt<T, 0>;
  static_assert(G::kRuns == 1 && G::L == T::kLog - kLogValues, "one run per thread, at stride 2^(LT - 3)");
#pragma unroll
  for (int i = 0; i < kValues; ++i) x[i] = math::mul_shoup_lazy(x[i], factor.x, factor.y, q);
}

// One group's turn: words come from global memory (first group) or shared memory, leave to shared memory or
// global memory (last group), the forward's last pass reducing them fully first (and finishing, with Finish; with
// Keep the last group's words stay in x).
// Twisted rows multiply by the twist after group 0 (forward) or before it (inverse).
template <class T, bool Forward, bool Final, bool Finish, int I, bool First, bool Last, bool Keep = false>
__device__ __forceinline__ void run_group(u32 (&x)[kValues], u32* tile, const u32* source, u32* limb,
                                          const uint2* twiddles, uint2 twist_factor, const NttLimbConstants& c,
                                          const FinishLimb& f) {
  using G = GroupAt<T, I>;
  if constexpr (First) {
    load_global<G, T>(x, source);
  } else {
    __syncthreads();
    load_shared<G>(x, tile);
  }
  if constexpr (T::kTwisted && !Forward && I == 0) twist<T>(x, twist_factor, c.modulus);
  butterflies<G, Forward, !Forward && Final>(x, twiddles, T::template root<I>(), c);
  if constexpr (T::kTwisted && Forward && I == 0) twist<T>(x, twist_factor, c.modulus);
  if constexpr (Last) {
    if constexpr (Forward && Final) {
#pragma unroll
      for (int i = 0; i < kValues; ++i) x[i] = math::csub(x[i], c.modulus);
    }
    if constexpr (Keep) {
      // the caller takes the words from x
    } else if constexpr (Forward && Final && Finish) {
      const u32 q = c.modulus;
      u32 m[kValues];
      load_global<G, T>(m, f.minuend);
#pragma unroll
      for (int i = 0; i < kValues; ++i) x[i] = math::mul_shoup(math::sub_mod(m[i], x[i], q), f.scale.x, f.scale.y, q);
      if (f.addend != nullptr) {
        load_global<G, T>(m, f.addend);
        if (f.scaled_addend) {
#pragma unroll
          for (int i = 0; i < kValues; ++i) m[i] = math::mul_shoup(m[i], f.addend_scale.x, f.addend_scale.y, q);
        }
#pragma unroll
        for (int i = 0; i < kValues; ++i) x[i] = math::add_mod(x[i], m[i], q);
      }
      store_global<G, T>(x, f.out);
    } else {
      store_global<G, T>(x, limb);
    }
  } else {
    store_shared<G>(x, tile);
  }
}

template <class T, bool Forward, bool Final, bool Finish, int... Is>
__device__ __forceinline__ void run_tile(u32* tile, const KernelArgs& args, std::integer_sequence<int, Is...>) {
  constexpr int count = sizeof...(Is);
  const LimbPosition at(args);
  if (skipped(args, at)) return;  // the whole block: before any barrier
  constexpr std::size_t n = std::size_t{1} << T::kLogN;
  const std::size_t table = table_of(args, at);
  const std::size_t limb_offset = static_cast<std::size_t>(at.l) * n;
  u32* limb = args.data + at.b * args.poly_stride + limb_offset;
  const u32* source = args.source != nullptr ? args.source + at.b * args.source_stride + limb_offset : limb;
  const uint2* twiddles = args.twiddles + table * n;
  const NttLimbConstants c = args.constants[table];
  uint2 twist_factor{};  // loaded first, used after (forward) or before (inverse) a whole group
  if constexpr (T::kTwisted)
    twist_factor = __ldg(args.twists + table * ntt_twists_per_limb(n) + (blockIdx.x << (T::kLog - kLogValues)) +
                         threadIdx.x);
  FinishLimb f{};
  if constexpr (Finish) {
    const std::size_t b = at.b, l = at.l;
    f.minuend = args.finish.minuend + b * args.finish.minuend_stride + l * n;
    f.addend = b < 2 && args.finish.addend[b] != nullptr ? args.finish.addend[b] + l * n : nullptr;
    f.out = args.finish.out + b * args.finish.out_stride + l * n;
    f.scale = reinterpret_cast<const uint2*>(args.finish.scale)[l];
    f.scaled_addend = args.finish.addend_scale != nullptr;
    if (f.scaled_addend) f.addend_scale = reinterpret_cast<const uint2*>(args.finish.addend_scale)[l];
  }
  u32 x[kValues];
  // Forward: groups 0, 1, ...; inverse: the same groups from the last one down.
  (run_group<T, Forward, Final, Finish, (Forward ? Is : count - 1 - Is), Is == 0, Is == count - 1>(
       x, tile, source, limb, twiddles, twist_factor, c, f),
   ...);
}

// One pass of the transform over a tile T; Final: the transform's last pass (the forward reduces fully, the
// inverse folds N^{-1}); Finish: the forward's last pass applies KernelArgs::finish instead of storing.
template <class T, bool Forward, bool Final, bool Finish>
__global__ void __launch_bounds__(1 << (T::kLog - kLogValues)) ntt_tile_kernel(KernelArgs args) {
  __shared__ __align__(16) u32 tile[kPaddedTileWords<T::kLog>];
  run_tile<T, Forward, Final, Finish>(tile, args, std::make_integer_sequence<int, (T::kStages + 2) / 3>{});
}

// The forward's last pass fused with the key-switch inner product (NttLaunch::inner_product): block (tile, l)
// transforms limb l of every digit of the batch in turn (a digit's own limbs, which the launch skips, are read as
// they are), multiplies each by its key digits' words and sums the products in 64 bits (up to 4 digits of
// products below 2^62), then reduces once: exactly key_switch_kernels' sums, so the same words, without the
// extended digits' trip to global memory and back.
template <class T, int Digits, int... Is>
__device__ __forceinline__ void run_inner_product(u32* tile, const KernelArgs& args, const InnerProductLaunch& ip,
                                                  std::integer_sequence<int, Is...>) {
  constexpr int count = sizeof...(Is);
  using Last = GroupAt<T, count - 1>;
  constexpr std::size_t n = std::size_t{1} << T::kLogN;
  const u32 l = blockIdx.y;
  const std::size_t table = l < args.split ? l : l + args.shift;
  const uint2* twiddles = args.twiddles + table * n;
  const NttLimbConstants c = args.constants[table];
  uint2 twist_factor{};
  if constexpr (T::kTwisted)
    twist_factor = __ldg(args.twists + table * ntt_twists_per_limb(n) + (blockIdx.x << (T::kLog - kLogValues)) +
                         threadIdx.x);
  const std::size_t limb_offset = static_cast<std::size_t>(l) * n;
  const std::size_t key_offset = (l < ip.q_limbs ? l : l + ip.key_p_shift) * n;
  math::u64 s0[kValues] = {}, s1[kValues] = {};
#pragma unroll
  for (int d = 0; d < Digits; ++d) {
    u32* limb = args.data + d * args.poly_stride + limb_offset;
    u32 x[kValues];
    LimbPosition at(args);
    at.b = static_cast<u32>(d);
    at.l = l;
    if (skipped(args, at)) {  // block-uniform
      load_global<Last, T>(x, limb);
    } else {
      if (d > 0) __syncthreads();  // the previous digit's last reads of the tile are done
      (run_group<T, true, true, false, Is, Is == 0, Is == count - 1, true>(x, tile, limb, limb, twiddles,
                                                                           twist_factor, c, FinishLimb{}),
       ...);
    }
    u32 b[kValues], a[kValues];
    load_global<Last, T>(b, ip.key_b[d] + key_offset);
    load_global<Last, T>(a, ip.key_a[d] + key_offset);
#pragma unroll
    for (int i = 0; i < kValues; ++i) {
      s0[i] += static_cast<math::u64>(x[i]) * b[i];
      s1[i] += static_cast<math::u64>(x[i]) * a[i];
    }
  }
  const math::Modulus m = ip.moduli[l];
  u32 out[kValues];
#pragma unroll
  for (int i = 0; i < kValues; ++i) out[i] = math::barrett_reduce(s0[i], m);
  store_global<Last, T>(out, ip.out0 + limb_offset);
#pragma unroll
  for (int i = 0; i < kValues; ++i) out[i] = math::barrett_reduce(s1[i], m);
  store_global<Last, T>(out, ip.out1 + limb_offset);
}

// 1024 threads per SM at least, so at most 64 registers (instead of 74-80; a 16-byte spill at 3 digits): the kernel
// waits on its key loads, and more warps in flight beat the spill (multiply_rescale 250.8 -> 247.9 us, relinearize
// 229.0 -> 224.8 us at N = 2^16, 40 limbs, dnum 3, H200).
template <class T>
inline constexpr int kTileThreads = 1 << (T::kLog - kLogValues);
template <class T>
inline constexpr int kInnerProductMinBlocks = kTileThreads<T> >= 1024 ? 1 : 1024 / kTileThreads<T>;

template <class T, int Digits>
__global__ void __launch_bounds__(kTileThreads<T>, kInnerProductMinBlocks<T>)
    ntt_inner_product_kernel(KernelArgs args, InnerProductLaunch ip) {
  static_assert(Digits >= 1 && Digits <= 4, "four products below 2^62 each fit 64 bits");
  __shared__ __align__(16) u32 tile[kPaddedTileWords<T::kLog>];
  run_inner_product<T, Digits>(tile, args, ip, std::make_integer_sequence<int, (T::kStages + 2) / 3>{});
}

template <class T>
void launch_inner_product_tile(const KernelArgs& args, const InnerProductLaunch& ip, cudaStream_t stream) {
  const dim3 grid(1u << (T::kLogN - T::kLog), static_cast<unsigned>(args.period));
  const unsigned threads = 1u << (T::kLog - kLogValues);
  switch (ip.digit_count) {
    case 1: ntt_inner_product_kernel<T, 1><<<grid, threads, 0, stream>>>(args, ip); break;
    case 2: ntt_inner_product_kernel<T, 2><<<grid, threads, 0, stream>>>(args, ip); break;
    case 3: ntt_inner_product_kernel<T, 3><<<grid, threads, 0, stream>>>(args, ip); break;
    case 4: ntt_inner_product_kernel<T, 4><<<grid, threads, 0, stream>>>(args, ip); break;
    default: CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // NttPlan checks the digit count
  }
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

template <class T, bool Forward, bool Final, bool Finish = false>
void launch_tile(const KernelArgs& args, std::size_t limbs, cudaStream_t stream) {
  const dim3 grid(1u << (T::kLogN - T::kLog), static_cast<unsigned>(limbs));
  ntt_tile_kernel<T, Forward, Final, Finish><<<grid, 1u << (T::kLog - kLogValues), 0, stream>>>(args);
  CERIUM_CUDA_CHECK(cudaGetLastError());
}

template <int LogN, bool Forward, bool Finish>
void launch_passes(const KernelArgs& args, std::size_t limbs, cudaStream_t stream) {
  if constexpr (LogN <= kMaxSingleLog) {
    launch_tile<Tile<LogN, LogN, LogN, false>, Forward, true, Finish>(args, limbs, stream);
  } else {
    using Columns = Tile<LogN, kRowLog, LogN - kRowLog, true>;
    using Rows = Tile<LogN, kRowLog, kRowLog, false>;
    KernelArgs second = args;  // in place on data after the first pass
    second.source = nullptr;
    if constexpr (Forward) {
      launch_tile<Columns, true, false>(args, limbs, stream);
      launch_tile<Rows, true, true, Finish>(second, limbs, stream);
    } else {
      launch_tile<Rows, false, false>(args, limbs, stream);
      launch_tile<Columns, false, true>(second, limbs, stream);
    }
  }
}

// The forward transform whose last pass is the key-switch inner product (every digit in one launch).
template <int LogN>
void launch_inner_product_passes(const KernelArgs& args, std::size_t limbs, const InnerProductLaunch& ip,
                                 cudaStream_t stream) {
  if constexpr (LogN <= kMaxSingleLog) {
    launch_inner_product_tile<Tile<LogN, LogN, LogN, false>>(args, ip, stream);
  } else {
    launch_tile<Tile<LogN, kRowLog, LogN - kRowLog, true>, true, false>(args, limbs, stream);
    KernelArgs second = args;
    second.source = nullptr;
    launch_inner_product_tile<Tile<LogN, kRowLog, kRowLog, false>>(second, ip, stream);
  }
}

template <int LogN, bool Forward>
void launch_degree(const KernelArgs& args, std::size_t limbs, cudaStream_t stream, const InnerProductLaunch* ip) {
  if constexpr (Forward) {
    if (ip != nullptr) return launch_inner_product_passes<LogN>(args, limbs, *ip, stream);
    if (args.finish.out != nullptr) return launch_passes<LogN, true, true>(args, limbs, stream);
  }
  launch_passes<LogN, Forward, false>(args, limbs, stream);
}

template <bool Forward>
void launch(const NttLaunch& launch) {
  // The grid's y dimension (limbs) is limited to 65535: larger batches go in chunks.
  constexpr std::size_t max_limbs_per_launch = 65535;
  const auto stream = static_cast<cudaStream_t>(launch.stream);
  const std::size_t n = std::size_t{1} << launch.log_degree;
  // The kernels index the batch's limbs in 32 bits (LimbPosition).
  if (launch.limbs >= (std::size_t{1} << 31)) CERIUM_CUDA_CHECK(cudaErrorInvalidValue);
  // The inner product's last pass covers every digit of a limb in one block: one launch, never chunked
  // (NttPlan::forward_inner_product checks the shape).
  const InnerProductLaunch* ip = Forward ? launch.inner_product : nullptr;
  if (ip != nullptr && (launch.limbs > max_limbs_per_launch || launch.period == 0 ||
                        launch.limbs != launch.period * ip->digit_count || launch.finish != nullptr))
    CERIUM_CUDA_CHECK(cudaErrorInvalidValue);
  for (std::size_t first = 0; first < launch.limbs; first += max_limbs_per_launch) {
    const std::size_t limbs = launch.limbs - first < max_limbs_per_launch ? launch.limbs - first : max_limbs_per_launch;
    const std::size_t period = launch.period == 0 ? launch.limbs : launch.period;
    const std::size_t poly_stride = launch.poly_stride == 0 ? period * n : launch.poly_stride;
    const std::size_t source_stride = launch.source_stride == 0 ? period * n : launch.source_stride;
    KernelArgs args{launch.data, launch.source, poly_stride, source_stride,
                    reinterpret_cast<const uint2*>(launch.twiddles),
                    reinterpret_cast<const uint2*>(launch.twists), launch.constants, first, period, launch.split,
                    launch.shift, launch.skip_stride,
                    launch.skip_width, launch.skip_limit, NttFinish{}};
    if (Forward && launch.finish != nullptr) args.finish = *launch.finish;
    switch (launch.log_degree) {
      case 10: launch_degree<10, Forward>(args, limbs, stream, ip); break;
      case 11: launch_degree<11, Forward>(args, limbs, stream, ip); break;
      case 12: launch_degree<12, Forward>(args, limbs, stream, ip); break;
      case 13: launch_degree<13, Forward>(args, limbs, stream, ip); break;
      case 14: launch_degree<14, Forward>(args, limbs, stream, ip); break;
      case 15: launch_degree<15, Forward>(args, limbs, stream, ip); break;
      case 16: launch_degree<16, Forward>(args, limbs, stream, ip); break;
      case 17: launch_degree<17, Forward>(args, limbs, stream, ip); break;
      default: CERIUM_CUDA_CHECK(cudaErrorInvalidValue);  // NttPlan checks the degree before
    }
  }
}

}  // namespace ntt_kernels

void launch_ntt_forward(const NttLaunch& launch_args) { ntt_kernels::launch<true>(launch_args); }
void launch_ntt_inverse(const NttLaunch& launch_args) { ntt_kernels::launch<false>(launch_args); }
int ntt_pass_count(int log_degree) { return log_degree <= ntt_kernels::kMaxSingleLog ? 1 : 2; }

}  // namespace cerium::cuda::detail
