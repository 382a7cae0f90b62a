#include <algorithm>
#include <bit>
#include <vector>

#include "cerium/backend/cuda/basis_conversion.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/backend/cuda/upload.hpp"
#include "cerium/core/check.hpp"

namespace cerium::cuda {

using math::u32;

namespace {

constexpr u32 no_copy = ~0u;

// The host form of a conversion's tables, before upload.
struct HostTables {
  std::vector<detail::ConversionSource> sources;
  std::vector<detail::ConversionTarget> targets;
  std::vector<u32> q_hat_mod;
};

// Sources and targets of the fast conversion from -> to with the CRT constants ring::BasisConverter uses:
// [Q_i^{-1}]_{q_i} from the basis itself, [Q_i]_{p_j} row by row. in_limb / out_limb default to the positions.
HostTables conversion_tables(const ring::RnsBasis& from, const ring::RnsBasis& to) {
  require<MismatchError>(from.ring_degree() == to.ring_degree(), "basis conversion between ring degrees {} and {}",
                         from.ring_degree(), to.ring_degree());
  require(from.ring_degree() >= 4, "the conversion kernels need N >= 4, not {}", from.ring_degree());
  require(from.size() <= detail::conversion_max_sources, "the GPU basis conversion takes at most {} source primes, not {}",
          detail::conversion_max_sources, from.size());
  HostTables t;
  for (std::size_t i = 0; i < from.size(); ++i) {
    const math::ShoupConstant c = from.q_hat_inverse(i);
    detail::ConversionSource s;
    s.modulus = from.prime(i);
    s.q_hat_inv = c.value;
    s.q_hat_inv_shoup = c.quotient;
    s.in_limb = static_cast<u32>(i);
    s.copy_to = no_copy;
    t.sources.push_back(s);
  }
  for (std::size_t j = 0; j < to.size(); ++j) {
    detail::ConversionTarget target;
    target.modulus = to.modulus(j);
    target.two32_mod = static_cast<u32>((std::uint64_t{1} << 32) % to.prime(j));
    target.out_limb = static_cast<u32>(j);
    t.targets.push_back(target);
    const auto row = from.q_hat_mod(to.modulus(j));
    t.q_hat_mod.insert(t.q_hat_mod.end(), row.begin(), row.end());
  }
  return t;
}

ConversionTables upload(const HostTables& host, std::size_t n, const Stream& stream) {
  ConversionTables t;
  t.n = n;
  t.log_n = std::countr_zero(n);
  t.sources = host.sources.size();
  t.targets = host.targets.size();
  t.source_table = upload_table<detail::ConversionSource>(host.sources, stream);
  t.target_table = upload_table<detail::ConversionTarget>(host.targets, stream);
  t.q_hat_mod = upload_table<u32>(host.q_hat_mod, stream);
  return t;
}

// A batch of polynomials: in and out `batch` times, t.sources and t.targets limbs apart.
struct Batch {
  std::size_t count = 1;
  std::size_t in_limbs = 0;
  std::size_t out_limbs = 0;
};

void launch(const ConversionTables& t, detail::ConversionEpilogue epilogue, bool copy_sources, const u32* in, u32* out,
            const Stream& stream, const u32* copy_in = nullptr, Batch batch = {},
            const detail::ConversionLaunch* extra = nullptr) {
  require(in != nullptr && out != nullptr, "basis conversion on a null device pointer");
  detail::ConversionLaunch args;
  args.epilogue = epilogue;
  args.in = in;
  args.out = out;
  args.sources = table_data<detail::ConversionSource>(t.source_table);
  args.targets = table_data<detail::ConversionTarget>(t.target_table);
  args.q_hat_mod = t.q_hat_mod.data();
  args.source_count = t.sources;
  args.target_count = t.targets;
  args.copy_sources = copy_sources;
  args.copy_in = copy_in;
  args.batch = batch.count;
  args.in_stride = batch.in_limbs * t.n;
  args.out_stride = batch.out_limbs * t.n;
  if (extra != nullptr) {  // mod_down_rescale's inputs
    args.x_dropped = extra->x_dropped;
    args.x_dropped_stride = extra->x_dropped_stride;
    args.rescale = extra->rescale;
  }
  args.log_degree = t.log_n;
  args.stream = stream.native_handle();
  detail::launch_conversion(args);
}

std::size_t position_in(const ring::RnsBasis& basis, u32 q, const char* what) {
  const auto index = basis.index_of(q);
  require<MismatchError>(index.has_value(), "{}: prime {} is missing from {}", what, q, ring::describe(basis));
  return *index;
}

// [(P - 1) / 2]_m for odd P, as ring::ModDown computes it: ([P]_m - 1) 2^{-1} mod m.
u32 half_mod(u32 p_mod, const math::Modulus& m) {
  return math::mul_mod(math::sub_mod(p_mod, 1 % m.value, m.value), (m.value + 1) / 2, m);
}

// The tables of ModDown from full to kept: sources are the dropped primes (shifted by h for nearest rounding),
// read at their positions in full; targets the kept primes with x's position in full and [P^{-1}]_{q_i}.
HostTables mod_down_tables(const ring::RnsBasis& full, const ring::RnsBasis& kept, ring::Rounding rounding) {
  require<MismatchError>(full.ring_degree() == kept.ring_degree(), "ModDown between ring degrees {} and {}",
                         full.ring_degree(), kept.ring_degree());
  const auto dropped = full.without(kept);
  require(dropped.has_value(), "ModDown from {} to {}: no prime to divide by", ring::describe(full),
          ring::describe(kept));
  const bool nearest = rounding == ring::Rounding::nearest;
  HostTables host = conversion_tables(*dropped, kept);
  for (std::size_t j = 0; j < host.sources.size(); ++j) {
    const math::Modulus& m = dropped->modulus(j);
    host.sources[j].in_limb = static_cast<u32>(position_in(full, dropped->prime(j), "ModDown full basis"));
    host.sources[j].shift = nearest ? half_mod(0, m) : 0;
  }
  for (std::size_t i = 0; i < host.targets.size(); ++i) {
    const math::Modulus& m = kept.modulus(i);
    const u32 p_mod = dropped->product_mod(m);
    auto& t = host.targets[i];
    t.x_limb = static_cast<u32>(position_in(full, kept.prime(i), "ModDown full basis"));
    t.shift = nearest ? ring::mod_down_kept_offset(p_mod, dropped->size(), m) : 0;
    t.p_inv = static_cast<u32>(math::inv_mod(p_mod, m.value));
    t.p_inv_shoup = math::shoup_quotient(t.p_inv, m.value);
  }
  return host;
}

}  // namespace

// --- BasisConversionPlan ---

BasisConversionPlan::BasisConversionPlan(const ring::RnsBasis& from, const ring::RnsBasis& to, Stream stream)
    : tables_(upload(conversion_tables(from, to), from.ring_degree(), stream)) {}

void BasisConversionPlan::convert(const u32* in, u32* out, const Stream& stream) const {
  launch(tables_, detail::ConversionEpilogue::store, false, in, out, stream);
}

// --- ModUpPlan ---

ModUpPlan::ModUpPlan(const ring::RnsBasis& digit, const ring::RnsBasis& target, Stream stream)
    : target_limbs_(target.size()) {
  require<MismatchError>(digit.ring_degree() == target.ring_degree(), "ModUp between ring degrees {} and {}",
                         digit.ring_degree(), target.ring_degree());
  std::vector<std::size_t> copy_to;
  for (auto q : digit.primes()) copy_to.push_back(position_in(target, q, "ModUp target"));
  const auto complement = target.without(digit);
  // With nothing to convert, the kernel still runs for the copies: a one-prime stand-in basis with no targets.
  HostTables host = complement ? conversion_tables(digit, *complement) : conversion_tables(digit, digit);
  if (!complement) {
    host.targets.clear();
    host.q_hat_mod.clear();
  }
  for (std::size_t i = 0; i < host.sources.size(); ++i) host.sources[i].copy_to = static_cast<u32>(copy_to[i]);
  if (complement) {
    for (std::size_t j = 0; j < host.targets.size(); ++j)
      host.targets[j].out_limb = static_cast<u32>(position_in(target, complement->prime(j), "ModUp target"));
  }
  tables_ = upload(host, digit.ring_degree(), stream);
}

void ModUpPlan::apply(const u32* in, u32* out, const Stream& stream, const u32* copy_from) const {
  launch(tables_, detail::ConversionEpilogue::store, true, in, out, stream, copy_from);
}

void apply_mod_up_digits(std::span<const ModUpPlan* const> plans, std::span<const u32* const> in,
                         std::span<u32* const> out, std::span<const u32* const> copy_from, const Stream& stream) {
  require(in.size() == plans.size() && out.size() == plans.size() && copy_from.size() == plans.size(),
          "ModUp of {} digits with {} inputs, {} outputs and {} copy sources", plans.size(), in.size(), out.size(),
          copy_from.size());
  bool fits = true;
  for (const ModUpPlan* plan : plans) {
    require(plan != nullptr, "ModUp of a null digit plan");
    fits = fits && plan->tables_.sources <= detail::conversion_parts_max_sources && plan->tables_.n == plans[0]->tables_.n;
  }
  if (!fits) {  // digits too wide for the register form: one launch each
    for (std::size_t d = 0; d < plans.size(); ++d) plans[d]->apply(in[d], out[d], stream, copy_from[d]);
    return;
  }
  for (std::size_t first = 0; first < plans.size(); first += detail::conversion_max_parts) {
    detail::ConversionParts parts;
    parts.count = std::min(detail::conversion_max_parts, plans.size() - first);
    for (std::size_t p = 0; p < parts.count; ++p) {
      const std::size_t d = first + p;
      const ConversionTables& t = plans[d]->tables_;
      require(in[d] != nullptr && out[d] != nullptr, "ModUp of digit {} on a null device pointer", d);
      parts.part[p] = detail::ConversionPart{.in = in[d],
                                             .copy_in = copy_from[d],
                                             .out = out[d],
                                             .sources = table_data<detail::ConversionSource>(t.source_table),
                                             .targets = table_data<detail::ConversionTarget>(t.target_table),
                                             .q_hat_mod = t.q_hat_mod.data(),
                                             .source_count = static_cast<u32>(t.sources),
                                             .target_count = static_cast<u32>(t.targets)};
    }
    detail::ConversionLaunch args;
    args.epilogue = detail::ConversionEpilogue::store;
    args.copy_sources = true;
    args.log_degree = plans[0]->tables_.log_n;
    args.stream = stream.native_handle();
    detail::launch_conversion_parts(args, parts);
  }
}

// --- ModDownPlan ---

ModDownPlan::ModDownPlan(const ring::RnsBasis& full, const ring::RnsBasis& kept, ring::Rounding rounding,
                         Stream stream)
    : tables_(upload(mod_down_tables(full, kept, rounding), full.ring_degree(), stream)) {}

void ModDownPlan::apply(const u32* in, u32* out, const Stream& stream) const {
  launch(tables_, detail::ConversionEpilogue::mod_down, false, in, out, stream);
}

// --- ModDownCorrectionPlan ---

ModDownCorrectionPlan::ModDownCorrectionPlan(const ring::RnsBasis& full, const ring::RnsBasis& kept,
                                             ring::Rounding rounding, Stream stream) {
  HostTables host = mod_down_tables(full, kept, rounding);
  // The dropped limbs arrive on their own, in order: source j is limb j of the input.
  for (std::size_t j = 0; j < host.sources.size(); ++j) host.sources[j].in_limb = static_cast<u32>(j);
  std::vector<u32> p_inverse;
  for (const auto& t : host.targets) p_inverse.push_back(t.p_inv);
  tables_ = upload(host, full.ring_degree(), stream);
  p_inverse_ = DeviceScalars(kept, p_inverse, stream);
}

namespace {
// Limbs from one polynomial of a batch's input to the next: stride words, a whole number of limbs and at least
// `limbs` of them, or `limbs` (consecutive) for a stride of 0.
std::size_t stride_limbs(std::size_t stride, std::size_t n, std::size_t limbs, const char* what) {
  require(stride % n == 0, "{}: a stride of {} words is not whole limbs of N = {}; pass a multiple of N", what, stride,
          n);
  require(stride == 0 || stride >= limbs * n,
          "{}: polynomials {} words apart cannot hold their {} limbs of N = {}; pass at least {} words, or 0 for "
          "consecutive polynomials",
          what, stride, limbs, n, limbs * n);
  return stride == 0 ? limbs : stride / n;
}
}  // namespace

void ModDownCorrectionPlan::apply(const u32* dropped_coefficients, u32* corrections, const Stream& stream,
                                  std::size_t batch, std::size_t in_stride) const {
  const std::size_t in_limbs = stride_limbs(in_stride, tables_.n, tables_.sources, "ModDown corrections");
  launch(tables_, detail::ConversionEpilogue::mod_down_shift, false, dropped_coefficients, corrections, stream, nullptr,
         Batch{.count = batch, .in_limbs = in_limbs, .out_limbs = tables_.targets});
}

void ModDownCorrectionPlan::apply_rescaled(const RescaledInputs& inputs, u32* corrections, const RescalePlan& rescale,
                                           const DeviceScalars& factors, const Stream& stream) const {
  const std::size_t n = tables_.n;
  require(rescale.limbs() == tables_.targets && rescale.degree() == n,
          "ModDown with a rescale: the rescale is over {} limbs of N = {}, the ModDown keeps {} of N = {}",
          rescale.limbs(), rescale.degree(), tables_.targets, n);
  require(factors.size() == rescale.kept() && factors.device_data() != nullptr,
          "ModDown with a rescale: {} device factors for {} kept limbs", factors.size(), rescale.kept());
  require(tables_.sources <= detail::conversion_parts_max_sources,
          "ModDown with a rescale drops at most {} primes in one pass, not {}", detail::conversion_parts_max_sources,
          tables_.sources);
  require(inputs.dropped_coefficients != nullptr && inputs.x_dropped != nullptr,
          "ModDown with a rescale on a null device pointer");
  const char* what = "ModDown with a rescale";
  const std::size_t in_limbs = stride_limbs(inputs.in_stride, n, tables_.sources, what);
  const std::size_t x_limbs = stride_limbs(inputs.x_stride, n, rescale.config().dropped, what);
  detail::ConversionLaunch extra;
  extra.x_dropped = inputs.x_dropped;
  extra.x_dropped_stride = x_limbs * n;
  extra.rescale = detail::ConversionRescale{.kept = static_cast<u32>(rescale.kept()),
                                            .remainder = rescale.remainder_constants(),
                                            .constants = rescale.device_constants(),
                                            .factors = static_cast<const u32*>(factors.device_data())};
  launch(tables_, detail::ConversionEpilogue::mod_down_rescale, false, inputs.dropped_coefficients, corrections,
         stream, nullptr,
         Batch{.count = inputs.batch, .in_limbs = in_limbs, .out_limbs = tables_.targets},
         &extra);
}

}  // namespace cerium::cuda
