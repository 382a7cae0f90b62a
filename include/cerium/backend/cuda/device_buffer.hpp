#pragma once
// Device memory for 32-bit words, owned by a move-only RAII handle.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/backend/cuda/stream.hpp"

namespace cerium::cuda {

// Words on the current device, taken from the stream-ordered memory pool (cudaMallocAsync) on the buffer's
// stream and given back there (cudaFreeAsync), so that allocation is cheap and ordered with the stream's work.
// The memory is 256-byte aligned and uninitialised. Not copyable: copies of ciphertext-sized memory should be
// visible in the code (copy_from), never implicit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Throws OutOfMemoryError (with the byte count) when the device cannot supply the memory; other buffers stay
  // valid and the caller may free some and try again.
  explicit DeviceBuffer(std::size_t words, Stream stream = {});
  ~DeviceBuffer();  // gives the words back to the pool, ordered after the stream's work

  // Moves take the memory (an assignment first frees what it held) and leave the source empty.
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // The device pointer (null when empty): for kernels and raw copies, never for the host to dereference.
  std::uint32_t* data() { return data_; }
  const std::uint32_t* data() const { return data_; }
  std::size_t size() const { return words_; }  // in words
  std::size_t bytes() const { return words_ * sizeof(std::uint32_t); }  // size() x 4
  bool empty() const { return words_ == 0; }                            // no words
  const Stream& stream() const { return stream_; }  // the stream it was allocated on and is freed on

  // Host words into [offset, offset + host.size()); returns once the copy is done (the span may then change).
  // Throws InvalidArgument when the range does not fit.
  void upload(std::span<const std::uint32_t> host, std::size_t offset = 0);
  // [offset, offset + host.size()) into host words, after the stream's earlier work; returns once done.
  void download(std::span<std::uint32_t> host, std::size_t offset = 0) const;
  std::vector<std::uint32_t> download() const;  // every word

  // Queues a device-to-device copy of source's words to the start of this buffer on this buffer's stream
  // (source must not be larger). Does not wait.
  void copy_from(const DeviceBuffer& source);
  // Queues setting every byte to value (poisoning before a test, zeroing). Does not wait.
  void fill_bytes(unsigned char value);

 private:
  void release() noexcept;
  std::uint32_t* data_ = nullptr;
  std::size_t words_ = 0;
  Stream stream_;
};

}  // namespace cerium::cuda
