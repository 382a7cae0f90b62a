#pragma once
// RNS polynomials: L limbs x N residues (uint32), limb-major, each limb contiguous and 256-byte aligned, in
// coefficient or NTT form, stored as a list of shards (each a contiguous limb range on one device).
//
// One shard on cpu:0 is the common case; every limb access goes through the shard list so that code written
// against limb(i) works unchanged on sharded polynomials. The CPU backend may place shards on cpu:1, cpu:2, ...
// (all host memory) to exercise sharded code paths. Shards on CUDA devices hold device memory (through the hooks
// of core/device_memory.hpp): the CUDA backend computes on them through RnsShard::data(); host code that asks
// for their limbs (limb(i), the arithmetic operators) gets an UnsupportedError telling it to download first.
//
// A polynomial sharded over the ranks of a device mesh (dist/) lists every shard on every rank; the shards other
// ranks hold are remote shards (Device::remote(rank)) with no storage, so the layout is the same
// everywhere and code that reads only metadata (basis, level, form) works unchanged.
//
// Copies are explicit: RnsPoly moves freely but copying a polynomial (megabytes at N = 2^16) needs clone().

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "cerium/core/aligned_buffer.hpp"
#include "cerium/core/device.hpp"
#include "cerium/core/device_memory.hpp"
#include "cerium/ring/rns_basis.hpp"

namespace cerium::ring {

// Whether a polynomial's words are its coefficients or its values at the NTT's evaluation points.
enum class PolyForm : std::uint8_t { coefficient, ntt };

// "coefficient" or "NTT".
constexpr std::string_view to_string(PolyForm form) { return form == PolyForm::coefficient ? "coefficient" : "NTT"; }

// Limb lists: how conversion routines see polynomials independently of their storage. Every span of a list has
// the same length (N, or a block of coefficients for block-wise work).
using LimbSpans = std::span<const std::span<std::uint32_t>>;
using ConstLimbSpans = std::span<const std::span<const std::uint32_t>>;

// Words between the starts of consecutive limbs: N rounded up to a whole number of 256-byte lines.
constexpr std::size_t limb_stride(std::size_t n) {
  constexpr std::size_t words_per_line = buffer_alignment / sizeof(std::uint32_t);
  return (n + words_per_line - 1) / words_per_line * words_per_line;
}

// A shard of a layout: this many consecutive limbs on this device.
struct ShardSpec {
  Device device = Device::cpu();  // where the limbs live (remote: the rank that holds them)
  std::size_t limb_count = 0;     // how many consecutive limbs
};

// limb_count limbs over the given devices in order, as evenly as possible (earlier devices take the extra
// limbs; devices that would get none are left out). Throws InvalidArgument when devices is empty.
std::vector<ShardSpec> split_limbs(std::size_t limb_count, std::span<const Device> devices);

// A contiguous range of limbs of one polynomial on one device, owning its aligned storage.
class RnsShard {
 public:
  // Storage for limb_count limbs on device; none for a remote device (another rank holds the words).
  RnsShard(Device device, std::size_t first_limb, std::size_t limb_count, std::size_t n, BufferInit init);

  Device device() const { return device_; }  // where the limbs live (remote: the rank that holds them)
  // Another rank holds these limbs; this shard records where, without storage.
  bool is_remote() const { return device_.is_remote(); }
  std::size_t first_limb() const { return first_limb_; }  // the polynomial's index of this shard's limb 0
  std::size_t limb_count() const { return limb_count_; }  // live limbs
  std::size_t n() const { return n_; }                    // N: words per limb
  std::size_t stride() const { return limb_stride(n_); }  // words between limb starts: limb_stride(N)
  // Limb `local` of this shard (limb first_limb() + local of the polynomial): n() words. Host memory only
  // (UnsupportedError for a shard in device memory).
  std::span<std::uint32_t> limb(std::size_t local) { return {host_words() + local * stride(), n_}; }
  // The same limb, read-only.
  std::span<const std::uint32_t> limb(std::size_t local) const {
    return {const_cast<RnsShard*>(this)->host_words() + local * stride(), n_};
  }
  // The storage on the shard's device, padding included: at least limb_count() * stride() words, limb-major.
  // A device pointer for device shards: for backends, which launch their kernels on it.
  const DeviceWords& storage() const { return storage_; }
  DeviceWords& storage() { return storage_; }
  std::uint32_t* data() { return storage_.data(); }
  const std::uint32_t* data() const { return storage_.data(); }

