#include "cerium/ckks/encoder.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "cerium/ckks/scale.hpp"
#include "cerium/core/check.hpp"
#include "cerium/math/ntt.hpp"
#include "cerium/math/special_fft.hpp"
#include "exact_integer.hpp"

namespace cerium::ckks {

namespace {

// Scaled coefficients must stay below Q_level / 2 in magnitude, or they wrap around and decode as garbage.
void require_in_range(double largest, const ring::RnsBasis& basis, double scale, int level, const char* operation) {
  require(largest < detail::signed_limit(basis),
          "{}: scale overflow: a coefficient reaches {:.4g} = 2^{:.2f} at scale 2^{:.2f}, beyond Q/2 at level {} "
          "(log2(Q) = {:.2f}); lower the scale or the values, or encode at a higher level",
          operation, largest, std::log2(largest), std::log2(scale), level, basis.log2_product());
  // A positive, finite scale the level cannot carry (below 1, or not below Q_level), named here rather than by the
  // Plaintext constructor, which would not name the call.
  const std::string problem = scale_problem(scale, basis.log2_product());
  require<LevelError>(problem.empty(), "{}: EncodeOptions::scale at level {}: {}", operation, level, problem);
}

}  // namespace

Encoder::Encoder(ContextPtr context) : context_(std::move(context)) {
  require(context_ != nullptr, "Encoder needs a context; got a null ContextPtr");
}

Encoder::Resolved Encoder::resolve(const EncodeOptions& options, std::size_t value_count,
                                   const char* operation) const {
  const Parameters& params = context_->parameters();
  const std::size_t max_slots = params.max_slots();
  const std::size_t slots = options.slots == 0 ? max_slots : options.slots;
  require(std::has_single_bit(slots) && slots <= max_slots,
          "{}: EncodeOptions::slots = {} must be a power of two between 1 and N/2 = {} (0 means N/2)", operation,
          slots, max_slots);
  require(value_count <= slots,
          "{}: {} values do not fit in {} slots; pass at most {} values or raise EncodeOptions::slots (up to N/2 = "
          "{})",
          operation, value_count, slots, slots, max_slots);
  const int level = options.level == -1 ? params.max_level() : options.level;
  require<LevelError>(level >= 0 && level <= params.max_level(),
                      "{}: EncodeOptions::level = {} does not exist: pass 0 to {}, or -1 for the top level", operation,
                      options.level, params.max_level());
  const double scale = options.scale == 0 ? params.default_scale_at(level) : options.scale;
  require(std::isfinite(scale) && scale > 0,
          "{}: EncodeOptions::scale = {} must be positive and finite (0 means the level's default 2^{:.1f})",
          operation, options.scale, std::log2(params.default_scale_at(level)));
  return {level, scale, slots};
}

Plaintext Encoder::encode(std::span<const double> values, const EncodeOptions& options) const {
  std::vector<std::complex<double>> complex_values(values.begin(), values.end());
  return encode(std::span<const std::complex<double>>(complex_values), options);
}

Plaintext Encoder::encode(std::span<const std::complex<double>> values, const EncodeOptions& options) const {
  const Resolved resolved = resolve(options, values.size(), "encode");
  ring::RnsPoly poly = rounded_poly(values, resolved, context_->q_basis(resolved.level), "encode");
  return Plaintext(context_, std::move(poly), resolved.level, resolved.scale, resolved.slots);
}

Plaintext Encoder::encode_periodic(std::span<const std::complex<double>> period, const EncodeOptions& options) const {
  return encode_periodic_compressed(period, options).expand();
}

ring::RnsPoly Encoder::encode_extended(std::span<const std::complex<double>> values,
                                       const EncodeOptions& options) const {
  const Resolved resolved = resolve(options, values.size(), "encode_extended");
  return rounded_poly(values, resolved, context_->qp_basis(resolved.level), "encode_extended");
}

namespace {

// InvalidArgument naming the first value that is NaN or infinite.
void require_finite(std::span<const std::complex<double>> values, const char* operation) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    require(std::isfinite(values[i].real()) && std::isfinite(values[i].imag()),
            "{}: value {} at index {} is not finite", operation,
            fmt::format("({}, {})", values[i].real(), values[i].imag()), i);
  }
}

}  // namespace

Encoder::Transformed Encoder::transform(std::span<const std::complex<double>> values, std::size_t size,
                                        const char* operation) const {
  require_finite(values, operation);
  const math::SpecialFftTables& tables = context_->fft(size);
  std::vector<std::complex<double>> u(size);  // zero-padded
  std::copy(values.begin(), values.end(), u.begin());
  math::special_ifft(u, tables);
  Transformed out;
  out.coefficients.resize(2 * size);
  for (std::size_t k = 0; k < size; ++k) {
    out.coefficients[k] = u[k].real();
    out.coefficients[size + k] = u[k].imag();
    out.largest = std::max({out.largest, std::fabs(u[k].real()), std::fabs(u[k].imag())});
  }
  return out;
}

