#pragma once
// Device memory for polynomials: the stream-ordered pool behind every RnsShard placed on a CUDA device, its
// statistics and an optional cap, and pinned host staging for uploads and downloads.
//
// Why a cap of our own: the device's pool only fails when the GPU is full, which a test cannot arrange and a
// user sharing a GPU does not want; with a cap, a request past it is an OutOfMemoryError naming the sizes, and
// everything allocated before stays valid.

#include <cstddef>

#include "cerium/backend/cuda/stream.hpp"

namespace cerium::cuda {

// The pool's accounting for one device (memory_stats).
struct MemoryStats {
  std::size_t in_use = 0;       // bytes held by live allocations
  std::size_t peak = 0;         // the most in_use has been since the last reset_peak_memory()
  std::size_t reserved = 0;     // bytes the device's pool holds from the driver (in use or cached)
  std::size_t limit = 0;        // the cap; 0 for none
  std::size_t allocations = 0;  // live allocations
};

// Installs the CUDA memory hooks of core/device_memory.hpp (idempotent, thread-safe): after this, RnsPoly shards
// may be placed on cuda devices. The CUDA backend calls it on construction. Throws DeviceError without a device.
void install_memory_hooks();

// The stream every device polynomial's memory and the CUDA backend's work are ordered on, one per device.
const Stream& work_stream(int device = 0);

// The device's MemoryStats now.
MemoryStats memory_stats(int device = 0);
// Bytes that new allocations can still get: what the driver has free plus what the pool holds unused, and no
// more than the cap leaves (for callers that size a cache to the device, e.g. graph::ExecutorOptions).
std::size_t memory_available(int device = 0);
// Fault injection for reliability tests: the allocation `after` allocations from now on the device (polynomials
// from the pool and plan tables alike) fails with OutOfMemoryError, as a full device would, once; negative: none.
void inject_allocation_failure(long long after, int device = 0);
// Allocations requested on the device so far, failed ones included (for walking every allocation point of a call).
std::size_t allocation_requests(int device = 0);

namespace detail {
// Counts one allocation request on the device; throws OutOfMemoryError when it is the injected failure.
void note_allocation_request(int device, std::size_t bytes);
}  // namespace detail

// Gives the pool's unused memory (freed, kept for reuse) back to the driver after the work queued so far: before
// capturing a CUDA graph, whose allocations come from the graph's own pool.
void release_unused_memory(int device = 0);
// Restarts MemoryStats::peak from the bytes in use now.
void reset_peak_memory(int device = 0);
// Caps the bytes held on the device (0 removes the cap). A cap below the bytes in use refuses new allocations
// until enough are freed.
void set_memory_limit(std::size_t bytes, int device = 0);

}  // namespace cerium::cuda
