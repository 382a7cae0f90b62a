#pragma once
// Elementwise arithmetic on RNS polynomials in device memory, every limb in one launch: add, sub, negate,
// pointwise multiply (NTT form), multiply-accumulate and per-limb scalar multiply. The words equal those of
// ring::RnsPoly's operators (+=, -=, negate, *=, multiply_scalar).
//
// Polynomials are raw limb-major device memory (limb i at words [i N, (i + 1) N), 16-byte aligned), as NttPlan
// uses; `limbs` counts from the plan's first prime. Every call is queued on `stream` and does not wait.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/ring/rns_basis.hpp"

namespace cerium::cuda {

// One scalar per limb with its Shoup quotient, on the device (uploaded once, used by many launches).
class DeviceScalars {
 public:
  DeviceScalars() = default;
  // scalars[i] < basis.prime(i), at most basis.size() of them; throws InvalidArgument otherwise.
  DeviceScalars(const ring::RnsBasis& basis, std::span<const std::uint32_t> scalars, Stream stream = {});
  // The same kept on the host and passed to each launch by value when there are at most
  // detail::inline_scalar_limbs of them (uploaded otherwise): for scalars used once, with no host wait.
  static DeviceScalars by_value(const ring::RnsBasis& basis, std::span<const std::uint32_t> scalars);
  std::size_t size() const { return size_; }
  // Null for scalars passed by value.
  const void* device_data() const { return table_.empty() ? nullptr : table_.data(); }
  std::span<const std::uint32_t> host_pairs() const { return host_; }  // (value, quotient) pairs, by value only

 private:
  std::size_t size_ = 0;
  DeviceBuffer table_;
  std::vector<std::uint32_t> host_;
};

// The limbs a linear combination covers, and an optional closing step: out = (sum - subtrahend) scale_i, which
// folds a rescale into the pass (out and subtrahend start at the first limb covered, the factors at limb 0).
struct CombinationRange {
  std::size_t first_limb = 0;
  const std::uint32_t* subtrahend = nullptr;
  const DeviceScalars* scale = nullptr;  // device scalars (not by_value), limbs of them
  // -1: the products' right factors are whole polynomials. g >= 2: they are compact plaintexts of gap 2^g
  // (cuda::detail::MixedCombinationLaunch::b_log_gap: N / 2^g words a limb, from limb 0).
  int b_log_gap = -1;
};

class ElementwisePlan {
 public:
  // Uploads the basis's moduli (the CPU's Barrett constants). N >= 4.
  explicit ElementwisePlan(const ring::RnsBasis& basis, Stream stream = {});

  std::size_t degree() const { return n_; }
  std::size_t limbs() const { return limbs_; }

  // out may equal an input in all of these.
  void add(std::uint32_t* out, const std::uint32_t* a, const std::uint32_t* b, std::size_t limbs,
           const Stream& stream) const;
  void sub(std::uint32_t* out, const std::uint32_t* a, const std::uint32_t* b, std::size_t limbs,
           const Stream& stream) const;
  void negate(std::uint32_t* out, const std::uint32_t* a, std::size_t limbs, const Stream& stream) const;
  void multiply(std::uint32_t* out, const std::uint32_t* a, const std::uint32_t* b, std::size_t limbs,
                const Stream& stream) const;
  // acc += a b.
  void multiply_accumulate(std::uint32_t* acc, const std::uint32_t* a, const std::uint32_t* b, std::size_t limbs,
                           const Stream& stream) const;
  // out = sum_t a[t] b[t] (+ out when accumulate), one launch per linear_combination_max_terms terms; out must
  // not be a factor. The words equal the multiply_accumulate sequence.
  void multiply_accumulate_many(std::uint32_t* out, std::span<const std::uint32_t* const> a,
                                std::span<const std::uint32_t* const> b, bool accumulate, std::size_t limbs,
                                const Stream& stream) const;
  // out = sum_t a[t] b[t] + sum_u c[u] s_(u,i) (+ out when accumulate) over limbs [first, first + limbs),
  // scalars[u * stride + i] on limb i (stride = scalars.size() / c.size(), reduced); as few launches as the terms
  // allow (one for a sum of up to 32 products and 16 constants at 40 limbs); out must not be a factor. With no
  // terms and no accumulate, out is zeroed.
  void linear_combination(std::uint32_t* out, std::span<const std::uint32_t* const> a,
                          std::span<const std::uint32_t* const> b, std::span<const std::uint32_t* const> c,
                          std::span<const std::uint32_t> scalars, bool accumulate, std::size_t limbs,
                          const Stream& stream, const CombinationRange& range = {}) const;
  // out + t out_stride = a[t] b[t] over limbs [first, first + limbs) for each term (range.first_limb and
  // range.b_log_gap as in linear_combination; no closing step): a sum's products kept apart, one launch per 64.
  void term_products(std::uint32_t* out, std::size_t out_stride, std::span<const std::uint32_t* const> a,
                     std::span<const std::uint32_t* const> b, std::size_t limbs, const Stream& stream,
                     const CombinationRange& range = {}) const;
  // out = a s_i on limb i.
  void multiply_scalar(std::uint32_t* out, const std::uint32_t* a, const DeviceScalars& scalars, std::size_t limbs,
                       const Stream& stream) const;
  // d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1 (NTT form), one pass; d0 may be a0 or b0.
  void tensor(std::uint32_t* d0, std::uint32_t* d1, std::uint32_t* d2, const std::uint32_t* a0,
              const std::uint32_t* a1, const std::uint32_t* b0, const std::uint32_t* b1, std::size_t limbs,
              const Stream& stream) const;
  // out = a + s_i on limb i: adding a constant polynomial in NTT form.
  void add_scalar(std::uint32_t* out, const std::uint32_t* a, const DeviceScalars& scalars, std::size_t limbs,
                  const Stream& stream) const;
  // out = (a - b) s_i on limb i: the closing step of rescale and ModDown in NTT form.
  void subtract_and_scale(std::uint32_t* out, const std::uint32_t* a, const std::uint32_t* b,
                          const DeviceScalars& scalars, std::size_t limbs, const Stream& stream) const;

 private:
  // Where the right factors' words of range.first_limb begin: whole polynomials or compact (range.b_log_gap).
  std::size_t right_offset(const CombinationRange& range, const char* operation) const;
  void launch(int op, std::uint32_t* out, const std::uint32_t* a, const std::uint32_t* b, const DeviceScalars* scalars,
              std::size_t limbs, const Stream& stream) const;

  std::size_t n_ = 0;
  int log_n_ = 0;
  std::size_t limbs_ = 0;
  DeviceBuffer moduli_;  // limbs x math::Modulus
};

}  // namespace cerium::cuda
