#include "cerium/backend/cuda_backend.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/memory.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/core/check.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/rlwe/uniform_stream.hpp"
#include "cuda_backend_state.hpp"

namespace cerium::backend {
namespace {

using math::u32;

cudaStream_t native(const cuda::Stream& stream) { return static_cast<cudaStream_t>(stream.native_handle()); }

std::string placement(const ring::RnsPoly& x) {
  std::string out;
  for (const auto& s : x.shards()) out += (out.empty() ? "" : ", ") + to_string(s.device());
  return out;
}

void require_ntt(const ring::RnsPoly& x, const char* operation) {
  require<MismatchError>(x.form() == ring::PolyForm::ntt, "{}: the operand is in {} form; products are pointwise only in NTT form",
                         operation, ring::to_string(x.form()));
}

// Device scalars with their Shoup quotients, reduced modulo each limb's prime.
cuda::DeviceScalars scalars_for(const ring::RnsBasis& basis, std::span<const u32> per_limb, const cuda::Stream& stream,
                                const char* operation) {
  require(per_limb.size() == basis.size(), "{}: {} scalars for a polynomial of {} limbs", operation, per_limb.size(),
          basis.size());
  for (std::size_t i = 0; i < per_limb.size(); ++i) {
    require(per_limb[i] < basis.prime(i), "{}: scalar {} for limb {} is not reduced modulo {}", operation, per_limb[i],
            i, basis.prime(i));
  }
  (void)stream;
  return cuda::DeviceScalars::by_value(basis, per_limb);
}

void copy_words(u32* dst, const u32* src, std::size_t words, const cuda::Stream& stream) {
  if (words == 0) return;
  CERIUM_CUDA_CHECK(cudaMemcpyAsync(dst, src, words * sizeof(u32), cudaMemcpyDeviceToDevice, native(stream)));
}

}  // namespace

// --- construction and placement ---

CudaBackend::CudaBackend(rlwe::ContextPtr context, CudaBackendOptions options) : state_(std::make_shared<State>()) {
  require(context != nullptr, "the CUDA backend needs a context");
  cuda::install_memory_hooks();
  State& s = *state_;
  s.context = std::move(context);
  s.device = Device::cuda(options.device);
  s.stream = cuda::work_stream(options.device);
  s.n = s.context->ring_degree();
  require<UnsupportedError>(s.n >= 1024, "the CUDA backend's NTT runs for N >= 2^10; this context has N = {}", s.n);
  const auto& key_basis = *s.context->key_basis();
  std::vector<math::NttTables> tables;
  for (std::size_t i = 0; i < key_basis.size(); ++i) {
    tables.push_back(key_basis.ntt(i));
    s.table_of_prime.emplace(key_basis.prime(i), i);
  }
  s.ntt = std::make_unique<cuda::NttPlan>(tables);
}

Device CudaBackend::device() const { return state_->device; }
const rlwe::ContextPtr& CudaBackend::context() const { return state_->context; }
void CudaBackend::synchronize() const { state_->stream.synchronize(); }
const cuda::Stream& CudaBackend::work_stream() const { return state_->stream; }

cuda::Graph CudaBackend::capture(const std::function<void()>& work) const {
  cuda::release_unused_memory(state_->device.index);
  return cuda::Graph::capture(state_->stream, work);
}

namespace {

// The device words of a polynomial this backend computes on; a clear error for anything else.
u32* words(const CudaBackend& backend, const ring::RnsPoly& x, const char* operation) {
  require<MismatchError>(!x.empty(), "{}: the polynomial is empty", operation);
  require<UnsupportedError>(x.shards().size() == 1 && x.shards()[0].device() == backend.device(),
                            "{}: the polynomial is on {}, and this CUDA backend computes on {}; upload it first "
                            "(evaluator.upload, or CudaBackend::upload){}",
                            operation, placement(x), to_string(backend.device()),
                            x.shards().size() > 1 ? " (polynomials sharded over several devices are not supported "
                                                    "by the single-device CUDA backend)"
                                                  : "");
  return const_cast<u32*>(x.shards()[0].data());
}

}  // namespace

ring::RnsPoly CudaBackend::allocate(const ring::RnsBasisPtr& basis, ring::PolyOptions options) const {
  require(basis != nullptr, "allocate: no basis given");
  options.shards = {{state_->device, basis->size()}};
  return ring::RnsPoly(basis, std::move(options));
}

void CudaBackend::copy_into(ring::RnsPoly& x, const ring::RnsPoly& y) const {
  require<MismatchError>(x.limb_count() == y.limb_count() && x.n() == y.n(),
                         "copy_into: {} limbs of degree {} into {} limbs of degree {}", y.limb_count(), y.n(),
                         x.limb_count(), x.n());
  copy_words(words(*this, x, "copy_into"), words(*this, y, "copy_into"), y.limb_count() * y.n(), state_->stream);
  x.set_form(y.form());
}

ring::RnsPoly CudaBackend::clone(const ring::RnsPoly& y) const {
  words(*this, y, "clone");
  return y.clone();
}

ring::RnsPoly CudaBackend::upload(const ring::RnsPoly& host) const {
  require<MismatchError>(!host.empty(), "upload: the polynomial is empty");
  if (host.shards().size() == 1) return host.copy_to(state_->device);
  // Several shards: gathered into one device shard limb by limb.
  ring::RnsPoly out = allocate(host.basis_ptr(), {.form = host.form(), .init = BufferInit::uninitialized});
  u32* dst = words(*this, out, "upload");
  for (std::size_t i = 0; i < host.limb_count(); ++i) {
    const auto limb = host.limb(i);
    device_memory_hooks(DeviceKind::cuda).copy(dst + i * state_->n, state_->device, limb.data(), Device::cpu(),
                                               limb.size_bytes());
  }
  return out;
}

ring::RnsPoly CudaBackend::place_blocks(const ring::RnsBasisPtr& basis, std::span<const u32> compressed,
                                        std::size_t gap) const {
  require(basis != nullptr && std::has_single_bit(gap) && gap <= state_->n &&
              compressed.size() == basis->size() * (state_->n / gap),
          "place_blocks: {} words in blocks of {} for {} limbs of degree {}", compressed.size(), gap,
          basis == nullptr ? 0 : basis->size(), state_->n);
  require<MismatchError>(basis->ring_degree() == state_->n,
                         "place_blocks: a basis of degree {} on a CUDA backend of degree {}", basis->ring_degree(),
                         state_->n);
  ring::RnsPoly out = allocate(basis, {.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
  if (compressed.empty()) return out;
  cuda::DeviceBuffer staged(compressed.size(), state_->stream);  // freed in stream order after the expansion
  staged.upload(compressed);
  cuda::detail::BlockExpansionLaunch launch;
  launch.out = words(*this, out, "place_blocks");
  launch.in = staged.data();
  launch.log_degree = std::countr_zero(state_->n);
  launch.log_gap = std::countr_zero(gap);
  launch.limbs = basis->size();
  launch.stream_handle = state_->stream.native_handle();
  cuda::detail::launch_block_expansion(launch);
  return out;
}

ring::RnsPoly CudaBackend::encode_scaled(const ring::RnsBasisPtr& basis, const DeviceWords& coefficients,
                                         std::size_t count, std::size_t gap, double scale) const {
  require(count != 0 && count * gap == state_->n,
          "encode_scaled: {} coefficients at every {}th of {} (count x gap must be the ring degree)", count, gap,
          state_->n);
  const DeviceWords* words_of[] = {&coefficients};
  const std::size_t gaps[] = {gap};
  return std::move(encode_scaled_batch(basis, words_of, gaps, scale).front());
}

namespace {

// The encoding launch of a batch's terms from `first` (at most scaled_encoding_max_terms of them): their
// coefficients and gaps, the basis's moduli, the scale; the output and the path's own fields are the caller's.
cuda::detail::ScaledEncodingLaunch scaled_encoding_launch(CudaBackend::State& s, const ring::RnsBasis& basis,
                                                          std::span<const DeviceWords* const> coefficients,
                                                          std::span<const std::size_t> gaps, std::size_t first,
                                                          double scale) {
  cuda::detail::ScaledEncodingLaunch launch;
  launch.terms = std::min(cuda::detail::scaled_encoding_max_terms, gaps.size() - first);
  for (std::size_t t = 0; t < launch.terms; ++t) {
    launch.coefficients[t] = reinterpret_cast<const double*>(coefficients[first + t]->data());
    launch.log_gap[t] = std::countr_zero(gaps[first + t]);
  }
  launch.moduli = reinterpret_cast<const math::Modulus*>(s.moduli_table(basis).data());
  launch.scale = scale;
  launch.log_degree = std::countr_zero(s.n);
  launch.limbs = basis.size();
  launch.stream_handle = s.stream.native_handle();
  return launch;
}

}  // namespace

// encode_scaled_batch's and encode_compact_batch's arguments checked.
void CudaBackend::check_scaled_encoding(const ring::RnsBasisPtr& basis, std::span<const DeviceWords* const> coefficients,
                                        std::span<const std::size_t> gaps, double scale) const {
  const std::size_t n = state_->n;
  require(basis != nullptr && coefficients.size() == gaps.size(),
          "encode_scaled_batch: {} coefficient buffers for {} gaps", coefficients.size(), gaps.size());
  require<MismatchError>(basis->ring_degree() == n, "encode_scaled: a basis of degree {} on a CUDA backend of degree {}",
                         basis->ring_degree(), n);
  require(std::isfinite(scale) && scale > 0, "encode_scaled: scale {} must be positive and finite", scale);
  for (std::size_t t = 0; t < gaps.size(); ++t) {
    require(std::has_single_bit(gaps[t]) && gaps[t] <= n / 2, "encode_scaled: term {}: a gap of {} at degree {}", t,
            gaps[t], n);
    require<MismatchError>(coefficients[t] != nullptr && coefficients[t]->device() == state_->device &&
                               coefficients[t]->size() == 2 * (n / gaps[t]),
                           "encode_scaled: term {}: {} words on {} for {} doubles on this backend's {}", t,
                           coefficients[t] == nullptr ? 0 : coefficients[t]->size(),
                           coefficients[t] == nullptr ? std::string("nothing") : to_string(coefficients[t]->device()),
                           n / gaps[t], to_string(state_->device));
  }
}

bool CudaBackend::compact_encoding(std::size_t gap) const {
  return std::has_single_bit(gap) &&
         cuda::detail::scaled_encoding_transforms(std::countr_zero(state_->n), std::countr_zero(gap));
}

CompactPlaintexts CudaBackend::encode_compact_batch(const ring::RnsBasisPtr& basis,
                                                    std::span<const DeviceWords* const> coefficients,
                                                    std::span<const std::size_t> gaps, double scale) const {
  check_scaled_encoding(basis, coefficients, gaps, scale);
  require(!gaps.empty() && compact_encoding(gaps[0]) &&
              std::all_of(gaps.begin(), gaps.end(), [&](std::size_t g) { return g == gaps[0]; }),
          "encode_compact_batch: {} plaintexts must share one gap that compact_encoding accepts (the first: {}, at "
          "degree {})",
          gaps.size(), gaps.empty() ? 0 : gaps[0], state_->n);
  const std::size_t gap = gaps[0], count = state_->n / gap, limbs = basis->size();
  CompactPlaintexts out{.basis = basis,
                        .terms = gaps.size(),
                        .gap = gap,
                        .words = DeviceWords(state_->device, gaps.size() * limbs * count, BufferInit::uninitialized)};
  for (std::size_t first = 0; first < gaps.size(); first += cuda::detail::scaled_encoding_max_terms) {
    auto launch = scaled_encoding_launch(*state_, *basis, coefficients, gaps, first, scale);
    launch.out = out.words.data() + first * limbs * count;
    launch.twiddles = state_->forward_twiddles(basis->primes());
    launch.compact = true;
    cuda::detail::launch_scaled_encoding_transformed(launch);
  }
  return out;
}

std::vector<ring::RnsPoly> CudaBackend::encode_scaled_batch(const ring::RnsBasisPtr& basis,
                                                            std::span<const DeviceWords* const> coefficients,
                                                            std::span<const std::size_t> gaps, double scale) const {
  const std::size_t n = state_->n;
  check_scaled_encoding(basis, coefficients, gaps, scale);
  std::vector<ring::RnsPoly> out;
  if (gaps.empty()) return out;
  // One allocation, the polynomials consecutive: one encoding launch and one batched NTT per group of terms.
  auto storage = DeviceWords::slices(state_->device, gaps.size(), basis->size() * n, BufferInit::uninitialized);
  out.reserve(gaps.size());
  for (auto& words : storage) out.emplace_back(basis, ring::PolyForm::coefficient, std::move(words));
  for (std::size_t first = 0; first < gaps.size(); first += cuda::detail::scaled_encoding_max_terms) {
    auto launch = scaled_encoding_launch(*state_, *basis, coefficients, gaps, first, scale);
    launch.out = words(*this, out[first], "encode_scaled");
    // Every term's coefficients fit one block: encoded and transformed in one launch.
    const bool sparse = std::all_of(launch.log_gap, launch.log_gap + launch.terms, [&](int log_gap) {
      return cuda::detail::scaled_encoding_transforms(launch.log_degree, log_gap);
    });
    if (sparse) {
      launch.twiddles = state_->forward_twiddles(basis->primes());
      cuda::detail::launch_scaled_encoding_transformed(launch);
    } else {
      cuda::detail::launch_scaled_encoding(launch);
      state_->ntt_forward(launch.out, basis->primes(), launch.terms);
    }
  }
  for (auto& poly : out) poly.set_form(ring::PolyForm::ntt);
  return out;
}

std::size_t CudaBackend::sparse_encoding_period(std::size_t ring_degree) {
  require(std::has_single_bit(ring_degree) && ring_degree >= 2, "sparse_encoding_period: ring degree {}",
          ring_degree);
  // A period p of N / 2 slots puts the coefficients at multiples of gap = N / (2 p).
  const int log_n = std::countr_zero(ring_degree);
  std::size_t period = 0;
  for (int log_gap = 1; log_gap < log_n; ++log_gap) {
    if (cuda::detail::scaled_encoding_transforms(log_n, log_gap)) {
      period = std::max(period, ring_degree >> (log_gap + 1));
    }
  }
  return period;
}

double CudaBackend::special_ifft_split(const math::SpecialFftTables& tables, DeviceWords& values,
                                       DeviceWords& out) const {
  const std::size_t p = tables.slots();
  require<MismatchError>(tables.ring_degree() == state_->n,
                         "special_ifft_split: FFT tables of degree {} on a CUDA backend of degree {}",
                         tables.ring_degree(), state_->n);
  require<MismatchError>(values.device() == state_->device && out.device() == state_->device &&
                             values.size() == 4 * p && out.size() == 4 * p,
                         "special_ifft_split: {} and {} words on {} and {} for {} complex values on this backend's {}",
                         values.size(), out.size(), to_string(values.device()), to_string(out.device()), p,
                         to_string(state_->device));
  DeviceWords largest(state_->device, 2, BufferInit::zero);
  cuda::detail::SpecialFftLaunch launch;
  launch.values = reinterpret_cast<double*>(values.data());
  launch.twiddles = reinterpret_cast<const double*>(state_->fft_twiddle_table(tables).data());
  launch.out = reinterpret_cast<double*>(out.data());
  launch.largest = reinterpret_cast<unsigned long long*>(largest.data());
  launch.size = p;
  launch.inverse_size = 1.0 / static_cast<double>(p);
  launch.stream_handle = state_->stream.native_handle();
  cuda::detail::launch_special_ifft(launch);
  const DeviceWords host = largest.copy_to(Device::cpu(), 2);
  double value = 0;
  std::memcpy(&value, host.data(), sizeof(value));
  return value;
}

ring::RnsPoly CudaBackend::expand_uniform(const ring::RnsBasisPtr& basis, const math::Seed& seed,
                                          std::uint64_t stream) const {
  require(basis != nullptr, "uniform expansion needs a basis");
  require(stream < rlwe::max_uniform_stream, "uniform stream {} is out of range: streams are below 2^56", stream);
  require(basis->size() <= rlwe::max_uniform_limbs, "uniform expansion covers {} limbs; the basis has {}",
          rlwe::max_uniform_limbs, basis->size());
  require<MismatchError>(basis->ring_degree() == state_->n,
                         "uniform expansion over a basis of degree {} on a CUDA backend of degree {}",
                         basis->ring_degree(), state_->n);
  ring::RnsPoly out = allocate(basis, {.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
  cuda::detail::UniformExpansionLaunch launch;
  launch.out = words(*this, out, "expand_uniform");
  launch.moduli = reinterpret_cast<const math::Modulus*>(state_->moduli_table(*basis).data());
  for (int i = 0; i < 8; ++i) launch.seed[i] = seed.words[i];
  launch.stream = stream;
  launch.log_degree = std::countr_zero(state_->n);
  launch.limbs = basis->size();
  launch.stream_handle = state_->stream.native_handle();
  cuda::detail::launch_uniform_expansion(launch);
  return out;
}

ring::RnsPoly CudaBackend::place(ring::RnsPoly&& x) const {
  if (x.shards().size() == 1 && x.shards()[0].device() == state_->device) return std::move(x);
  return upload(x);
}

ring::RnsPoly CudaBackend::download(const ring::RnsPoly& y) const {
  require<MismatchError>(!y.empty(), "download: the polynomial is empty");
  return y.copy_to(Device::cpu());
}

rlwe::SwitchingKey CudaBackend::upload(const rlwe::SwitchingKey& key) const {
  require<MismatchError>(key.context() != nullptr, "upload: the switching key is empty");
  std::vector<std::array<ring::RnsPoly, 2>> digits;
  for (std::size_t d = 0; d < key.digit_count(); ++d) {
    const ring::RnsPoly* a = key.stored_a(d);
    // A seeded key's uniform half is expanded on the device from its seed: half the upload, and the host's
    // ChaCha20 (seconds for bootstrapping keys) is skipped.
    digits.push_back({upload(key.b(d)), a != nullptr ? upload(*a) : expand_uniform(key.b(d).basis_ptr(), *key.seed(),
                                                                                    key.base_stream() + d)});
  }
  return rlwe::SwitchingKey(key.context(), std::move(digits), rlwe::KeyStorage::expanded, std::nullopt,
                            key.base_stream());
}

namespace {
bool on_device(const rlwe::SwitchingKey& key, Device device) {
  for (std::size_t d = 0; d < key.digit_count(); ++d) {
    const ring::RnsPoly* a = key.stored_a(d);
    if (a == nullptr || a->shards().size() != 1 || a->shards()[0].device() != device) return false;
    if (key.b(d).shards().size() != 1 || key.b(d).shards()[0].device() != device) return false;
  }
  return true;
}
}  // namespace

std::shared_ptr<const rlwe::SwitchingKey> CudaBackend::resident(std::shared_ptr<const rlwe::SwitchingKey> key) const {
  if (key == nullptr || on_device(*key, state_->device)) return key;
  return std::make_shared<const rlwe::SwitchingKey>(upload(*key));
}

// --- elementwise ---

void CudaBackend::add(ring::RnsPoly& x, const ring::RnsPoly& y) const {
  ring::require_compatible(x, y, "add");
  state_->elementwise_plan(x.basis()).add(words(*this, x, "add"), words(*this, x, "add"), words(*this, y, "add"),
                                          x.limb_count(), state_->stream);
}

void CudaBackend::sub(ring::RnsPoly& x, const ring::RnsPoly& y) const {
  ring::require_compatible(x, y, "sub");
  state_->elementwise_plan(x.basis()).sub(words(*this, x, "sub"), words(*this, x, "sub"), words(*this, y, "sub"),
                                          x.limb_count(), state_->stream);
}

void CudaBackend::negate(ring::RnsPoly& x) const {
  u32* p = words(*this, x, "negate");
  state_->elementwise_plan(x.basis()).negate(p, p, x.limb_count(), state_->stream);
}

void CudaBackend::multiply(ring::RnsPoly& x, const ring::RnsPoly& y) const {
  ring::require_compatible(x, y, "multiply");
  require_ntt(x, "multiply");
  u32* p = words(*this, x, "multiply");
  state_->elementwise_plan(x.basis()).multiply(p, p, words(*this, y, "multiply"), x.limb_count(), state_->stream);
}

void CudaBackend::multiply_accumulate(ring::RnsPoly& x, const ring::RnsPoly& y, const ring::RnsPoly& z) const {
  ring::require_compatible(x, y, "multiply-accumulate");
  ring::require_compatible(x, z, "multiply-accumulate");
  require_ntt(x, "multiply-accumulate");
  state_->elementwise_plan(x.basis()).multiply_accumulate(words(*this, x, "multiply-accumulate"),
                                                          words(*this, y, "multiply-accumulate"),
                                                          words(*this, z, "multiply-accumulate"), x.limb_count(),
                                                          state_->stream);
}

void CudaBackend::multiply_accumulate_many(ring::RnsPoly& x, std::span<const ring::RnsPoly* const> a,
                                           std::span<const ring::RnsPoly* const> b, bool accumulate) const {
  require(a.size() == b.size() && !a.empty(), "multiply-accumulate-many: {} left and {} right factors", a.size(),
          b.size());
  require_ntt(x, "multiply-accumulate-many");
  std::vector<const u32*> left, right;
  left.reserve(a.size());
  right.reserve(b.size());
  for (std::size_t t = 0; t < a.size(); ++t) {
    require(a[t] != nullptr && b[t] != nullptr, "multiply-accumulate-many: term {} has a null factor", t);
    ring::require_compatible(x, *a[t], "multiply-accumulate-many");
    ring::require_compatible(x, *b[t], "multiply-accumulate-many");
    left.push_back(words(*this, *a[t], "multiply-accumulate-many"));
    right.push_back(words(*this, *b[t], "multiply-accumulate-many"));
  }
  state_->elementwise_plan(x.basis()).multiply_accumulate_many(words(*this, x, "multiply-accumulate-many"), left, right,
                                                               accumulate, x.limb_count(), state_->stream);
}

std::array<ring::RnsPoly, 2> CudaBackend::tensor(ring::RnsPoly& x0, const ring::RnsPoly& x1, const ring::RnsPoly& y0,
                                                 const ring::RnsPoly& y1) const {
  for (const ring::RnsPoly* p : {&x1, &y0, &y1}) ring::require_compatible(x0, *p, "multiply");
  require_ntt(x0, "multiply");
  auto out = DeviceWords::slices(state_->device, 2, x0.limb_count() * state_->n, BufferInit::uninitialized);
  std::array<ring::RnsPoly, 2> d{ring::RnsPoly(x0.basis_ptr(), ring::PolyForm::ntt, std::move(out[0])),
                                 ring::RnsPoly(x0.basis_ptr(), ring::PolyForm::ntt, std::move(out[1]))};
  u32* a0 = words(*this, x0, "multiply");
  state_->elementwise_plan(x0.basis())
      .tensor(a0, words(*this, d[0], "multiply"), words(*this, d[1], "multiply"), a0, words(*this, x1, "multiply"),
              words(*this, y0, "multiply"), words(*this, y1, "multiply"), x0.limb_count(), state_->stream);
  return d;
}

void CudaBackend::multiply_scalar(ring::RnsPoly& x, std::span<const u32> per_limb) const {
  u32* p = words(*this, x, "multiply by scalars");
  const auto scalars = scalars_for(x.basis(), per_limb, state_->stream, "multiply by scalars");
  state_->elementwise_plan(x.basis()).multiply_scalar(p, p, scalars, x.limb_count(), state_->stream);
}

// --- out of place: the result allocated uninitialized and written by the same kernels, reading the operands once ---

namespace {
ring::RnsPoly like(const CudaBackend& backend, const ring::RnsPoly& y) {
  return backend.allocate(y.basis_ptr(), {.form = y.form(), .init = BufferInit::uninitialized});
}
}  // namespace

ring::RnsPoly CudaBackend::sum(const ring::RnsPoly& y, const ring::RnsPoly& z) const {
  ring::require_compatible(y, z, "add");
  ring::RnsPoly out = like(*this, y);
  state_->elementwise_plan(y.basis()).add(words(*this, out, "add"), words(*this, y, "add"), words(*this, z, "add"),
                                          y.limb_count(), state_->stream);
  return out;
}

ring::RnsPoly CudaBackend::difference(const ring::RnsPoly& y, const ring::RnsPoly& z) const {
  ring::require_compatible(y, z, "sub");
  ring::RnsPoly out = like(*this, y);
  state_->elementwise_plan(y.basis()).sub(words(*this, out, "sub"), words(*this, y, "sub"), words(*this, z, "sub"),
                                          y.limb_count(), state_->stream);
  return out;
}

ring::RnsPoly CudaBackend::product(const ring::RnsPoly& y, const ring::RnsPoly& z) const {
  ring::require_compatible(y, z, "multiply");
  require_ntt(y, "multiply");
  ring::RnsPoly out = like(*this, y);
  state_->elementwise_plan(y.basis()).multiply(words(*this, out, "multiply"), words(*this, y, "multiply"),
                                               words(*this, z, "multiply"), y.limb_count(), state_->stream);
  return out;
}

ring::RnsPoly CudaBackend::negation(const ring::RnsPoly& y) const {
  ring::RnsPoly out = like(*this, y);
  state_->elementwise_plan(y.basis()).negate(words(*this, out, "negate"), words(*this, y, "negate"), y.limb_count(),
                                             state_->stream);
  return out;
}

ring::RnsPoly CudaBackend::scalar_product(const ring::RnsPoly& y, std::span<const u32> per_limb) const {
  ring::RnsPoly out = like(*this, y);
  const auto scalars = scalars_for(y.basis(), per_limb, state_->stream, "multiply by scalars");
  state_->elementwise_plan(y.basis()).multiply_scalar(words(*this, out, "multiply by scalars"),
                                                      words(*this, y, "multiply by scalars"), scalars, y.limb_count(),
                                                      state_->stream);
  return out;
}

std::array<ring::RnsPoly, 3> CudaBackend::tensor_product(const ring::RnsPoly& x0, const ring::RnsPoly& x1,
                                                         const ring::RnsPoly& y0, const ring::RnsPoly& y1) const {
  for (const ring::RnsPoly* p : {&x1, &y0, &y1}) ring::require_compatible(x0, *p, "multiply");
  require_ntt(x0, "multiply");
  auto out = DeviceWords::slices(state_->device, 3, x0.limb_count() * state_->n, BufferInit::uninitialized);
  std::array<ring::RnsPoly, 3> d{ring::RnsPoly(x0.basis_ptr(), ring::PolyForm::ntt, std::move(out[0])),
                                 ring::RnsPoly(x0.basis_ptr(), ring::PolyForm::ntt, std::move(out[1])),
                                 ring::RnsPoly(x0.basis_ptr(), ring::PolyForm::ntt, std::move(out[2]))};
  state_->elementwise_plan(x0.basis())
      .tensor(words(*this, d[0], "multiply"), words(*this, d[1], "multiply"), words(*this, d[2], "multiply"),
              words(*this, x0, "multiply"), words(*this, x1, "multiply"), words(*this, y0, "multiply"),
              words(*this, y1, "multiply"), x0.limb_count(), state_->stream);
  return d;
}

ring::RnsPoly CudaBackend::prefix(const ring::RnsPoly& y, const ring::RnsBasisPtr& basis) const {
  require<MismatchError>(basis != nullptr && basis->size() <= y.limb_count() &&
                             std::equal(basis->primes().begin(), basis->primes().end(), y.basis().primes().begin()),
                         "prefix: {} is not a prefix of the polynomial's {}",
                         basis ? ring::describe(*basis) : std::string("no basis"), ring::describe(y.basis()));
  ring::RnsPoly out = allocate(basis, {.form = y.form(), .init = BufferInit::uninitialized});
  copy_words(words(*this, out, "prefix"), words(*this, y, "prefix"), basis->size() * state_->n, state_->stream);
  return out;
}

void CudaBackend::add_scalar(ring::RnsPoly& x, std::span<const u32> per_limb) const {
  require<MismatchError>(x.form() == ring::PolyForm::ntt,
                         "adding a scalar to every word is adding a constant only in NTT form, not {} form",
                         ring::to_string(x.form()));
  u32* p = words(*this, x, "add scalars");
  const auto scalars = scalars_for(x.basis(), per_limb, state_->stream, "add scalars");
  state_->elementwise_plan(x.basis()).add_scalar(p, p, scalars, x.limb_count(), state_->stream);
}

void CudaBackend::multiply_integer(ring::RnsPoly& x, std::int64_t integer) const {
  std::vector<u32> residues(x.limb_count());
  for (std::size_t i = 0; i < residues.size(); ++i) residues[i] = ring::reduce_signed(integer, x.basis().prime(i));
  multiply_scalar(x, residues);
}

// --- domains ---

void CudaBackend::to_ntt(ring::RnsPoly& x) const {
  u32* p = words(*this, x, "to_ntt");
  if (x.form() == ring::PolyForm::ntt) return;
  state_->ntt_forward(p, x.basis().primes());
  x.set_form(ring::PolyForm::ntt);
}

void CudaBackend::to_coeff(ring::RnsPoly& x) const {
  u32* p = words(*this, x, "to_coeff");
  if (x.form() == ring::PolyForm::coefficient) return;
  state_->ntt_inverse(p, x.basis().primes());
  x.set_form(ring::PolyForm::coefficient);
}

// --- levels ---

void CudaBackend::rescale(const ring::Rescaler& rescaler, ring::RnsPoly& x) const {
  rescale(rescaler, std::span<ring::RnsPoly>(&x, 1));
}

void CudaBackend::rescale(const ring::Rescaler& rescaler, std::span<ring::RnsPoly> parts) const {
  State& s = *state_;
  const std::size_t count = parts.size();
  if (count == 0) return;
  std::vector<u32*> p;
  for (auto& x : parts) {
    p.push_back(words(*this, x, "rescale"));
    require<MismatchError>(x.basis() == rescaler.basis() && x.form() == parts[0].form(),
                           "rescale: the polynomials must be over the rescaler's {} in one form; one is over {} in {} "
                           "form",
                           ring::describe(rescaler.basis()), ring::describe(x.basis()), ring::to_string(x.form()));
  }
  const cuda::RescalePlan& plan = s.rescale_plan(rescaler);
  const std::size_t kept = rescaler.kept().size();
  const std::size_t dropped = rescaler.dropped();
  if (parts[0].form() == ring::PolyForm::coefficient) {
    for (u32* x : p) plan.apply(x, x, s.stream);
  } else {
    // The dropped limbs to coefficient form, the corrections back to NTT form, then (x - t) P^{-1}; the transforms
    // run once for all the polynomials.
    // One launch per transform when the parts are evenly spaced in memory (a ciphertext's parts usually are: one
    // allocation).
    bool evenly_spaced = count < 2 || p[1] > p[0];
    for (std::size_t b = 2; evenly_spaced && b < count; ++b) evenly_spaced = p[b] - p[b - 1] == p[1] - p[0];
    const std::size_t stride = count < 2 || !evenly_spaced ? 0 : static_cast<std::size_t>(p[1] - p[0]);
    DeviceWords scratch(s.device, count * (dropped + kept) * s.n, BufferInit::uninitialized);
    u32* coefficients = scratch.data();
    u32* corrections = scratch.data() + count * dropped * s.n;
    const auto dropped_primes = parts[0].basis().primes().subspan(kept);
    if (evenly_spaced) {  // the transform reads the dropped limbs where they are
      s.ntt_inverse(coefficients, dropped_primes, count, {.source = p[0] + kept * s.n, .source_stride = stride});
    } else {
      for (std::size_t b = 0; b < count; ++b)
        copy_words(coefficients + b * dropped * s.n, p[b] + kept * s.n, dropped * s.n, s.stream);
      s.ntt_inverse(coefficients, dropped_primes, count);
    }
    for (std::size_t b = 0; b < count; ++b) {
      plan.corrections(coefficients + b * dropped * s.n, corrections + b * kept * s.n, s.stream);
    }
    // The corrections' forward transform writes (x - t) P^{-1} over x in its last pass.
    const auto scale = static_cast<const u32*>(plan.p_inverse().device_data());
    if (evenly_spaced) {
      const cuda::detail::NttFinish finish{
          .minuend = p[0], .minuend_stride = stride, .out = p[0], .out_stride = stride, .scale = scale};
      s.ntt_forward(corrections, rescaler.kept().primes(), count, &finish);
    } else {
      for (std::size_t b = 0; b < count; ++b) {
        const cuda::detail::NttFinish finish{.minuend = p[b], .out = p[b], .scale = scale};
        s.ntt_forward(corrections + b * kept * s.n, rescaler.kept().primes(), 1, &finish);
      }
    }
  }
  for (auto& x : parts) x.drop_to(rescaler.kept_ptr());
}

void CudaBackend::drop_to(ring::RnsPoly& x, const ring::RnsBasisPtr& basis) const {
  words(*this, x, "drop_to");
  x.drop_to(basis);
}

// --- ModRaise ---

ring::RnsPoly CudaBackend::mod_raise(const ring::RnsPoly& y, const ring::RnsBasisPtr& basis) const {
  words(*this, y, "ModRaise");
  require(basis != nullptr && basis->ring_degree() == y.n(), "ModRaise: the target basis must have ring degree {}",
          y.n());
  require<UnsupportedError>(y.limb_count() <= 2, "ModRaise on the GPU lifts from one or two primes, not {} ({})",
                            y.limb_count(), ring::describe(y.basis()));
  State& s = *state_;
  ring::RnsPoly coefficients = clone(y);
  to_coeff(coefficients);
  ring::RnsPoly out = allocate(basis, {.form = ring::PolyForm::coefficient, .init = BufferInit::uninitialized});
  cuda::detail::ModRaiseLaunch args;
  args.in = words(*this, coefficients, "ModRaise");
  args.out = words(*this, out, "ModRaise");
  args.source_count = y.limb_count();
  args.q0 = y.basis().prime(0);
  if (args.source_count == 2) {
    args.q1 = y.basis().prime(1);
    args.q0_inv_mod_q1 = static_cast<u32>(math::inv_mod(args.q0 % args.q1, args.q1));
  }
  args.targets = reinterpret_cast<const math::Modulus*>(s.moduli_table(*basis).data());
  args.target_count = basis->size();
  args.log_degree = std::countr_zero(s.n);
  args.stream = s.stream.native_handle();
  cuda::detail::launch_mod_raise(args);
  to_ntt(out);
  return out;
}

ring::RnsPoly CudaBackend::convert_basis(const ring::RnsPoly& y, const ring::RnsBasisPtr& to) const {
  const u32* in = words(*this, y, "basis conversion");
  require<MismatchError>(y.form() == ring::PolyForm::coefficient,
                         "basis conversion takes a polynomial in coefficient form, not {} form",
                         ring::to_string(y.form()));
  require(to != nullptr && to->ring_degree() == y.n(), "basis conversion: the target basis must have ring degree {}",
          y.n());
  const cuda::BasisConversionPlan& plan = state_->conversion_plan(y.basis(), *to);
  ring::RnsPoly out = allocate(to, {.form = ring::PolyForm::coefficient, .init = BufferInit::uninitialized});
  plan.convert(in, words(*this, out, "basis conversion"), state_->stream);
  return out;
}

// --- automorphisms ---

ring::RnsPoly CudaBackend::automorphism(const ring::Automorphism& a, const ring::RnsPoly& y) const {
  const u32* in = words(*this, y, "automorphism");
  const cuda::AutomorphismPlan& plan = state_->automorphism_plan(a);
  ring::RnsPoly out = allocate(y.basis_ptr(), {.form = y.form(), .init = BufferInit::uninitialized});
  u32* o = words(*this, out, "automorphism");
  if (y.form() == ring::PolyForm::ntt) {
    plan.apply(in, o, y.limb_count(), state_->stream);
    return out;
  }
  // Coefficient form through the NTT: both transforms are exact, so the words are the coefficient map's.
  ring::RnsPoly spectrum = clone(y);
  to_ntt(spectrum);
  plan.apply(words(*this, spectrum, "automorphism"), o, y.limb_count(), state_->stream);
  out.set_form(ring::PolyForm::ntt);
  to_coeff(out);
  return out;
}

}  // namespace cerium::backend
