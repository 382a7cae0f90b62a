#include <cstring>
#include <utility>
#include <vector>

#include "cerium/backend/cuda/ntt.hpp"
#include "cerium/backend/cuda/ntt_launch.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/core/check.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/math/ntt_row_twist.hpp"

namespace cerium::cuda {

namespace {
// The kernels read (w, w_shoup) as one 8-byte load: interleave the CPU's two tables.
void append_pairs(std::vector<std::uint32_t>& out, std::span<const std::uint32_t> w,
                  std::span<const std::uint32_t> w_shoup) {
  for (std::size_t k = 0; k < w.size(); ++k) {
    out.push_back(w[k]);
    out.push_back(w_shoup[k]);
  }
}

void append_pairs(std::vector<std::uint32_t>& out, std::span<const math::ShoupConstant> constants) {
  for (const auto& c : constants) {
    out.push_back(c.value);
    out.push_back(c.quotient);
  }
}

bool two_pass(int log_n) { return log_n > detail::ntt_max_single_log_degree; }

detail::NttLimbConstants limb_constants(const math::NttTables& tables) {
  const std::uint32_t q = tables.modulus();
  const math::ShoupConstant n_inv = tables.inverse_degree();
  // The inverse's last stage (h = 1) uses the single twiddle inverse_twiddles()[1] = psi^{-N/2}.
  const auto last = static_cast<std::uint32_t>(static_cast<std::uint64_t>(tables.inverse_twiddles()[1]) *
                                               n_inv.value % q);
  detail::NttLimbConstants c;
  c.modulus = q;
  c.n_inv = n_inv.value;
  c.n_inv_shoup = n_inv.quotient;
  c.last_twiddle = last;
  c.last_twiddle_shoup = math::shoup_quotient(last, q);
  return c;
}
}  // namespace

NttPlan::NttPlan(std::span<const math::NttTables> tables, Stream stream) {
  require(!tables.empty(), "an NTT plan needs at least one table");
  n_ = tables[0].degree();
  log_n_ = tables[0].log_degree();
  limbs_ = tables.size();
  require(log_n_ >= detail::ntt_min_log_degree && log_n_ <= detail::ntt_max_log_degree,
          "the GPU NTT supports N = 2^{} .. 2^{}, not N = {}", detail::ntt_min_log_degree,
          detail::ntt_max_log_degree, n_);
  std::vector<std::uint32_t> forward, inverse;
  forward.reserve(2 * n_ * limbs_);
  inverse.reserve(2 * n_ * limbs_);
  std::vector<detail::NttLimbConstants> constants;
  std::vector<std::uint32_t> forward_twists, inverse_twists;
  const math::NttRowSplit split{detail::ntt_row_log, detail::ntt_row_direct_stages};
  for (std::size_t i = 0; i < limbs_; ++i) {
    require(tables[i].degree() == n_, "NTT table {} has degree {}, table 0 has {}: one plan needs one degree", i,
            tables[i].degree(), n_);
    append_pairs(forward, tables[i].forward_twiddles(), tables[i].forward_twiddles_shoup());
    append_pairs(inverse, tables[i].inverse_twiddles(), tables[i].inverse_twiddles_shoup());
    constants.push_back(limb_constants(tables[i]));
    if (two_pass(log_n_)) {
      append_pairs(forward_twists, math::ntt_row_twists(tables[i], split, false));
      append_pairs(inverse_twists, math::ntt_row_twists(tables[i], split, true));
    }
  }
  std::vector<std::uint32_t> constant_words(constants.size() * sizeof(detail::NttLimbConstants) / 4);
  std::memcpy(constant_words.data(), constants.data(), constant_words.size() * 4);

  forward_twiddles_ = DeviceBuffer(forward.size(), stream);
  inverse_twiddles_ = DeviceBuffer(inverse.size(), stream);
  constants_ = DeviceBuffer(constant_words.size(), stream);
  forward_twiddles_.upload(forward);
  inverse_twiddles_.upload(inverse);
  constants_.upload(constant_words);
  if (two_pass(log_n_)) {
    forward_twists_ = DeviceBuffer(forward_twists.size(), stream);
    inverse_twists_ = DeviceBuffer(inverse_twists.size(), stream);
    forward_twists_.upload(forward_twists);
    inverse_twists_.upload(inverse_twists);
  }
}

int NttPlan::passes() const { return detail::ntt_pass_count(log_n_); }

const std::uint32_t* NttPlan::forward_twiddle_pairs(std::size_t table) const {
  require(table < limbs_, "forward twiddles of table {}: the plan has {}", table, limbs_);
  return forward_twiddles_.data() + 2 * table * n_;
}

void NttPlan::check_range(std::size_t first_table, std::size_t limbs) const {
  require(first_table <= limbs_ && limbs <= limbs_ - first_table,
          "NTT of {} limbs from table {} exceeds the plan's {} tables", limbs, first_table, limbs_);
}

void NttPlan::check_map(const NttTableMap& map, std::size_t limbs) const {
  const std::size_t period = map.period == 0 ? limbs : map.period;
  require(period != 0 && limbs % period == 0, "an NTT batch of {} limbs is not a whole number of {}-limb polynomials",
          limbs, period);
  // The highest table used: the last local limb's.
  const std::size_t last = period - 1;
  const std::size_t highest = map.first_table + (last < map.split ? last : last + map.shift);
  require(highest < limbs_ && map.first_table < limbs_, "an NTT batch reaches table {}; the plan has {}", highest,
          limbs_);
}

namespace {
detail::NttLaunch make_launch(std::uint32_t* data, const DeviceBuffer& twiddles, const DeviceBuffer& twists,
                              const DeviceBuffer& constants, std::size_t first_table, std::size_t limbs, std::size_t n,
                              int log_n, const Stream& stream) {
  detail::NttLaunch launch;
  launch.data = data;
  launch.twiddles = twiddles.data() + 2 * n * first_table;
  if (two_pass(log_n)) launch.twists = twists.data() + 2 * detail::ntt_twists_per_limb(n) * first_table;
  launch.constants = reinterpret_cast<const detail::NttLimbConstants*>(constants.data()) + first_table;
  launch.log_degree = log_n;
  launch.limbs = limbs;
  launch.stream = stream.native_handle();
  return launch;
}
}  // namespace

void NttPlan::forward(std::uint32_t* device_data, std::size_t first_table, std::size_t limbs,
                      const Stream& stream) const {
  check_range(first_table, limbs);
  if (limbs == 0) return;
  require(device_data != nullptr, "NTT of {} limbs on a null device pointer", limbs);
  detail::launch_ntt_forward(
      make_launch(device_data, forward_twiddles_, forward_twists_, constants_, first_table, limbs, n_, log_n_, stream));
}

void NttPlan::inverse(std::uint32_t* device_data, std::size_t first_table, std::size_t limbs,
                      const Stream& stream) const {
  check_range(first_table, limbs);
  if (limbs == 0) return;
  require(device_data != nullptr, "inverse NTT of {} limbs on a null device pointer", limbs);
  detail::launch_ntt_inverse(
      make_launch(device_data, inverse_twiddles_, inverse_twists_, constants_, first_table, limbs, n_, log_n_, stream));
}

void NttPlan::forward(DeviceBuffer& data, std::size_t limbs) const {
  require(limbs <= data.size() / n_, "NTT of {} limbs of N = {} on a device buffer of {} words", limbs, n_,
          data.size());
  forward(data.data(), 0, limbs, data.stream());
}

void NttPlan::inverse(DeviceBuffer& data, std::size_t limbs) const {
  require(limbs <= data.size() / n_, "inverse NTT of {} limbs of N = {} on a device buffer of {} words", limbs, n_,
          data.size());
  inverse(data.data(), 0, limbs, data.stream());
}

detail::NttLaunch NttPlan::batch_launch(std::uint32_t* device_data, const NttTableMap& map, std::size_t limbs,
                                        bool forward, const Stream& stream, const NttBatchLayout& layout) const {
  check_map(map, limbs);
  const std::size_t period = map.period == 0 ? limbs : map.period;
  for (const std::size_t stride : {layout.poly_stride, layout.source_stride}) {
    require(stride == 0 || stride >= period * n_,
            "an NTT batch of {}-limb polynomials {} words apart: they would overlap (N = {})", period, stride, n_);
  }
  require(device_data != nullptr, "NTT of {} limbs on a null device pointer", limbs);
  auto launch = make_launch(device_data, forward ? forward_twiddles_ : inverse_twiddles_,
                            forward ? forward_twists_ : inverse_twists_, constants_, map.first_table,
                            limbs, n_, log_n_, stream);
  launch.period = map.period;
  launch.split = map.split;
  launch.shift = map.shift;
  launch.skip_stride = map.skip_stride;
  launch.skip_width = map.skip_width;
  launch.skip_limit = map.skip_limit;
  launch.poly_stride = layout.poly_stride;
  launch.source = layout.source;
  launch.source_stride = layout.source_stride;
  return launch;
}

void NttPlan::forward(std::uint32_t* device_data, const NttTableMap& map, std::size_t limbs, const Stream& stream,
                      const detail::NttFinish* finish, const NttBatchLayout& layout) const {
  if (limbs == 0) return;
  auto launch = batch_launch(device_data, map, limbs, true, stream, layout);
  if (finish != nullptr) {
    require(finish->minuend != nullptr && finish->out != nullptr && finish->scale != nullptr,
            "an NTT finish needs its minuend, output and scale on the device");
    launch.finish = finish;
  }
  detail::launch_ntt_forward(launch);
}

void NttPlan::forward_inner_product(std::uint32_t* device_data, const NttTableMap& map, std::size_t limbs,
                                    const Stream& stream, const detail::InnerProductLaunch& inner_product,
                                    const NttBatchLayout& layout) const {
  const std::size_t digits = inner_product.digit_count;
  require(digits >= 1 && digits <= 4 && map.period != 0 && limbs == digits * map.period,
          "an NTT fused with the key-switch inner product takes 1 to 4 digits of period limbs each; got {} limbs "
          "of period {} for {} digits",
          limbs, map.period, digits);
  require(inner_product.limbs == map.period && inner_product.log_degree == log_n_,
          "the key-switch inner product is over {} limbs of N = 2^{}, the NTT batch over {} limbs of N = 2^{}",
          inner_product.limbs, inner_product.log_degree, map.period, log_n_);
  require(inner_product.permutation == nullptr, "an NTT fused with the inner product applies no automorphism");
  auto launch = batch_launch(device_data, map, limbs, true, stream, layout);
  launch.inner_product = &inner_product;
  detail::launch_ntt_forward(launch);
}

void NttPlan::inverse(std::uint32_t* device_data, const NttTableMap& map, std::size_t limbs, const Stream& stream,
                      const NttBatchLayout& layout) const {
  if (limbs != 0) detail::launch_ntt_inverse(batch_launch(device_data, map, limbs, false, stream, layout));
}

}  // namespace cerium::cuda