  // A deep copy on the same device.
  RnsShard clone() const;
  // The live limbs of this shard on another device (host <-> device, or device to device). A remote shard stays
  // a remote shard.
  RnsShard copy_to(Device target) const;
  // Limbs [first, first + count) of this shard as a shard over the same words that does not own them (valid while
  // this shard lives and keeps its storage): for views that regroup limbs without copying (dist/). Writes through
  // the view change this shard's words.
  RnsShard borrow(std::size_t first, std::size_t count) const;
  // Fewer (or again more, up to what the storage holds) live limbs; the words of the kept limbs stay.
  void resize_limbs(std::size_t limb_count);

 private:
  friend class RnsPoly;
  RnsShard(Device device, std::size_t first_limb, std::size_t limb_count, std::size_t n, DeviceWords storage)
      : device_(device), first_limb_(first_limb), limb_count_(limb_count), n_(n), storage_(std::move(storage)) {}
  std::uint32_t* host_words();

  Device device_;
  std::size_t first_limb_ = 0;
  std::size_t limb_count_ = 0;
  std::size_t n_ = 0;
  DeviceWords storage_;
};

// How a new polynomial is made: its form, how its limbs are spread over devices, and whether its words are zeroed.
struct PolyOptions {
  PolyForm form = PolyForm::coefficient;  // the form its words are in
  // How the limbs are spread over devices; empty means one shard on cpu:0. The counts must add up to the
  // number of primes of the basis.
  std::vector<ShardSpec> shards = {};
  BufferInit init = BufferInit::zero;  // zero, or uninitialized for words that are written before they are read
};

// A polynomial of Z_Q[X]/(X^N + 1) as residues over an RNS basis: one limb of N words per prime, kept in shards
// (see the file comment). Move-only; clone() copies.
class RnsPoly {
 public:
  // An empty polynomial (no basis, no limbs); only assignment, empty() and destruction are meaningful.
  RnsPoly() = default;
  // The zero polynomial (unless options.init says otherwise) over basis, one limb per prime.
  explicit RnsPoly(RnsBasisPtr basis, PolyOptions options = {});
  RnsPoly(RnsBasisPtr basis, PolyForm form) : RnsPoly(std::move(basis), PolyOptions{.form = form}) {}
  // One shard over given storage on its device (at least one limb_stride(N) per prime; its contents are the
  // words): for backends that place polynomials processed as a batch in one allocation (DeviceWords::slices).
  RnsPoly(RnsBasisPtr basis, PolyForm form, DeviceWords storage);

  // Moves hand the shards over; copies are explicit (clone, copy_to).
  RnsPoly(RnsPoly&&) noexcept = default;
  RnsPoly& operator=(RnsPoly&&) noexcept = default;
  RnsPoly(const RnsPoly&) = delete;
  RnsPoly& operator=(const RnsPoly&) = delete;
  // A deep copy with the same basis, form and shard layout.
  RnsPoly clone() const;
  // A deep copy with every shard on `device` (uploads and downloads; the shard boundaries are kept).
  RnsPoly copy_to(Device device) const;
  // Every shard's memory is host memory: limb() and the operators may be used.
  bool host_accessible() const;

  // A polynomial over basis made of these shards in order (their limb counts must add up to the basis's size;
  // first limbs are renumbered): for views that regroup shards without copying words (dist/).
  static RnsPoly from_shards(RnsBasisPtr basis, PolyForm form, std::vector<RnsShard> shards);
  // Hands the shards over and leaves this polynomial empty.
  std::vector<RnsShard> release_shards();

