// The sharded backend with its ranks on the GPU: in-process ranks sharing the one device (their gathers go through
// the host) run every evaluator operation and a bootstrap with the single-device CPU evaluator's words, in both
// layouts. The NCCL rank (gathers in device memory) is in test_nccl_gpu.cpp.
#include "gpu_test_support.hpp"
#include "support/catch.hpp"
#include "unit/dist/sharded_checks.hpp"

using namespace sharded_test;

TEST_CASE("sharded evaluator on the GPU: the CPU evaluator's words on 1 to 3 ranks", "[gpu][dist][sharded]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  {
    const auto context = Context::create(toy(11, 4, 2, 2));
    InProcessGroup group(1);
    group.run([&](Communicator& comm) {
      const ShardedBackend backend(comm, context, {.device = Device::cuda(0)});
      REQUIRE(backend.device() == Device::cuda(0));
      REQUIRE(backend.layout().local_device() == Device::cuda(0));
    });
  }
  check_program_on_ranks({1, 2, 3}, {.layout = LayoutPolicy::contiguous, .device = Device::cuda(0)}, 61);
  // Balanced: a rank's limbs are single-limb runs, each its own kernel call.
  check_program_on_ranks({2, 3}, {.layout = LayoutPolicy::balanced, .device = Device::cuda(0)}, 67);
}

TEST_CASE("sharded bootstrapping on the GPU: the CPU bootstrapper's words (N = 2^11, 2 ranks)",
          "[gpu][dist][sharded][bootstrap]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  check_sharded_bootstrap(11, {2}, 71, {.device = Device::cuda(0)});
}
