#pragma once
// The negacyclic NTT on the GPU, batched over the limbs of an RNS polynomial. It computes exactly the words of
// math::ntt_forward / math::ntt_inverse (both reduce fully at the end, so any correct transform agrees).
// Public for microbenchmarks and for code that holds its own device words; the CKKS evaluator reaches it through
// backend::CudaBackend. The other plans and the kernel launchers are internal (src/backend/cuda/include).

#include <cstddef>
#include <cstdint>
#include <span>

#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/math/ntt.hpp"

namespace cerium::cuda {

// The kernels' launch records (src/backend/cuda/include/cerium/backend/cuda/ntt_launch.hpp, not installed): only
// the backend's fused passes name them.
namespace detail {
struct NttFinish;
struct NttLaunch;
struct InnerProductLaunch;
}  // namespace detail

// Twiddles (with their Shoup quotients) of one NTT table per limb, uploaded to the device once. A polynomial of
// `limbs` limbs is laid out limb-major (limb i at words [i N, (i+1) N)) and transformed with tables 0 .. limbs-1.
// Which tables a batch of polynomials uses: local limb l of each polynomial (period limbs each) uses table
// first_table + l for l < split and first_table + l + shift beyond.
struct NttTableMap {
  std::size_t first_table = 0;          // the table of local limb 0
  std::size_t period = 0;               // 0: one polynomial, all the limbs
  std::size_t split = ~std::size_t{0};  // local limbs from split on skip `shift` tables (default: none do)
  std::size_t shift = 0;                // tables skipped there (e.g. Q's above Q_l, to reach P's)
  // Limbs left untouched (see detail::NttLaunch): in polynomial b, local limbs [b skip_stride,
  // min(b skip_stride + skip_width, skip_limit)).
  std::size_t skip_stride = 0;
  std::size_t skip_width = 0;
  std::size_t skip_limit = 0;
};

// Where a batch lies (see detail::NttLaunch): polynomial b at data + b poly_stride words (0: consecutive), and
// optionally a source that the transform reads instead of data, polynomial b at source + b source_stride (0:
// consecutive); data receives the result, the source is left as it was.
struct NttBatchLayout {
  std::size_t poly_stride = 0;            // words between polynomials of data (0: consecutive)
  const std::uint32_t* source = nullptr;  // null: the transform reads data
  std::size_t source_stride = 0;          // words between polynomials of source (0: consecutive)
};

// Twiddle tables of one degree N, one per prime, on the device, and the batched transforms over them.
class NttPlan {
 public:
  // tables: one per limb, all of one degree N with 2^10 <= N <= 2^17. Throws InvalidArgument otherwise,
  // OutOfMemoryError or DeviceError when the upload fails. Uploads on `stream` and waits for it.
  explicit NttPlan(std::span<const math::NttTables> tables, Stream stream = {});

  std::size_t degree() const { return n_; }     // N
  int log_degree() const { return log_n_; }     // log2(N)
  std::size_t limbs() const { return limbs_; }  // tables: one per prime given
  // Passes over global memory per transform (1 for N <= 2^13, 2 above): what a bandwidth estimate counts.
  int passes() const;
  // The forward twiddle pairs (w, w_shoup) of tables [table, limbs) on the device, N pairs a table: for kernels
  // that run some of the transform's stages themselves (the encoding of sparse plaintexts).
  const std::uint32_t* forward_twiddle_pairs(std::size_t table) const;

  // In place on limbs [0, limbs) of data, queued on data's stream (no host wait). Inputs below 2q, outputs
  // fully reduced. Throws InvalidArgument when limbs exceeds the plan or data holds fewer than limbs x N words.
  void forward(DeviceBuffer& data, std::size_t limbs) const;
  void inverse(DeviceBuffer& data, std::size_t limbs) const;

  // The same on raw device memory with tables [first_table, first_table + limbs), queued on stream: for
  // callers that hold polynomials inside larger buffers or transform a sub-basis.
  void forward(std::uint32_t* device_data, std::size_t first_table, std::size_t limbs, const Stream& stream) const;
  void inverse(std::uint32_t* device_data, std::size_t first_table, std::size_t limbs, const Stream& stream) const;
  // The same over a batch: limbs is a whole number of periods; the tables follow `map`.
  // With `finish`, the last pass writes (finish->minuend - NTT) s (+ addend) to finish->out instead (see
  // detail::NttFinish; its scale table holds map.period pairs) and device_data keeps its input.
  void forward(std::uint32_t* device_data, const NttTableMap& map, std::size_t limbs, const Stream& stream,
               const detail::NttFinish* finish = nullptr, const NttBatchLayout& layout = {}) const;
  void inverse(std::uint32_t* device_data, const NttTableMap& map, std::size_t limbs, const Stream& stream,
               const NttBatchLayout& layout = {}) const;
  // The forward transform of a ModUp's digits (one per map.period, consecutive unless layout says otherwise,
  // map's skip range naming each digit's own limbs) whose last pass sums them with the key instead of storing
  // them: inner_product's out0 / out1 receive the inner product (detail::NttLaunch::inner_product), device_data
  // keeps the first pass's output. At most 4 digits, limbs = digits x period.
  void forward_inner_product(std::uint32_t* device_data, const NttTableMap& map, std::size_t limbs,
                             const Stream& stream, const detail::InnerProductLaunch& inner_product,
                             const NttBatchLayout& layout = {}) const;

 private:
  void check_range(std::size_t first_table, std::size_t limbs) const;
  void check_map(const NttTableMap& map, std::size_t limbs) const;
  detail::NttLaunch batch_launch(std::uint32_t* device_data, const NttTableMap& map, std::size_t limbs, bool forward,
                                 const Stream& stream, const NttBatchLayout& layout) const;

  std::size_t n_ = 0;
  int log_n_ = 0;
  std::size_t limbs_ = 0;
  DeviceBuffer forward_twiddles_;  // limbs x N pairs (w, w_shoup)
  DeviceBuffer inverse_twiddles_;  // limbs x N pairs (w, w_shoup)
  DeviceBuffer forward_twists_;    // two-pass degrees: limbs x N / 8 pairs (math::ntt_row_twists)
  DeviceBuffer inverse_twists_;
  DeviceBuffer constants_;         // limbs x detail::NttLimbConstants
};

}  // namespace cerium::cuda
