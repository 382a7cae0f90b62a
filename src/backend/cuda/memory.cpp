#include "cerium/backend/cuda/memory.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>

#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/device.hpp"
#include "cerium/core/check.hpp"
#include "cerium/core/device_memory.hpp"
#include "cerium/core/log.hpp"

namespace cerium::cuda {
namespace {

constexpr int max_devices = 16;
// Pinned staging: two halves, so that the host fills one while the device copies the other.
constexpr std::size_t staging_half_bytes = std::size_t{16} << 20;

struct DeviceState {
  std::once_flag created;
  Stream stream;
  std::mutex mutex;  // guards the counters and the staging buffer
  std::size_t in_use = 0;
  std::size_t peak = 0;
  std::size_t limit = 0;
  std::size_t allocations = 0;
  std::size_t requests = 0;        // allocation requests ever made (allocation_requests)
  long long fail_countdown = -1;   // inject_allocation_failure: requests left before the failing one
  unsigned char* staging = nullptr;  // 2 x staging_half_bytes of pinned host memory
  std::array<cudaEvent_t, 2> staged{};
};

std::array<DeviceState, max_devices>& states() {
  static std::array<DeviceState, max_devices> s;
  return s;
}

cudaStream_t native(const Stream& stream) { return static_cast<cudaStream_t>(stream.native_handle()); }

class DeviceScope {  // makes `device` current for the scope
 public:
  explicit DeviceScope(int device) {
    CERIUM_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) CERIUM_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceScope() { (void)cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

DeviceState& state(int device) {
  require(device >= 0 && device < max_devices && device < device_count(),
          "CUDA device {} does not exist ({} visible)", device, device_count());
  DeviceState& s = states()[static_cast<std::size_t>(device)];
  std::call_once(s.created, [&] {
    const DeviceScope scope(device);
    s.stream = Stream::create_blocking();
    // Freed memory stays in the pool for the next polynomial instead of going back to the driver.
    cudaMemPool_t pool = nullptr;
    CERIUM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    CERIUM_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  });
  return s;
}

// Under s.mutex: counts the request; throws when it is the injected failure.
void count_request(DeviceState& s, int device, std::size_t bytes) {
  ++s.requests;
  if (s.fail_countdown < 0) return;
  if (s.fail_countdown-- > 0) return;
  throw OutOfMemoryError(fmt::format(
      "allocating {} bytes on cuda:{} failed: an injected failure (cuda::inject_allocation_failure) standing for a "
      "full device",
      bytes, device));
}

void* allocate(Device device, std::size_t bytes) {
  DeviceState& s = state(device.index);
  {
    const std::lock_guard lock(s.mutex);
    count_request(s, device.index, bytes);
    if (s.limit != 0 && (bytes > s.limit || s.in_use > s.limit - bytes)) {
      throw OutOfMemoryError(fmt::format(
          "allocating {} bytes on {} would exceed the memory limit: {} bytes in use of {} allowed; free "
          "ciphertexts or keys, or raise the limit with cuda::set_memory_limit",
          bytes, to_string(device), s.in_use, s.limit));
    }
    s.in_use += bytes;
    s.peak = std::max(s.peak, s.in_use);
    ++s.allocations;
  }
  void* pointer = nullptr;
  cudaError_t status;
  {
    const DeviceScope scope(device.index);
    status = cudaMallocAsync(&pointer, bytes, native(s.stream));
  }
  if (status != cudaSuccess) {
    const std::lock_guard lock(s.mutex);
    s.in_use -= bytes;
    --s.allocations;
  }
  if (status == cudaErrorMemoryAllocation)
    detail::throw_out_of_memory(bytes, status, "cudaMallocAsync", __FILE__, __LINE__);
  CERIUM_CUDA_CHECK(status);
  return pointer;
}

void release(Device device, void* pointer, std::size_t bytes) noexcept {
  DeviceState& s = states()[static_cast<std::size_t>(device.index)];
  // Stream-ordered: the memory returns to the pool after the work already queued that may use it.
  if (const cudaError_t status = cudaFreeAsync(pointer, native(s.stream)); status != cudaSuccess) {
    (void)cudaGetLastError();
    log(LogLevel::warn, "cudaFreeAsync of {} bytes on {} failed: {}", bytes, to_string(device),
        cudaGetErrorString(status));
  }
  const std::lock_guard lock(s.mutex);
  s.in_use -= bytes;
  --s.allocations;
}

void ensure_staging(DeviceState& s) {
  if (s.staging != nullptr) return;
  void* pinned = nullptr;
  CERIUM_CUDA_CHECK(cudaMallocHost(&pinned, 2 * staging_half_bytes));
  s.staging = static_cast<unsigned char*>(pinned);
  for (auto& event : s.staged) CERIUM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  for (auto& event : s.staged) CERIUM_CUDA_CHECK(cudaEventRecord(event, native(s.stream)));
}

// Host to device through the pinned halves: the host copies chunk k into half k % 2 while the device copies
// chunk k - 1 out of the other half.
void upload(DeviceState& s, void* dst, const void* src, std::size_t bytes) {
  const std::lock_guard lock(s.mutex);
  ensure_staging(s);
  const auto* from = static_cast<const unsigned char*>(src);
  auto* to = static_cast<unsigned char*>(dst);
  for (std::size_t done = 0, k = 0; done < bytes; ++k) {
    const std::size_t chunk = std::min(staging_half_bytes, bytes - done);
    unsigned char* half = s.staging + (k % 2) * staging_half_bytes;
    CERIUM_CUDA_CHECK(cudaEventSynchronize(s.staged[k % 2]));
    std::memcpy(half, from + done, chunk);
    CERIUM_CUDA_CHECK(cudaMemcpyAsync(to + done, half, chunk, cudaMemcpyHostToDevice, native(s.stream)));
    CERIUM_CUDA_CHECK(cudaEventRecord(s.staged[k % 2], native(s.stream)));
    done += chunk;
  }
}

void download(DeviceState& s, void* dst, const void* src, std::size_t bytes) {
  const std::lock_guard lock(s.mutex);
  ensure_staging(s);
  const auto* from = static_cast<const unsigned char*>(src);
  auto* to = static_cast<unsigned char*>(dst);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t chunk = std::min(staging_half_bytes, bytes - done);
    CERIUM_CUDA_CHECK(cudaMemcpyAsync(s.staging, from + done, chunk, cudaMemcpyDeviceToHost, native(s.stream)));
    CERIUM_CUDA_CHECK(cudaStreamSynchronize(native(s.stream)));
    std::memcpy(to + done, s.staging, chunk);
    done += chunk;
  }
}

// The devices come from the buffers' owners, not from pointer queries: memory allocated inside a CUDA graph
// capture is not yet known to cudaPointerGetAttributes.
void copy(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) {
  const bool to = dst_device.is_cuda();
  const bool from = src_device.is_cuda();
  if (to && from) {
    DeviceState& s = state(dst_device.index);
    if (dst_device == src_device) {
      CERIUM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, native(s.stream)));
    } else {
      // Ordered after the source device's queued work, then on the destination's stream.
      CERIUM_CUDA_CHECK(cudaStreamSynchronize(native(state(src_device.index).stream)));
      CERIUM_CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device.index, src, src_device.index, bytes, native(s.stream)));
    }
  } else if (to) {
    upload(state(dst_device.index), dst, src, bytes);
  } else if (from) {
    download(state(src_device.index), dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

void zero(Device device, void* pointer, std::size_t bytes) {
  require(device.is_cuda(), "the CUDA memory hooks cannot zero memory on {}", to_string(device));
  CERIUM_CUDA_CHECK(cudaMemsetAsync(pointer, 0, bytes, native(state(device.index).stream)));
}

}  // namespace

void install_memory_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    require<DeviceError>(has_cuda_device(), "no CUDA device is available for device memory");
    install_device_memory_hooks(DeviceKind::cuda, DeviceMemoryHooks{allocate, release, copy, zero});
  });
}

