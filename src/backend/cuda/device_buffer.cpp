#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/memory.hpp"

#include <cuda_runtime_api.h>

#include <limits>
#include <utility>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/core/check.hpp"
#include "cerium/core/log.hpp"

namespace cerium::cuda {

namespace {
cudaStream_t native(const Stream& stream) { return static_cast<cudaStream_t>(stream.native_handle()); }

void require_range(std::size_t offset, std::size_t count, std::size_t words, const char* what) {
  require(offset <= words && count <= words - offset,
          "{} of {} words at offset {} does not fit a device buffer of {} words", what, count, offset, words);
}
}  // namespace

DeviceBuffer::DeviceBuffer(std::size_t words, Stream stream) : stream_(std::move(stream)) {
  if (words == 0) return;
  constexpr std::size_t max_words = std::numeric_limits<std::size_t>::max() / sizeof(std::uint32_t);
  const std::size_t bytes = words * sizeof(std::uint32_t);
  int device = 0;
  CERIUM_CUDA_CHECK(cudaGetDevice(&device));
  detail::note_allocation_request(device, bytes);  // counted with the pool's (and failed when injected)
  void* pointer = nullptr;
  const cudaError_t status = words > max_words ? cudaErrorMemoryAllocation
                                               : cudaMallocAsync(&pointer, bytes, native(stream_));
  if (status == cudaErrorMemoryAllocation)
    detail::throw_out_of_memory(bytes, status, "cudaMallocAsync", __FILE__, __LINE__);
  CERIUM_CUDA_CHECK(status);
  data_ = static_cast<std::uint32_t*>(pointer);
  words_ = words;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() noexcept {
  if (data_ == nullptr) return;
  // Stream-ordered: the memory returns to the pool once the stream's queued work that may use it is done.
  if (const cudaError_t status = cudaFreeAsync(data_, native(stream_)); status != cudaSuccess) {
    (void)cudaGetLastError();
    log(LogLevel::warn, "cudaFreeAsync of {} bytes failed: {}", bytes(), cudaGetErrorString(status));
  }
  data_ = nullptr;
  words_ = 0;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      words_(std::exchange(other.words_, 0)),
      stream_(std::move(other.stream_)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    words_ = std::exchange(other.words_, 0);
    stream_ = std::move(other.stream_);
  }
  return *this;
}

void DeviceBuffer::upload(std::span<const std::uint32_t> host, std::size_t offset) {
  require_range(offset, host.size(), words_, "upload");
  if (host.empty()) return;
  CERIUM_CUDA_CHECK(cudaMemcpyAsync(data_ + offset, host.data(), host.size_bytes(), cudaMemcpyHostToDevice,
                                    native(stream_)));
  stream_.synchronize();
}

void DeviceBuffer::download(std::span<std::uint32_t> host, std::size_t offset) const {
  require_range(offset, host.size(), words_, "download");
  if (host.empty()) return;
  CERIUM_CUDA_CHECK(cudaMemcpyAsync(host.data(), data_ + offset, host.size_bytes(), cudaMemcpyDeviceToHost,
                                    native(stream_)));
  stream_.synchronize();
}

std::vector<std::uint32_t> DeviceBuffer::download() const {
  std::vector<std::uint32_t> host(words_);
  download(host);
  return host;
}

void DeviceBuffer::copy_from(const DeviceBuffer& source) {
  require_range(0, source.size(), words_, "device copy");
  if (source.empty()) return;
  CERIUM_CUDA_CHECK(cudaMemcpyAsync(data_, source.data(), source.bytes(), cudaMemcpyDeviceToDevice, native(stream_)));
}

void DeviceBuffer::fill_bytes(unsigned char value) {
  if (words_ == 0) return;
  CERIUM_CUDA_CHECK(cudaMemsetAsync(data_, value, bytes(), native(stream_)));
}

}  // namespace cerium::cuda
