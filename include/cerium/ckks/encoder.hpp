#pragma once
// The CKKS encoder: complex (or real) slot vectors <-> plaintext polynomials.
//
// Encoding follows math/special_fft.hpp: z (n slots, zero-padded) -> u = special_ifft(z) -> the real polynomial
// m with m_(k gap) = Re u_k, m_(N/2 + k gap) = Im u_k (gap = N / 2n) -> times the scale, each coefficient rounded to
// the nearest integer and reduced exactly modulo every prime of Q_level -> NTT form. Decoding inverts it from the
// exact centered integer coefficients.
//
// Decoding reconstructs each needed coefficient from the smallest prefix of limbs whose product P exceeds
// 2^(log2(scale) + 64) (all limbs when Q_level is smaller). It is exact for coefficients |m_k| < P / 2, i.e. for
// messages up to about 2^63 in magnitude, far beyond what CKKS arithmetic keeps precise; a plaintext whose limbs
// are any prefix of Q (e.g. one decrypted at a low level) decodes the same way.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/periodic_plaintext.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/ckks/unscaled_plaintext.hpp"
#include "cerium/ring/rns_basis.hpp"
#include "cerium/ring/rns_poly.hpp"

namespace cerium::ckks {

namespace detail {
struct RoundedInteger;  // src/ckks/exact_integer.hpp
}  // namespace detail

// Where and how a slot vector is encoded; every field has a default that the context resolves.
struct EncodeOptions {
  int level = -1;          // -1: the top level
  double scale = 0;        // 0: parameters().default_scale_at(level)
  std::size_t slots = 0;   // 0: N/2; otherwise a power of two in [1, N/2] (sparse packing below N/2)
};

// Holds only a ContextPtr: cheap to copy, safe to use from several threads.
class Encoder {
 public:
  // Throws InvalidArgument for a null context.
  explicit Encoder(ContextPtr context);

  const ContextPtr& context() const { return context_; }  // the context it encodes for

  // values.size() <= slots; missing slots are zero. Throws InvalidArgument for too many values, a bad slot count,
  // a non-positive or non-finite scale, non-finite values, or scaled coefficients beyond Q_level / 2 ("scale
  // overflow"); LevelError for a level outside [0, max_level] (other than -1).
  Plaintext encode(std::span<const double> values, const EncodeOptions& options = {}) const;
  Plaintext encode(std::span<const std::complex<double>> values, const EncodeOptions& options = {}) const;

  // The slot vector that repeats `period` (a power of two, at most the slots) over options.slots slots: the
  // polynomial of a period.size()-slot encoding, m'(X^(N / 2p)), which decodes at any slot count to the values
  // repeated. Its special FFT and NTT are period-sized (N / 2p times fewer butterflies than encode of the repeated
  // vector), its words those of encode(period, {.slots = period.size()}) with options.slots as the plaintext's
  // slot count; against encode of the repeated vector they differ only by the FFT's rounding. encode's checks.
  Plaintext encode_periodic(std::span<const std::complex<double>> period, const EncodeOptions& options = {}) const;

  // encode_periodic's plaintext kept compressed: its NTT words repeat in blocks of gap = N / (2 period), so only
  // one word a block is kept (2 period words a limb); PeriodicPlaintext::expand and an evaluator's upload give
  // encode_periodic's words. A periodic weight travels to the device this way, N / (2 period) times smaller.
  PeriodicPlaintext encode_periodic_compressed(std::span<const std::complex<double>> period,
                                               const EncodeOptions& options = {}) const;

  // Encoding's first half (ckks/unscaled_plaintext.hpp): the special IFFT of the slot vector that repeats
  // `period` over `slots` slots (0: N/2), in host memory; encode(unscaled, options) finishes it at any level and
  // scale with encode_periodic(period, options)'s words. An evaluator uploads it and encodes it where it computes.
  // encode's checks on the values and the counts.
  UnscaledPlaintext unscaled(std::span<const std::complex<double>> period, std::size_t slots = 0) const;
  // unscaled's checks alone (finite values, a period and a slot count that are powers of two with period <= slots
  // <= N/2), naming `operation`; returns the slot count (0: N/2). What an evaluator that transforms on its device
  // checks first.
  std::size_t unscaled_slots(std::span<const std::complex<double>> period, std::size_t slots,
                             const char* operation) const;
  // options.slots 0: the unscaled plaintext's. InvalidArgument for coefficients in device memory, a slot count below
  // the period, or scale overflow; LevelError for a level that does not exist; MismatchError for an empty one or
  // another context's.
  Plaintext encode(const UnscaledPlaintext& unscaled, const EncodeOptions& options = {}) const;
  // That encode's checks alone (the coefficients are not read), and its options resolved: no -1 level, 0 scale or
  // 0 slots left. What an evaluator that encodes on its device checks first.
  EncodeOptions resolve(const UnscaledPlaintext& unscaled, const EncodeOptions& options = {}) const;