const Stream& work_stream(int device) { return state(device).stream; }

MemoryStats memory_stats(int device) {
  DeviceState& s = state(device);
  MemoryStats stats;
  {
    const std::lock_guard lock(s.mutex);
    stats.in_use = s.in_use;
    stats.peak = s.peak;
    stats.limit = s.limit;
    stats.allocations = s.allocations;
  }
  cudaMemPool_t pool = nullptr;
  CERIUM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t reserved = 0;
  CERIUM_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  stats.reserved = reserved;
  return stats;
}

std::size_t memory_available(int device) {
  const MemoryStats stats = memory_stats(device);
  int current = 0;
  CERIUM_CUDA_CHECK(cudaGetDevice(&current));
  CERIUM_CUDA_CHECK(cudaSetDevice(device));
  std::size_t free = 0, total = 0;
  const cudaError_t status = cudaMemGetInfo(&free, &total);
  CERIUM_CUDA_CHECK(cudaSetDevice(current));
  CERIUM_CUDA_CHECK(status);
  std::size_t available = free + (stats.reserved > stats.in_use ? stats.reserved - stats.in_use : 0);
  if (stats.limit != 0) available = std::min(available, stats.limit > stats.in_use ? stats.limit - stats.in_use : 0);
  return available;
}

void release_unused_memory(int device) {
  DeviceState& s = state(device);
  const DeviceScope scope(device);
  s.stream.synchronize();
  cudaMemPool_t pool = nullptr;
  CERIUM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  CERIUM_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
}

void inject_allocation_failure(long long after, int device) {
  DeviceState& s = state(device);
  const std::lock_guard lock(s.mutex);
  s.fail_countdown = after < 0 ? -1 : after;
}

std::size_t allocation_requests(int device) {
  DeviceState& s = state(device);
  const std::lock_guard lock(s.mutex);
  return s.requests;
}

void detail::note_allocation_request(int device, std::size_t bytes) {
  DeviceState& s = state(device);
  const std::lock_guard lock(s.mutex);
  count_request(s, device, bytes);
}

void reset_peak_memory(int device) {
  DeviceState& s = state(device);
  const std::lock_guard lock(s.mutex);
  s.peak = s.in_use;
}

void set_memory_limit(std::size_t bytes, int device) {
  DeviceState& s = state(device);
  const std::lock_guard lock(s.mutex);
  s.limit = bytes;
}

}  // namespace cerium::cuda
