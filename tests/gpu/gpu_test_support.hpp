#pragma once
// Shared by the GPU tests.

#include "cerium/backend/cuda/device.hpp"
#include "support/catch.hpp"

// Returns from the test where there is no device; the passing check keeps --warn NoAssertions satisfied.
#define CERIUM_SKIP_WITHOUT_DEVICE()        \
  do {                                      \
    if (!cerium::cuda::has_cuda_device()) { \
      WARN("no CUDA device: test skipped"); \
      CHECK(true);                          \
      return;                               \
    }                                       \
  } while (0)
