#pragma once
// Which CUDA devices there are and what they offer.

#include <cstddef>
#include <string>

namespace cerium::cuda {

// What device_info reports of one device.
struct DeviceInfo {
  int ordinal = 0;                // the CUDA device number
  std::string name;               // e.g. "NVIDIA H200"
  int compute_major = 0;          // compute capability, 9.0 on Hopper
  int compute_minor = 0;          // the capability's minor number (0 in 9.0)
  int sm_count = 0;               // streaming multiprocessors
  std::size_t global_memory_bytes = 0;  // total device memory
  std::size_t l2_cache_bytes = 0;       // L2 cache size
  std::size_t shared_memory_per_block_optin = 0;  // the most a block can get after opting in
};

// Number of usable devices; 0 when there is no device or no driver. Never throws.
int device_count();

// True when at least one device can be used. Never throws: tests and programs use it to skip GPU work.
bool has_cuda_device();

// Properties of one device; throws DeviceError for an ordinal that does not exist.
DeviceInfo device_info(int ordinal = 0);

}  // namespace cerium::cuda