std::vector<detail::RoundedInteger> Encoder::rounded(std::span<const double> coefficients, double scale) {
  std::vector<detail::RoundedInteger> out(coefficients.size());
  for (std::size_t k = 0; k < coefficients.size(); ++k) out[k] = detail::round_exact(coefficients[k] * scale);
  return out;
}

std::vector<detail::RoundedInteger> Encoder::rounded_coefficients(std::span<const std::complex<double>> values,
                                                                  const Resolved& resolved,
                                                                  const char* operation) const {
  const Transformed u = transform(values, resolved.slots, operation);
  // The range is Q_level's whatever the basis: over Q_level u P the integers must be encode's.
  // Rounding is monotone, so the largest product is the product of the largest: the check of every scaled
  // coefficient in one multiply (and an overflow to infinity is caught).
  require_in_range(u.largest * resolved.scale, *context_->q_basis(resolved.level), resolved.scale, resolved.level,
                   operation);
  return rounded(u.coefficients, resolved.scale);
}

ring::RnsPoly Encoder::poly_of(std::span<const detail::RoundedInteger> rounded, std::size_t gap,
                               const ring::RnsBasisPtr& basis) {
  // Each limb depends only on its own prime, so Q_level's limbs are the same words over any larger basis.
  ring::RnsPoly poly(basis, ring::PolyForm::coefficient);
  for (std::size_t i = 0; i < basis->size(); ++i) {
    const math::Modulus& q = basis->modulus(i);
    const std::span<std::uint32_t> limb = poly.limb(i);
    for (std::size_t k = 0; k < rounded.size(); ++k) limb[k * gap] = detail::residue(rounded[k], q);
    // Nonzero coefficients only every `gap`: the sparse transform gives to_ntt's words for N / gap times fewer
    // butterflies (a periodic slot vector encoded at its period, encode_periodic).
    math::ntt_forward_sparse(limb, basis->ntt(i), gap);
  }
  poly.set_form(ring::PolyForm::ntt);
  return poly;
}

std::size_t Encoder::unscaled_slots(std::span<const std::complex<double>> period, std::size_t slots,
                                    const char* operation) const {
  const std::size_t max_slots = context_->parameters().max_slots();
  if (slots == 0) slots = max_slots;
  require(std::has_single_bit(slots) && slots <= max_slots,
          "{}: {} slots; pass a power of two up to N/2 = {} (0 means N/2)", operation, slots, max_slots);
  require(std::has_single_bit(period.size()) && period.size() <= slots,
          "{}: a period of {} values for {} slots (a power of two up to the slots is needed)", operation,
          period.size(), slots);
  require_finite(period, operation);
  return slots;
}

UnscaledPlaintext Encoder::unscaled(std::span<const std::complex<double>> period, std::size_t slots) const {
  slots = unscaled_slots(period, slots, "unscaled");
  Transformed u = transform(period, period.size(), "unscaled");
  DeviceWords words(Device::cpu(), 2 * u.coefficients.size(), BufferInit::uninitialized);
  std::memcpy(words.data(), u.coefficients.data(), u.coefficients.size() * sizeof(double));
  return UnscaledPlaintext(context_, slots, period.size(), u.largest, std::move(words));
}

EncodeOptions Encoder::resolve(const UnscaledPlaintext& unscaled, const EncodeOptions& options) const {
  require<MismatchError>(!unscaled.empty(), "encode: the unscaled plaintext is empty (default-constructed or moved "
                                            "from)");
  require_same_context(context_, unscaled.context(), "encode");
  EncodeOptions with_slots = options;
  if (with_slots.slots == 0) with_slots.slots = unscaled.slots();
  const Resolved resolved = resolve(with_slots, 0, "encode");
  require(unscaled.period() <= resolved.slots,
          "encode: an unscaled plaintext of period {} cannot fill {} slots (EncodeOptions::slots, at least the "
          "period)",
          unscaled.period(), resolved.slots);
  // Rounding is monotone: the largest scaled coefficient is the largest one scaled.
  require_in_range(unscaled.largest() * resolved.scale, *context_->q_basis(resolved.level), resolved.scale,
                   resolved.level, "encode");
  return {.level = resolved.level, .scale = resolved.scale, .slots = resolved.slots};
}

