#pragma once
// Checking CUDA runtime calls. The macro takes any call that returns a cudaError_t and throws
// cerium::DeviceError (cerium::OutOfMemoryError for an allocation failure) naming the call, the error's
// name and text, and file:line. It needs no CUDA header: the status travels as an int, so this header is safe
// in public headers, in host .cpp files and in .cu files alike (fmt stays out of .cu files: the message is
// formatted in src/backend/cuda/check.cpp).

#include <cstddef>

namespace cerium::cuda::detail {

// Throws OutOfMemoryError for cudaErrorMemoryAllocation, DeviceError otherwise. Clears the runtime's
// last-error state first, so that a recoverable error does not resurface at the next launch check.
[[noreturn]] void throw_cuda_error(int status, const char* call, const char* file, int line);

// Throws OutOfMemoryError saying how many bytes were asked for.
[[noreturn]] void throw_out_of_memory(std::size_t bytes, int status, const char* call, const char* file, int line);

}  // namespace cerium::cuda::detail

#define CERIUM_CUDA_CHECK(call)                                                             \
  do {                                                                                      \
    const int cerium_cuda_status_ = static_cast<int>(call);                                 \
    if (cerium_cuda_status_ != 0)                                                           \
      ::cerium::cuda::detail::throw_cuda_error(cerium_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)
