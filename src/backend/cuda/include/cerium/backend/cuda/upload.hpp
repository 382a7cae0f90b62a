#pragma once
// Constant tables of plain structs (per-limb constants, permutations) copied to the device once, as words of a
// DeviceBuffer, so that plans keep one owning handle type for all their device memory.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "cerium/backend/cuda/device_buffer.hpp"

namespace cerium::cuda {

// Uploads `items` on `stream` and waits; the buffer's data() may then be reinterpreted as const T*
// (DeviceBuffer memory is 256-byte aligned, enough for any T here).
template <class T>
DeviceBuffer upload_table(std::span<const T> items, Stream stream = {}) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % sizeof(std::uint32_t) == 0,
                "device tables hold trivially copyable structs of whole words");
  std::vector<std::uint32_t> words(items.size() * sizeof(T) / sizeof(std::uint32_t));
  if (!words.empty()) std::memcpy(words.data(), items.data(), words.size() * sizeof(std::uint32_t));
  DeviceBuffer buffer(words.size(), std::move(stream));
  buffer.upload(words);
  return buffer;
}

template <class T>
const T* table_data(const DeviceBuffer& buffer) {
  return reinterpret_cast<const T*>(buffer.data());
}

}  // namespace cerium::cuda
