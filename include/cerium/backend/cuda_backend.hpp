#pragma once
// The CUDA backend: PolyBackend on device-resident polynomials, so that ckks::BasicEvaluator<CudaBackend> runs
// every evaluator operation on the GPU and produces exactly the CPU backend's words.
//
// Polynomials live in one shard on one CUDA device (memory from cuda/memory.hpp's stream-ordered pool); all
// work is queued in order on that device's work stream, so operations return without waiting and a download
// waits for what came before it. Plans (NTT twiddles, conversion constants, automorphism permutations) are built
// on first use and cached per backend; copies of a backend share the cache, so an evaluator and the code around
// it may each hold one. No CUDA header is included here: the state is opaque.
//
// NTT tables are uploaded once for the context's whole basis Q u P; a polynomial over any sub-basis (a level's
// Q_l, Q_l u P, a digit) runs on the tables of its primes. Keys are uploaded expanded (seeded halves are
// expanded on the host first).

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/backend/cuda/graph.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/math/special_fft.hpp"
#include "cerium/ring/automorphism.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "cerium/rlwe/context.hpp"
#include "cerium/rlwe/key_switch.hpp"
#include "cerium/rlwe/switching_key.hpp"

namespace cerium::backend {

// Where a CudaBackend computes.
struct CudaBackendOptions {
  int device = 0;  // the CUDA device ordinal
};

// PolyBackend on one CUDA device (see the file comment). Copies share the device state, the work stream and the
// plan cache.
class CudaBackend {
 public:
  // The eDSL does not fold rescale(sum) into the sum's pass by default here: the rescale's subtract-and-scale
  // already rides the forward NTT's last pass, and folding costs each part its own small launches (measured
  // 166 us folded against 147 us unfolded for a rescaled sum of 8 plaintext products at 40 limbs, H200,
  // bench/RESULTS.md).
  static constexpr bool fold_rescale_into_sums = false;
  // Throws DeviceError without a usable device, UnsupportedError for N < 2^10 (the GPU NTT's range).
  explicit CudaBackend(rlwe::ContextPtr context, CudaBackendOptions options = {});

  Device device() const;                   // the CUDA device it computes on
  const rlwe::ContextPtr& context() const;  // the context whose primes its tables cover
  // Waits for all work queued so far (DeviceError for a failure in it).
  void synchronize() const;
  // The stream every operation of this backend (and of every CUDA backend on its device) is queued on.
  const cuda::Stream& work_stream() const;

  // --- SlotTransform (backend.hpp) ---
  // The special inverse FFT of `values` (tables.slots() complex doubles, interleaved, on this device; overwritten)
  // into `out` (2 tables.slots() doubles: the real parts, then the imaginary parts), the host's words
  // (math::special_ifft, ckks::Encoder::unscaled); returns their largest magnitude (it waits for the device).
  double special_ifft_split(const math::SpecialFftTables& tables, DeviceWords& values, DeviceWords& out) const;

  // --- WorkCapture (backend.hpp) ---
  // The work `work` queues on this backend's stream, captured as a CUDA graph (cuda/graph.hpp says what capture
  // may do); the pool's unused memory goes back to the driver first, so the graph's own allocations find room.
  cuda::Graph capture(const std::function<void()>& work) const;
  // x's words := y's (the same limbs and degree, device polynomials), queued on the work stream.
  void copy_into(ring::RnsPoly& x, const ring::RnsPoly& y) const;

  // --- PolyBackend ---
  // PolyBackend's storage and placement (backend.hpp), in device memory from the pool: place uploads a host
  // polynomial, download copies one back after the work queued before it, resident uploads a key (expanded)
  // unless it is on this device already.
  ring::RnsPoly allocate(const ring::RnsBasisPtr& basis, ring::PolyOptions options) const;
  ring::RnsPoly clone(const ring::RnsPoly& y) const;
  ring::RnsPoly place(ring::RnsPoly&& x) const;
  ring::RnsPoly download(const ring::RnsPoly& y) const;
  std::shared_ptr<const rlwe::SwitchingKey> resident(std::shared_ptr<const rlwe::SwitchingKey> key) const;

