#pragma once
// A move-only owning buffer of trivially copyable T in host memory, aligned to cerium::buffer_alignment
// (256 bytes). The allocation is rounded up to a whole number of 256-byte lines so that vectorized loops may
// read the tail line without touching another allocation; only the first size() elements are meaningful.

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

#include "cerium/core/config.hpp"
#include "cerium/core/error.hpp"
#include "cerium/core/host_memory.hpp"

namespace cerium {

// How a new buffer's elements start out.
enum class BufferInit : std::uint8_t {
  zero,           // every element (and the padding) is zero
  uninitialized,  // contents are unspecified; for buffers that are written before they are read
};

// A host buffer of size() elements of T, 256-byte aligned and padded to whole lines (see the file comment).
template <class T>
class AlignedBuffer {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "AlignedBuffer holds plain words, copied with memcpy and never destroyed element by element");
  static_assert(alignof(T) <= buffer_alignment);

 public:
  AlignedBuffer() noexcept = default;
  // Throws OutOfMemoryError (naming the byte count) when the host cannot provide the memory.
  explicit AlignedBuffer(std::size_t size, BufferInit init = BufferInit::zero)
      : data_(allocate(size)), size_(size) {
    if (init == BufferInit::zero && data_ != nullptr) std::memset(data_, 0, padded_bytes(size_));
  }

  // Moves take the storage and leave the source empty.
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  // The same, freeing this buffer's storage first.
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  // Copies are explicit (clone) so that large buffers are never duplicated by accident.
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { release(); }

  // A deep copy: the only way to duplicate a buffer.
  AlignedBuffer clone() const {
    AlignedBuffer copy(size_, BufferInit::uninitialized);
    if (size_ != 0) std::memcpy(copy.data_, data_, padded_bytes(size_));
    return copy;
  }

  std::size_t size() const { return size_; }                    // in elements
  std::size_t size_bytes() const { return size_ * sizeof(T); }  // size() * sizeof(T), the padding not counted
  bool empty() const { return size_ == 0; }                     // size() == 0

  // The size() elements (data() is null when empty); indices are not checked.
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }

  // Zeroes every element and the padding.
  void fill_zero() {
    if (data_ != nullptr) std::memset(data_, 0, padded_bytes(size_));
  }

 private:
  static std::size_t padded_bytes(std::size_t size) {
    const std::size_t bytes = size * sizeof(T);
    return (bytes + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
  }

  static T* allocate(std::size_t size) {
    if (size == 0) return nullptr;
    constexpr std::size_t max_size = (std::numeric_limits<std::size_t>::max() - buffer_alignment) / sizeof(T);
    if (size > max_size) {
      throw OutOfMemoryError(fmt::format("host allocation of {} elements of {} bytes overflows the address space",
                                         size, sizeof(T)));
    }
    void* p = allocate_host_block(padded_bytes(size));
    if (p == nullptr) {
      throw OutOfMemoryError(fmt::format("host allocation of {} bytes ({}-byte aligned) failed", padded_bytes(size),
                                         buffer_alignment));
    }
    return static_cast<T*>(p);
  }

  void release() noexcept {
    if (data_ != nullptr) free_host_block(data_, padded_bytes(size_));
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cerium