  // Small signed coefficients (tests, secret keys) reduced into every prime. coefficients.size() must be N.
  // The result is in options.form (converted after reduction when that is NTT).
  static RnsPoly from_signed(RnsBasisPtr basis, std::span<const std::int64_t> coefficients, PolyOptions options = {});
  // The centered representatives in (-Q/2, Q/2] of a coefficient-form polynomial. Throws MismatchError in NTT
  // form and InvalidArgument when a coefficient's representative does not fit in int64.
  std::vector<std::int64_t> to_signed() const;

  bool empty() const { return basis_ == nullptr; }                      // no basis: default-made, moved or released
  std::size_t n() const { return basis_ ? basis_->ring_degree() : 0; }  // N; 0 when empty
  std::size_t limb_count() const { return limb_count_; }                // one per prime of the basis
  const RnsBasis& basis() const { return *basis_; }                     // the primes (not for an empty polynomial)
  const RnsBasisPtr& basis_ptr() const { return basis_; }               // the basis, shared
  PolyForm form() const { return form_; }                               // coefficient or NTT
  // Relabels the words without transforming them: for code that writes NTT-form values directly (e.g. a
  // uniform polynomial sampled in the evaluation domain). to_ntt()/to_coeff() transform.
  void set_form(PolyForm form) { form_ = form; }

  // The shards in limb order: together they hold limbs [0, limb_count()).
  std::span<const RnsShard> shards() const { return shards_; }
  std::span<RnsShard> shards() { return shards_; }
  // The layout of this polynomial's shards, to build another polynomial placed the same way.
  std::vector<ShardSpec> shard_layout() const;
  // The N words of limb i (residues mod basis().prime(i)). Throws InvalidArgument for i >= limb_count().
  std::span<std::uint32_t> limb(std::size_t i);
  std::span<const std::uint32_t> limb(std::size_t i) const;
  std::vector<std::span<std::uint32_t>> limbs();
  std::vector<std::span<const std::uint32_t>> limbs() const;

  // Zeroes every limb; the form and the layout stay.
  void set_zero();
  // In place; a no-op when already in the requested form.
  void to_ntt();
  void to_coeff();

  // Elementwise; operands need the same basis and form (MismatchError otherwise, naming both sides).
  RnsPoly& operator+=(const RnsPoly& other);
  RnsPoly& operator-=(const RnsPoly& other);
  // The ring product: both operands in NTT form.
  RnsPoly& operator*=(const RnsPoly& other);
  // -x, in place; in either form.
  void negate();
  // Limb i times scalars[i]; scalars[i] < q_i, one per limb.
  void multiply_scalar(std::span<const std::uint32_t> scalars);
  // Every limb times the integer c (reduced mod each prime); in either form.
  void multiply_integer(std::int64_t c);

  // Removes the last `count` limbs (at least one limb stays); the basis becomes its prefix. Storage is kept.
  void drop_last_limbs(std::size_t count);
  // Same, to a given prefix basis (shared, e.g. a level's basis held by a context). MismatchError unless
  // prefix's primes are the first primes of this polynomial's basis.
  void drop_to(RnsBasisPtr prefix);

  // Same basis, form and words (the shard layout and padding are not compared).
  friend bool operator==(const RnsPoly& a, const RnsPoly& b);

 private:
  RnsBasisPtr basis_;
  PolyForm form_ = PolyForm::coefficient;
  std::size_t limb_count_ = 0;
  std::vector<RnsShard> shards_;
};

// The sum, difference, ring product (both in NTT form) and negation as new polynomials; the operands are checked
// as by the compound operators.
RnsPoly operator+(const RnsPoly& a, const RnsPoly& b);
RnsPoly operator-(const RnsPoly& a, const RnsPoly& b);
RnsPoly operator*(const RnsPoly& a, const RnsPoly& b);
RnsPoly operator-(const RnsPoly& a);

// Throws MismatchError naming `operation` and both sides when a and b differ in basis or form.
void require_compatible(const RnsPoly& a, const RnsPoly& b, std::string_view operation);

// c mod q for any signed 64-bit c, in [0, q).
std::uint32_t reduce_signed(std::int64_t c, std::uint32_t q);

}  // namespace cerium::ring