  // PolyBackend's elementwise arithmetic and fused sums of products (backend.hpp gives each one's words), queued
  // on the work stream.
  void add(ring::RnsPoly& x, const ring::RnsPoly& y) const;
  void sub(ring::RnsPoly& x, const ring::RnsPoly& y) const;
  void negate(ring::RnsPoly& x) const;
  void multiply(ring::RnsPoly& x, const ring::RnsPoly& y) const;
  void multiply_accumulate(ring::RnsPoly& x, const ring::RnsPoly& y, const ring::RnsPoly& z) const;
  void multiply_accumulate_many(ring::RnsPoly& x, std::span<const ring::RnsPoly* const> a,
                                std::span<const ring::RnsPoly* const> b, bool accumulate) const;
  void linear_combination(ring::RnsPoly& x, std::span<const ring::RnsPoly* const> a,
                          std::span<const ring::RnsPoly* const> b, std::span<const ring::RnsPoly* const> c,
                          std::span<const std::uint32_t> scalars, bool accumulate) const;  // cuda_expr_ops.cpp
  void linear_combination_rescaled(const ring::Rescaler& rescaler, ring::RnsPoly& x,
                                   std::span<const ring::RnsPoly* const> a, std::span<const ring::RnsPoly* const> b,
                                   std::span<const ring::RnsPoly* const> c,
                                   std::span<const std::uint32_t> scalars) const;  // cuda_expr_ops.cpp
  // backend::RescaledProductSum: the products summed in one pass over the kept limbs, each term's rounding
  // correction from its dropped limbs alone (cuda_expr_ops.cpp).
  void sum_of_rescaled_products(const ring::Rescaler& rescaler, ring::RnsPoly& x,
                                std::span<const ring::RnsPoly* const> a, std::span<const ring::RnsPoly* const> b) const;
  // backend::CompactProductSum: the same with compact right factors (encode_compact_batch's), read at 1/gap of
  // their size; compact_encoding(gap): whether plaintexts of that gap can be kept compact (the sparse encoding's
  // one-launch path: gap >= 4, N / gap <= 8192).
  void sum_of_rescaled_compact_products(const ring::Rescaler& rescaler, ring::RnsPoly& x,
                                        std::span<const ring::RnsPoly* const> a, const CompactPlaintexts& b) const;
  // x (over b's basis) = sum_t a_t b_t with compact right factors, not rescaled: one pass (cuda_expr_ops.cpp).
  void sum_of_compact_products(ring::RnsPoly& x, std::span<const ring::RnsPoly* const> a,
                               const CompactPlaintexts& b) const;
  bool compact_encoding(std::size_t gap) const;
  CompactPlaintexts encode_compact_batch(const ring::RnsBasisPtr& basis,
                                         std::span<const DeviceWords* const> coefficients,
                                         std::span<const std::size_t> gaps, double scale) const;
  // The tensor product of (x0, x1) and (y0, y1) (x0 becomes x0 y0; returns {x0 y1 + x1 y0, x1 y1}), and limb i
  // times per_limb[i].
  std::array<ring::RnsPoly, 2> tensor(ring::RnsPoly& x0, const ring::RnsPoly& x1, const ring::RnsPoly& y0,
                                      const ring::RnsPoly& y1) const;
  void multiply_scalar(ring::RnsPoly& x, std::span<const std::uint32_t> per_limb) const;
  // Out of place: one pass into a new polynomial (PolyBackend).
  ring::RnsPoly sum(const ring::RnsPoly& y, const ring::RnsPoly& z) const;
  ring::RnsPoly difference(const ring::RnsPoly& y, const ring::RnsPoly& z) const;
  ring::RnsPoly product(const ring::RnsPoly& y, const ring::RnsPoly& z) const;
  ring::RnsPoly negation(const ring::RnsPoly& y) const;
  ring::RnsPoly scalar_product(const ring::RnsPoly& y, std::span<const std::uint32_t> per_limb) const;
  std::array<ring::RnsPoly, 3> tensor_product(const ring::RnsPoly& x0, const ring::RnsPoly& x1,
                                              const ring::RnsPoly& y0, const ring::RnsPoly& y1) const;
  // The first limbs of y over basis (a prefix of y's), limb i plus per_limb[i] (NTT form), and every limb times
  // an integer.
  ring::RnsPoly prefix(const ring::RnsPoly& y, const ring::RnsBasisPtr& basis) const;
  void add_scalar(ring::RnsPoly& x, std::span<const std::uint32_t> per_limb) const;
  void multiply_integer(ring::RnsPoly& x, std::int64_t integer) const;

