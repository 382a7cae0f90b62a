// DeviceWords on host devices, and the clear error for device memory when no backend installed its hooks.

#include <cstdint>
#include <algorithm>
#include <numeric>
#include <string>

#include "cerium/core/device_memory.hpp"
#include "cerium/core/error.hpp"
#include "support/catch.hpp"

using namespace cerium;

TEST_CASE("DeviceWords in host memory: zeroed, cloned, copied to another host device", "[core][memory]") {
  DeviceWords words(Device::cpu(), 1000);
  REQUIRE(words.size() == 1000);
  CHECK(reinterpret_cast<std::uintptr_t>(words.data()) % buffer_alignment == 0);
  for (std::size_t i = 0; i < words.size(); ++i) CHECK(words.data()[i] == 0);
  std::iota(words.data(), words.data() + words.size(), 7u);

  const DeviceWords copy = words.clone();
  CHECK(copy.data() != words.data());
  CHECK(copy.device() == Device::cpu());
  CHECK(std::equal(copy.data(), copy.data() + 1000, words.data()));

  const DeviceWords head = words.copy_to(Device::cpu(2), 10);
  CHECK(head.device() == Device::cpu(2));
  CHECK(head.size() == 10);
  CHECK(head.data()[9] == 16);

  DeviceWords moved = std::move(words);
  CHECK(moved.data()[0] == 7);
  CHECK(words.empty());  // NOLINT(bugprone-use-after-move): a moved-from buffer is empty
  moved.fill_zero();
  CHECK(moved.data()[999] == 0);
}

TEST_CASE("device memory without a backend is a clear UnsupportedError", "[core][memory]") {
  if (has_device_memory_hooks(DeviceKind::cuda)) return;  // a CUDA backend in this process installed them
  try {
    DeviceWords words(Device::cuda(0), 16);
    FAIL("allocating CUDA memory without the CUDA backend must throw");
  } catch (const UnsupportedError& e) {
    CHECK(std::string(e.what()).find("CudaBackend") != std::string::npos);
  }
  CHECK_THROWS_AS(install_device_memory_hooks(DeviceKind::cpu, DeviceMemoryHooks{}), InvalidArgument);
  CHECK_THROWS_AS(install_device_memory_hooks(DeviceKind::cuda, DeviceMemoryHooks{}), InvalidArgument);
}
