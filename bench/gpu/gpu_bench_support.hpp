#pragma once
// What every GPU benchmark shares: the device's label, the median, and the copy bandwidth measured in the same
// process, which turns a kernel's minimum traffic into its floor (floor_ratio = time / (bytes / copy bandwidth)).

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "cerium/backend/cuda/device.hpp"
#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/backend/cuda/timer.hpp"

namespace cerium_bench {

inline constexpr std::size_t kMiB = std::size_t{1} << 20;
inline constexpr std::size_t kColdBytes = 256 * kMiB;  // per replay: over four times the H200's 60 MB of L2

inline cudaStream_t native(const cerium::cuda::Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline const std::string& device_label() {
  static const std::string label = [] {
    const auto info = cerium::cuda::device_info(0);
    return info.name + " (" + std::to_string(info.sm_count) + " SMs)";
  }();
  return label;
}

// Bytes per second of a 1 GiB device-to-device copy, counting bytes read plus bytes written; median of 10.
inline double copy_bandwidth() {
  static const double bandwidth = [] {
    using cerium::cuda::DeviceBuffer;
    const auto stream = cerium::cuda::Stream::create();
    const std::size_t words = (std::size_t{1} << 30) / 4;
    DeviceBuffer source(words, stream), target(words, stream);
    source.fill_bytes(0x5a);
    target.fill_bytes(0);
    cerium::cuda::EventTimer timer(stream);
    for (int i = 0; i < 3; ++i) target.copy_from(source);
    std::vector<double> seconds;
    for (int i = 0; i < 10; ++i) {
      timer.start();
      target.copy_from(source);
      timer.stop();
      seconds.push_back(timer.elapsed_ms() / 1e3);
    }
    return 2.0 * static_cast<double>(source.bytes()) / median(seconds);
  }();
  return bandwidth;
}

}  // namespace cerium_bench
