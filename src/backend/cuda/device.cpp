#include "cerium/backend/cuda/device.hpp"

#include <cuda_runtime_api.h>

#include "cerium/backend/cuda/check.hpp"

namespace cerium::cuda {

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no device: not an error for a query
    return 0;
  }
  return count;
}

bool has_cuda_device() { return device_count() > 0; }

DeviceInfo device_info(int ordinal) {
  cudaDeviceProp props{};
  CERIUM_CUDA_CHECK(cudaGetDeviceProperties(&props, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.name = props.name;
  info.compute_major = props.major;
  info.compute_minor = props.minor;
  info.sm_count = props.multiProcessorCount;
  info.global_memory_bytes = props.totalGlobalMem;
  info.l2_cache_bytes = static_cast<std::size_t>(props.l2CacheSize);
  info.shared_memory_per_block_optin = props.sharedMemPerBlockOptin;
  return info;
}

}  // namespace cerium::cuda
