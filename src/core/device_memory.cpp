#include "cerium/core/device_memory.hpp"

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

#include "cerium/core/check.hpp"

namespace cerium {
namespace {

constexpr std::size_t kinds = 3;

// Installed once per process in practice; a reader takes the pointer without a lock.
std::array<std::atomic<const DeviceMemoryHooks*>, kinds>& installed() {
  static std::array<std::atomic<const DeviceMemoryHooks*>, kinds> hooks{};
  return hooks;
}

std::size_t index_of(DeviceKind kind) { return static_cast<std::size_t>(kind); }

}  // namespace

void install_device_memory_hooks(DeviceKind kind, const DeviceMemoryHooks& hooks) {
  require(kind != DeviceKind::cpu, "host memory needs no device memory hooks");
  require(kind != DeviceKind::remote, "another rank's memory cannot be reached through memory hooks");
  require(hooks.allocate && hooks.release && hooks.copy && hooks.zero,
          "device memory hooks for {} must provide allocate, release, copy and zero", to_string(kind));
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  // Kept for the life of the process: shards made with earlier hooks may still be released through them.
  installed()[index_of(kind)].store(new DeviceMemoryHooks(hooks), std::memory_order_release);
}

bool has_device_memory_hooks(DeviceKind kind) {
  return kind != DeviceKind::cpu && installed()[index_of(kind)].load(std::memory_order_acquire) != nullptr;
}

const DeviceMemoryHooks& device_memory_hooks(DeviceKind kind) {
  require<UnsupportedError>(kind != DeviceKind::remote,
                            "remote memory belongs to another rank of the device mesh: it cannot be allocated, read "
                            "or written here (gather it through the mesh's communicator)");
  const DeviceMemoryHooks* hooks =
      kind == DeviceKind::cpu ? nullptr : installed()[index_of(kind)].load(std::memory_order_acquire);
  require<UnsupportedError>(hooks != nullptr,
                            "no {} memory is available: this build has no {} backend, or none was created yet "
                            "(construct a backend::CudaBackend before placing data on a {} device)",
                            to_string(kind), to_string(kind), to_string(kind));
  return *hooks;
}

std::size_t DeviceWords::padded_bytes(std::size_t size) {
  const std::size_t bytes = size * sizeof(std::uint32_t);
  return (bytes + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
}

DeviceWords::DeviceWords(Device device, std::size_t size, BufferInit init) : device_(device) {
  if (device.host_accessible()) {
    host_ = AlignedBuffer<std::uint32_t>(size, init);
    data_ = host_.data();
    size_ = size;
    return;
  }
  const auto& hooks = device_memory_hooks(device.kind);
  if (size == 0) return;
  data_ = static_cast<std::uint32_t*>(hooks.allocate(device, padded_bytes(size)));
  size_ = size;
  if (init == BufferInit::zero) hooks.zero(device, data_, padded_bytes(size_));
}

DeviceWords& DeviceWords::operator=(DeviceWords&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    host_ = std::move(other.host_);
    block_ = std::move(other.block_);
    borrowed_ = std::exchange(other.borrowed_, false);
  }
  return *this;
}

DeviceWords DeviceWords::borrow(Device device, std::uint32_t* data, std::size_t size) {
  DeviceWords view;
  view.device_ = device;
  view.data_ = data;
  view.size_ = size;
  view.borrowed_ = true;
  return view;
}

std::vector<DeviceWords> DeviceWords::slices(Device device, std::size_t count, std::size_t words, BufferInit init) {
  const std::size_t stride = padded_bytes(words) / sizeof(std::uint32_t);
  auto block = std::make_shared<DeviceWords>(device, count * stride, init);
  std::vector<DeviceWords> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    out[i].device_ = device;
    out[i].data_ = block->data_ + i * stride;
    out[i].size_ = words;
    out[i].block_ = block;
  }
  return out;
}

void DeviceWords::release() noexcept {
  if (block_ != nullptr || borrowed_) {  // a slice (the block frees the memory with its last slice) or a view
    borrowed_ = false;
    block_.reset();
    data_ = nullptr;
    size_ = 0;
    return;
  }
  if (data_ != nullptr && !device_.host_accessible()) {
    device_memory_hooks(device_.kind).release(device_, data_, padded_bytes(size_));
  }
  host_ = AlignedBuffer<std::uint32_t>();
  data_ = nullptr;
  size_ = 0;
}

DeviceWords DeviceWords::copy_to(Device target, std::size_t words) const {
  require(words <= size_, "copying {} words of a buffer of {}", words, size_);
  DeviceWords copy(target, words, BufferInit::uninitialized);
  if (words == 0) return copy;
  const std::size_t bytes = words * sizeof(std::uint32_t);
  if (device_.host_accessible() && target.host_accessible()) {
    std::memcpy(copy.data_, data_, bytes);
  } else {
    device_memory_hooks(target.host_accessible() ? device_.kind : target.kind)
        .copy(copy.data_, target, data_, device_, bytes);
  }
  return copy;
}

DeviceWords DeviceWords::clone() const { return copy_to(device_, size_); }

void DeviceWords::fill_zero() {
  if (data_ == nullptr) return;
  if ((block_ != nullptr || borrowed_) && device_.host_accessible()) {
    std::memset(data_, 0, size_ * sizeof(std::uint32_t));
  } else if (device_.host_accessible()) {
    host_.fill_zero();
  } else {
    // A slice or a view zeroes its own words only: the padding past them may be a neighbour's.
    const bool shared = block_ != nullptr || borrowed_;
    device_memory_hooks(device_.kind).zero(device_, data_, shared ? size_ * sizeof(std::uint32_t) : padded_bytes(size_));
  }
}

}  // namespace cerium