ring::RnsPoly Encoder::unscaled_poly(const UnscaledPlaintext& unscaled, double scale, const ring::RnsBasisPtr& basis) {
  return poly_of(rounded(unscaled.host_coefficients(), scale), unscaled.gap(), basis);
}

Plaintext Encoder::encode(const UnscaledPlaintext& unscaled, const EncodeOptions& options) const {
  const EncodeOptions resolved = resolve(unscaled, options);  // checks the range
  return Plaintext(context_, unscaled_poly(unscaled, resolved.scale, context_->q_basis(resolved.level)),
                   resolved.level, resolved.scale, resolved.slots);
}

ring::RnsPoly Encoder::encode_extended(const UnscaledPlaintext& unscaled, const EncodeOptions& options) const {
  const EncodeOptions resolved = resolve(unscaled, options);  // checks the range
  return unscaled_poly(unscaled, resolved.scale, context_->qp_basis(resolved.level));
}

ring::RnsPoly Encoder::rounded_poly(std::span<const std::complex<double>> values, const Resolved& resolved,
                                    const ring::RnsBasisPtr& basis, const char* operation) const {
  // Coefficient k gap holds Re u_k, N/2 + k gap = (slots + k) gap holds Im u_k; all others are zero.
  const std::size_t gap = context_->ring_degree() / (2 * resolved.slots);
  return poly_of(rounded_coefficients(values, resolved, operation), gap, basis);
}

PeriodicPlaintext Encoder::encode_periodic_compressed(std::span<const std::complex<double>> period,
                                                      const EncodeOptions& options) const {
  const Resolved resolved = resolve(options, 0, "encode_periodic_compressed");
  require(std::has_single_bit(period.size()) && period.size() <= resolved.slots,
          "encode_periodic_compressed: a period of {} values for {} slots (a power of two up to the slots is needed)",
          period.size(), resolved.slots);
  const std::size_t p = period.size();
  const std::vector<detail::RoundedInteger> rounded =
      rounded_coefficients(period, {resolved.level, resolved.scale, p}, "encode_periodic_compressed");
  const ring::RnsBasis& basis = *context_->q_basis(resolved.level);
  PeriodicPlaintext out{.context = context_, .level = resolved.level, .scale = resolved.scale,
                        .slots = resolved.slots, .gap = context_->ring_degree() / (2 * p), .words = {}};
  out.words.resize(basis.size() * 2 * p);
  for (std::size_t i = 0; i < basis.size(); ++i) {
    const std::span<std::uint32_t> small(out.words.data() + i * 2 * p, 2 * p);
    for (std::size_t k = 0; k < 2 * p; ++k) small[k] = detail::residue(rounded[k], basis.modulus(i));
    math::ntt_forward_compressed(small, basis.ntt(i));
  }
  return out;
}

ring::RnsPoly Encoder::extend(const Plaintext& plaintext) const {
  require<MismatchError>(!plaintext.empty(), "extend: the plaintext is empty (default-constructed or moved from)");
  require_same_context(context_, plaintext.context(), "extend");
  const ring::RnsPoly& poly = plaintext.poly();
  require(poly.host_accessible(), "extend: the plaintext is in device memory; download it first "
                                  "(evaluator.download)");
  const int level = plaintext.level();
  const ring::RnsBasis& q = poly.basis();
  const ring::RnsBasisPtr& qp = context_->qp_basis(level);
  const std::size_t q_limbs = q.size(), n = poly.n();
  require<MismatchError>(q == *context_->q_basis(level), "extend: the plaintext's polynomial is over {}, not Q_{} = {}",
                         ring::describe(q), level, ring::describe(*context_->q_basis(level)));

  ring::RnsPoly out(qp, ring::PolyOptions{.form = ring::PolyForm::coefficient, .init = BufferInit::uninitialized});
  std::vector<std::vector<std::uint32_t>> coefficients(q_limbs);
  for (std::size_t i = 0; i < q_limbs; ++i) {
    const auto limb = poly.limb(i);
    coefficients[i].assign(limb.begin(), limb.end());
    if (poly.form() == ring::PolyForm::ntt) math::ntt_inverse(coefficients[i], q.ntt(i));
    std::copy(coefficients[i].begin(), coefficients[i].end(), out.limb(i).begin());
  }
  // Every limb: the centered integer is exact for any coefficient (it is below Q_level / 2 by definition).
  const detail::PrefixCrt crt(q, q_limbs);
  std::vector<std::uint32_t> products;  // Q_level mod each P prime
  for (std::size_t j = q_limbs; j < qp->size(); ++j) products.push_back(crt.product_mod(qp->modulus(j)));
  std::vector<std::uint32_t> residues(q_limbs), digits(q_limbs);
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t i = 0; i < q_limbs; ++i) residues[i] = coefficients[i][k];
    const bool negative = crt.mixed_radix(residues, digits);
    for (std::size_t j = q_limbs; j < qp->size(); ++j)
      out.limb(j)[k] = crt.centered_residue(digits, negative, qp->modulus(j), products[j - q_limbs]);
  }
  out.to_ntt();
  return out;
}