  // encode's integers over Q_level u P (context()->qp_basis(level)), in NTT form: the Q_level limbs are encode's
  // words exactly and the P limbs the same integers modulo P's primes, so that the polynomial can multiply a key
  // switch's sums before their ModDown (double hoisting, circuits/linear_transform.hpp). encode's checks (the
  // range is Q_level's).
  ring::RnsPoly encode_extended(std::span<const std::complex<double>> values, const EncodeOptions& options = {}) const;
  // The same from an unscaled plaintext (encode(unscaled, options)'s integers over Q_level u P): for a vector
  // of `slots` values, encode_extended(values)'s words from unscaled(values, slots). encode's checks.
  ring::RnsPoly encode_extended(const UnscaledPlaintext& unscaled, const EncodeOptions& options = {}) const;
  // The same from a plaintext made elsewhere: its centered integers (every coefficient, |m| < Q_level / 2) over
  // Q_level u P, NTT form; encode_extended's words for a plaintext of encode. It costs an inverse NTT and a CRT of
  // every limb per coefficient. InvalidArgument for a plaintext in device memory (download it); MismatchError for
  // an empty plaintext or another context's.
  ring::RnsPoly extend(const Plaintext& plaintext) const;

  // The plaintext whose every slot holds value: round(Re value * scale) at coefficient 0 and round(Im value *
  // scale) at coefficient N/2. No FFT, and no NTT for a real value (a constant is constant in NTT form too).
  Plaintext encode_constant(double value, const EncodeOptions& options = {}) const;
  Plaintext encode_constant(std::complex<double> value, const EncodeOptions& options = {}) const;

  // plaintext.slots() values. Throws InvalidArgument for a non-positive scale, and MismatchError for an
  // empty plaintext or one of another context.
  std::vector<std::complex<double>> decode(const Plaintext& plaintext) const;
  // The real parts of decode().
  std::vector<double> decode_real(const Plaintext& plaintext) const;

 private:
  struct Resolved {
    int level;
    double scale;
    std::size_t slots;
  };
  Resolved resolve(const EncodeOptions& options, std::size_t value_count, const char* operation) const;
  struct Transformed {
    std::vector<double> coefficients;  // Re u_k at k, Im u_k at size + k
    double largest = 0;                // their largest magnitude
  };
  // The special IFFT of values zero-padded to `size` slots (checks the values are finite).
  Transformed transform(std::span<const std::complex<double>> values, std::size_t size, const char* operation) const;
  // Each coefficient times the scale, rounded (the caller checks the range first).
  static std::vector<detail::RoundedInteger> rounded(std::span<const double> coefficients, double scale);
  // transform then rounded: the coefficients at multiples of N / 2 slots, Re parts first.
  std::vector<detail::RoundedInteger> rounded_coefficients(std::span<const std::complex<double>> values,
                                                           const Resolved& resolved, const char* operation) const;
  // Integer k at coefficient k gap (zero elsewhere) over basis, NTT form.
  static ring::RnsPoly poly_of(std::span<const detail::RoundedInteger> rounded, std::size_t gap,
                               const ring::RnsBasisPtr& basis);
  // An unscaled plaintext's coefficients at `scale`, rounded, over basis (Q_level, or Q_level u P), NTT form (the
  // caller has resolved the options, which checks the range).
  static ring::RnsPoly unscaled_poly(const UnscaledPlaintext& unscaled, double scale, const ring::RnsBasisPtr& basis);
  // The scaled, rounded special IFFT of values over basis (Q_level, or Q_level u P), NTT form.
  ring::RnsPoly rounded_poly(std::span<const std::complex<double>> values, const Resolved& resolved,
                             const ring::RnsBasisPtr& basis, const char* operation) const;

  ContextPtr context_;
};

// out[i] = round(value) mod basis.prime(i), exactly, for any magnitude (round half away from zero). Throws
// InvalidArgument when value is NaN or infinite, when |value| >= 2^(log2(Q) - 1) (the integer would wrap around
// Q: "scale overflow"), or when out.size() != basis.size().
void round_to_residues(double value, const ring::RnsBasis& basis, std::span<std::uint32_t> out);

}  // namespace cerium::ckks