  // In place on the device; a no-op when x is in that form already.
  void to_ntt(ring::RnsPoly& x) const;
  void to_coeff(ring::RnsPoly& x) const;

  // x (or each part of a ciphertext) divided by the primes the rescaler drops; drop_to keeps basis's limbs only.
  void rescale(const ring::Rescaler& rescaler, ring::RnsPoly& x) const;
  void rescale(const ring::Rescaler& rescaler, std::span<ring::RnsPoly> parts) const;
  void drop_to(ring::RnsPoly& x, const ring::RnsBasisPtr& basis) const;

  // Bootstrapping's ModRaise: y's centered coefficients over basis, NTT form (UnsupportedError for more primes).
  ring::RnsPoly mod_raise(const ring::RnsPoly& y, const ring::RnsBasisPtr& basis) const;  // y over 1 or 2 primes
  // X -> X^k applied to y, in y's form, as a new polynomial.
  // Fast basis conversion of y (coefficient form, a single device shard) to the primes of `to`, in coefficient
  // form: ring::BasisConverter's words (no correction of the multiple of the source modulus). What a rank of a
  // sharded backend (dist/) runs to extend a digit it gathered to the primes it holds.
  ring::RnsPoly convert_basis(const ring::RnsPoly& y, const ring::RnsBasisPtr& to) const;
  ring::RnsPoly automorphism(const ring::Automorphism& automorphism, const ring::RnsPoly& y) const;

  // Hybrid key switching: ModUp of every digit of y at `level`, then the inner product with the key and ModDown
  // (the automorphism, unless null, applied to the digits as they are read): the two sums over Q_l, NTT form.
  rlwe::DecomposedPoly mod_up(const rlwe::Context& context, const ring::RnsPoly& y, int level) const;
  std::array<ring::RnsPoly, 2> key_switch_apply(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                                const rlwe::SwitchingKey& key,
                                                const ring::Automorphism* automorphism) const;
  // The same plus addends[i] on sum i, added in ModDown's last pass (no separate add).
  std::array<ring::RnsPoly, 2> key_switch_apply(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                                const rlwe::SwitchingKey& key, const ring::Automorphism* automorphism,
                                                std::array<const ring::RnsPoly*, 2> addends) const;
  // The same, then both sums rescaled by `rescaler` (over Q_l): the words of key_switch_apply, then rescale, with
  // one forward NTT fewer (ModDown's and the rescale's corrections transformed together).
  std::array<ring::RnsPoly, 2> key_switch_apply(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                                const rlwe::SwitchingKey& key, const ring::Automorphism* automorphism,
                                                std::array<const ring::RnsPoly*, 2> addends,
                                                const ring::Rescaler& rescaler) const;
  // ModUp and key_switch_apply (no automorphism; addends and rescaler as there, both optional) in one call, with
  // the words of the two: ModUp's last NTT pass sums the digits with the key as it goes (up to 4 digits), so the
  // extended digits never go to global memory (backend::FusedKeySwitch).
  std::array<ring::RnsPoly, 2> key_switch(const rlwe::Context& context, const ring::RnsPoly& y, int level,
                                          const rlwe::SwitchingKey& key, std::array<const ring::RnsPoly*, 2> addends,
                                          const ring::Rescaler* rescaler) const;
  // The inner product kernel alone (the sums switch_keys hands to ModDown), over Q_l u P in NTT form.
  std::array<ring::RnsPoly, 2> key_switch_inner_product(const rlwe::Context& context,
                                                        const rlwe::DecomposedPoly& decomposed,
                                                        const rlwe::SwitchingKey& key,
                                                        const ring::Automorphism* automorphism) const;
  // ModDown by the dropped primes (P), in y's form: Q_l u P -> Q_l.
  ring::RnsPoly mod_down(const ring::ModDown& mod_down, const ring::RnsPoly& y) const;

