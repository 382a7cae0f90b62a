// Turns CUDA runtime failures into Cerium's typed errors (kept out of .cu files: fmt does not build under nvcc
// in C++20 mode).
#include "cerium/backend/cuda/check.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cerium/core/error.hpp"

namespace cerium::cuda::detail {

namespace {
std::string describe(int status, const char* call, const char* file, int line) {
  const auto error = static_cast<cudaError_t>(status);
  return fmt::format("CUDA call {} failed with {} ({}): {} at {}:{}", call, cudaGetErrorName(error), status,
                     cudaGetErrorString(error), file, line);
}
}  // namespace

void throw_cuda_error(int status, const char* call, const char* file, int line) {
  // Reset the last-error state: a recoverable error (a failed allocation, a bad argument) would otherwise be
  // reported again by the next cudaGetLastError() after an unrelated launch.
  (void)cudaGetLastError();
  if (status == cudaErrorMemoryAllocation) throw OutOfMemoryError(describe(status, call, file, line));
  throw DeviceError(describe(status, call, file, line));
}

void throw_out_of_memory(std::size_t bytes, int status, const char* call, const char* file, int line) {
  (void)cudaGetLastError();
  throw OutOfMemoryError(fmt::format("device allocation of {} bytes ({:.3f} GiB) failed: {}", bytes,
                                     static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0),
                                     describe(status, call, file, line)));
}

}  // namespace cerium::cuda::detail
