#pragma once
// Where a buffer lives: the host (cpu) or a CUDA GPU, with an index. Every buffer and every shard of a
// polynomial carries one. The CPU backend may pose as several devices (cpu:0, cpu:1, ...) so that sharded code
// runs in CI without GPUs; those all live in host memory. A shard held by another rank of a device mesh
// (dist/) is `remote`, its index the rank: it has no storage here, only its place in the polynomial's layout.
//
// No fmt here: this header is meant to be usable from .cu files, where fmt does not compile under C++20.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace cerium {

// The kind of memory a Device names: the host, a CUDA GPU, or another rank of a device mesh.
enum class DeviceKind : std::uint8_t { cpu, cuda, remote };

// "cpu", "cuda", "remote".
constexpr std::string_view to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::cpu: return "cpu";
    case DeviceKind::cuda: return "cuda";
    case DeviceKind::remote: return "remote";
  }
  return "unknown";
}

// A device (see the file comment): its kind and its index.
struct Device {
  DeviceKind kind = DeviceKind::cpu;  // cpu, cuda or remote
  int index = 0;                      // k of cpu:k, the CUDA device ordinal, or the rank that holds a remote shard

  // The host, as device `index` of the CPU backend; the CUDA GPU of that ordinal.
  static constexpr Device cpu(int index = 0) { return Device{DeviceKind::cpu, index}; }
  static constexpr Device cuda(int index = 0) { return Device{DeviceKind::cuda, index}; }
  // Memory of another rank of a device mesh: where a sharded polynomial's limbs live when this rank holds none.
  static constexpr Device remote(int rank) { return Device{DeviceKind::remote, rank}; }

  // Tests of the kind.
  constexpr bool is_cpu() const { return kind == DeviceKind::cpu; }
  constexpr bool is_cuda() const { return kind == DeviceKind::cuda; }
  constexpr bool is_remote() const { return kind == DeviceKind::remote; }
  // Host code may read and write the memory of this device directly.
  constexpr bool host_accessible() const { return kind == DeviceKind::cpu; }

  // Same kind and same index.
  friend constexpr bool operator==(const Device&, const Device&) = default;
  // An order (kind, then index) so devices can key sorted containers.
  friend constexpr auto operator<=>(const Device&, const Device&) = default;
};

// "cpu:0", "cuda:3", "remote:2".
inline std::string to_string(const Device& device) {
  return std::string(to_string(device.kind)) + ":" + std::to_string(device.index);
}

}  // namespace cerium

// Hashes a Device (kind and index) so that it can key unordered containers.
template <>
struct std::hash<cerium::Device> {
  // Mixes the kind into the high bits and the index into the low ones.
  std::size_t operator()(const cerium::Device& d) const noexcept {
    return std::hash<long long>{}((static_cast<long long>(d.kind) << 32) ^ static_cast<long long>(d.index));
  }
};