  // --- Placement of whole objects ---
  ring::RnsPoly upload(const ring::RnsPoly& host) const;
  // A seeded key's uniform halves are expanded on the device (the same words as on the host); the result is
  // stored expanded.
  rlwe::SwitchingKey upload(const rlwe::SwitchingKey& key) const;
  // A polynomial over basis in NTT form whose limb i is words[i N / gap, (i + 1) N / gap) with each word
  // repeated gap times (a ckks::PeriodicPlaintext), expanded on the device from the compressed words.
  // InvalidArgument for a gap that is not a power of two dividing N or words of another count.
  ring::RnsPoly place_blocks(const ring::RnsBasisPtr& basis, std::span<const std::uint32_t> words,
                             std::size_t gap) const;
  // backend::CoefficientEncoding: `count` doubles on this device (2 words each) scaled, rounded and reduced per
  // prime at coefficients k gap, then transformed: the host encoder's words. InvalidArgument for a gap that is not
  // a power of two with count gap = N, or coefficients elsewhere or of another size.
  ring::RnsPoly encode_scaled(const ring::RnsBasisPtr& basis, const DeviceWords& coefficients, std::size_t count,
                              std::size_t gap, double scale) const;
  // The same for several plaintexts over one basis at one scale (each N / gaps[t] doubles): one allocation, one
  // encoding launch and one batched NTT per 32 of them, instead of two launches and an NTT each. Where every
  // gap is at least 4 with N / gap at most 8192 (a slot vector of period at most sparse_encoding_period(N)), one
  // launch in all: the NTT's first log2(N / gap) stages on the N / gap coefficients, each value written gap times.
  std::vector<ring::RnsPoly> encode_scaled_batch(const ring::RnsBasisPtr& basis,
                                                 std::span<const DeviceWords* const> coefficients,
                                                 std::span<const std::size_t> gaps, double scale) const;
  // The longest slot period whose unscaled plaintexts take encode_scaled_batch's one-launch path at ring degree N:
  // encoding one costs about a write of its limbs, so keeping such weights unscaled and encoding them at each use
  // costs little more than reading them encoded (graph::ExecutorOptions::unscaled_period_limit).
  static std::size_t sparse_encoding_period(std::size_t ring_degree);
  // rlwe::expand_uniform(basis, seed, stream) computed on the device, in NTT form: the same words.
  ring::RnsPoly expand_uniform(const ring::RnsBasisPtr& basis, const math::Seed& seed, std::uint64_t stream) const;

  struct State;

 private:
  void check_scaled_encoding(const ring::RnsBasisPtr& basis, std::span<const DeviceWords* const> coefficients,
                             std::span<const std::size_t> gaps, double scale) const;
  std::array<ring::RnsPoly, 2> switch_keys(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                           const rlwe::SwitchingKey& key, const ring::Automorphism* automorphism,
                                           std::array<const ring::RnsPoly*, 2> addends,
                                           const ring::Rescaler* rescaler) const;
  // The inner product's two sums over Q_l u P (one allocation, the second right after the first).
  std::vector<ring::RnsPoly> inner_product_sums(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                                const rlwe::SwitchingKey& key,
                                                const ring::Automorphism* automorphism) const;

  std::shared_ptr<State> state_;
};

static_assert(PolyBackend<CudaBackend>, "CudaBackend must provide every operation of the PolyBackend concept");
static_assert(FusedKeySwitch<CudaBackend>);
static_assert(CoefficientEncoding<CudaBackend>);

}  // namespace cerium::backend