Plaintext Encoder::encode_constant(double value, const EncodeOptions& options) const {
  return encode_constant(std::complex<double>(value, 0.0), options);
}

Plaintext Encoder::encode_constant(std::complex<double> value, const EncodeOptions& options) const {
  const auto [level, scale, slots] = resolve(options, 1, "encode_constant");
  require(std::isfinite(value.real()) && std::isfinite(value.imag()), "encode_constant: value ({}, {}) is not finite",
          value.real(), value.imag());
  const double re = value.real() * scale, im = value.imag() * scale;
  const ring::RnsBasisPtr& basis = context_->q_basis(level);
  require_in_range(std::max(std::fabs(re), std::fabs(im)), *basis, scale, level, "encode_constant");
  const detail::RoundedInteger real_part = detail::round_exact(re), imag_part = detail::round_exact(im);

  if (imag_part.magnitude == 0) {
    // A constant polynomial evaluates to itself at every root of unity: its NTT form is the constant everywhere.
    ring::RnsPoly poly(basis, ring::PolyOptions{.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
    for (std::size_t i = 0; i < basis->size(); ++i) {
      const std::span<std::uint32_t> limb = poly.limb(i);
      std::fill(limb.begin(), limb.end(), detail::residue(real_part, basis->modulus(i)));
    }
    return Plaintext(context_, std::move(poly), level, scale, slots);
  }
  // X^(N/2) evaluates to i in every slot (special_fft.hpp), so the imaginary part sits at coefficient N/2.
  ring::RnsPoly poly(basis, ring::PolyForm::coefficient);
  const std::size_t half = context_->ring_degree() / 2;
  for (std::size_t i = 0; i < basis->size(); ++i) {
    const std::span<std::uint32_t> limb = poly.limb(i);
    limb[0] = detail::residue(real_part, basis->modulus(i));
    limb[half] = detail::residue(imag_part, basis->modulus(i));
  }
  poly.to_ntt();
  return Plaintext(context_, std::move(poly), level, scale, slots);
}

std::vector<std::complex<double>> Encoder::decode(const Plaintext& plaintext) const {
  require<MismatchError>(!plaintext.empty(), "decode: the plaintext is empty (default-constructed or moved from)");
  require_same_context(context_, plaintext.context(), "decode");
  const double scale = plaintext.scale();
  require(std::isfinite(scale) && scale > 0, "decode: the plaintext's scale {} is not positive and finite", scale);
  const std::size_t slots = plaintext.slots();
  const math::SpecialFftTables& tables = context_->fft(slots);
  const ring::RnsPoly& poly = plaintext.poly();
  const ring::RnsBasis& basis = poly.basis();

  // Only a prefix of the limbs is needed (64 bits of headroom over the scale), and only those go back to
  // coefficient form.
  const detail::PrefixCrt crt(basis, detail::PrefixCrt::limbs_for_bits(basis, std::log2(scale) + 64));
  const std::size_t limbs = crt.limbs();
  std::vector<std::vector<std::uint32_t>> coefficients(limbs);
  for (std::size_t i = 0; i < limbs; ++i) {
    const auto limb = poly.limb(i);
    coefficients[i].assign(limb.begin(), limb.end());
    if (poly.form() == ring::PolyForm::ntt) math::ntt_inverse(coefficients[i], basis.ntt(i));
  }

  const std::size_t half = context_->ring_degree() / 2;
  const std::size_t gap = tables.gap();
  std::vector<std::uint32_t> residues(limbs), digits(limbs);
  const auto coefficient_over_scale = [&](std::size_t position) {
    for (std::size_t i = 0; i < limbs; ++i) residues[i] = coefficients[i][position];
    return static_cast<double>(crt.centered(residues, digits) / static_cast<long double>(scale));
  };
  std::vector<std::complex<double>> u(slots);
  for (std::size_t k = 0; k < slots; ++k)
    u[k] = {coefficient_over_scale(k * gap), coefficient_over_scale(half + k * gap)};
  math::special_fft(u, tables);
  return u;
}

std::vector<double> Encoder::decode_real(const Plaintext& plaintext) const {
  const auto values = decode(plaintext);
  std::vector<double> real(values.size());
  std::transform(values.begin(), values.end(), real.begin(), [](const std::complex<double>& v) { return v.real(); });
  return real;
}

}  // namespace cerium::ckks
