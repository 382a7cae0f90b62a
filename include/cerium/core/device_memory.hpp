#pragma once
// Words in the memory of any device, and the hooks through which host-side layers reach device memory.
//
// Why hooks: the ring layer owns polynomials (RnsShard) but must not depend on CUDA. A device backend installs
// its allocator and copy routines here once (the CUDA backend does so when first used); until then a shard on
// that kind of device is an UnsupportedError, never undefined behaviour. Host devices (cpu:k) need no hooks.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>
#include <utility>

#include "cerium/core/aligned_buffer.hpp"
#include "cerium/core/device.hpp"

namespace cerium {

// The functions a device backend installs (install_device_memory_hooks) so that host-side layers can allocate,
// copy and zero the memory of its devices. All four must be set.
struct DeviceMemoryHooks {
  // bytes on the device, 256-byte aligned; throws OutOfMemoryError (recoverable) or DeviceError.
  void* (*allocate)(Device device, std::size_t bytes) = nullptr;
  // Frees what allocate returned, with the same byte count.
  void (*release)(Device device, void* pointer, std::size_t bytes) noexcept = nullptr;
  // bytes from src (on src_device) to dst (on dst_device), in the order of the device's other work; one side
  // may be host memory. Returns once the destination may be read (by the host, or by later device work).
  void (*copy)(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes) = nullptr;
  // Sets `bytes` bytes at pointer on the device to zero.
  void (*zero)(Device device, void* pointer, std::size_t bytes) = nullptr;
};

// Installs the hooks of a device kind (replacing earlier ones); InvalidArgument for cpu or a missing function.
void install_device_memory_hooks(DeviceKind kind, const DeviceMemoryHooks& hooks);
// The hooks of a device kind; UnsupportedError naming the kind when none are installed.
const DeviceMemoryHooks& device_memory_hooks(DeviceKind kind);
// Whether hooks are installed for a device kind (never for cpu, whose memory needs none).
bool has_device_memory_hooks(DeviceKind kind);

// A move-only owning array of 32-bit words on one device, padded to whole 256-byte lines. Host memory
// (cpu:k) is an AlignedBuffer; device memory comes from the hooks. data() is a device pointer when
// !device().host_accessible(): only device code and the hooks may dereference it.
class DeviceWords {
 public:
  DeviceWords() = default;
  // `size` words on `device`, zeroed unless init is uninitialized. OutOfMemoryError when the device has no room;
  // UnsupportedError for a device kind without hooks or for a remote device.
  DeviceWords(Device device, std::size_t size, BufferInit init = BufferInit::zero);
  // Moves take the words (or the view) and leave the source empty; copies are explicit (clone, copy_to).
  DeviceWords(DeviceWords&& other) noexcept { *this = std::move(other); }
  DeviceWords& operator=(DeviceWords&& other) noexcept;
  DeviceWords(const DeviceWords&) = delete;
  DeviceWords& operator=(const DeviceWords&) = delete;
  ~DeviceWords() { release(); }

  Device device() const { return device_; }            // where the words live
  std::size_t size() const { return size_; }           // in words, the padding not counted
  bool empty() const { return size_ == 0; }            // size() == 0
  std::uint32_t* data() { return data_; }              // a device pointer unless device().host_accessible()
  const std::uint32_t* data() const { return data_; }  // a device pointer unless device().host_accessible()

  // `count` buffers of `words` words each, consecutive in one allocation (each starting on a 256-byte line,
  // words * 4 bytes apart when that is a whole number of lines), which is freed when the last of them goes:
  // polynomials that kernels process as one batch.
  static std::vector<DeviceWords> slices(Device device, std::size_t count, std::size_t words,
                                         BufferInit init = BufferInit::zero);

  // A view of `size` words at data on device that someone else owns and keeps alive while the view is used:
  // released, it frees nothing (views that regroup a sharded polynomial's local limbs, dist/).
  static DeviceWords borrow(Device device, std::uint32_t* data, std::size_t size);
  bool borrowed() const { return borrowed_; }  // a view made by borrow()
  // The same words on the same device (in an allocation of its own).
  DeviceWords clone() const;
  // The first `words` words, in a buffer of that size on another device (or the same one).
  DeviceWords copy_to(Device target, std::size_t words) const;
  // Zeroes the words: every one of size(), and the padding of a buffer that owns its allocation.
  void fill_zero();

 private:
  void release() noexcept;
  static std::size_t padded_bytes(std::size_t size);

  Device device_ = Device::cpu();
  std::uint32_t* data_ = nullptr;
  std::size_t size_ = 0;
  AlignedBuffer<std::uint32_t> host_;  // the storage when device_ is host memory
  std::shared_ptr<DeviceWords> block_;  // for a slice: the allocation it lies in
  bool borrowed_ = false;               // a view of memory owned elsewhere
};

}  // namespace cerium
