#pragma once
// One set of keys for a planned program, seeded as the examples make them, attached to both backends: the CPU
// evaluator and bootstrapper, and the CUDA ones (which expand the seeds on the device), so that a GPU test runs the
// plan on each and compares their words.

#include <cstddef>
#include <memory>

#include "cerium/backend/cuda_backend.hpp"
#include "cerium/boot/bootstrapper.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/planner.hpp"

namespace gpu_test {

struct PlannedTwins {
  cerium::ckks::Evaluator cpu;
  cerium::ckks::CudaEvaluator gpu;
  cerium::boot::Bootstrapper cpu_bootstrapper;
  cerium::boot::CudaBootstrapper gpu_bootstrapper;

  // The plan's relinearization and rotation keys, and bootstrapping keys for `slots` slots made for the values
  // the plan bootstraps (graph::required_message_bound), all from `keygen`.
  PlannedTwins(const cerium::ckks::ContextPtr& context, const cerium::ckks::KeyGenerator& keygen,
               const cerium::graph::Plan& plan, std::size_t slots)
      : cpu(context),
        gpu(context, cerium::backend::CudaBackend(context)),
        cpu_bootstrapper(context, config(plan, slots)),
        gpu_bootstrapper(context, config(plan, slots), cerium::backend::CudaBackend(context)) {
    using cerium::ckks::KeyStorage;
    const auto boot_keys = std::make_shared<const cerium::boot::BootstrapKeys>(
        cpu_bootstrapper.generate_keys(keygen, {}, KeyStorage::seeded));
    cpu_bootstrapper.set_keys(boot_keys);
    gpu_bootstrapper.set_keys(boot_keys);
    const auto relin =
        std::make_shared<const cerium::ckks::RelinearizationKey>(keygen.relinearization_key(KeyStorage::seeded));
    const auto galois = std::make_shared<const cerium::ckks::GaloisKeys>(
        keygen.galois_keys(plan.keys.steps, plan.keys.conjugation, KeyStorage::seeded));
    cpu.set_relinearization_key(relin);
    cpu.set_galois_keys(galois);
    gpu.set_relinearization_key(relin);
    gpu.set_galois_keys(galois);
  }

 private:
  static cerium::boot::BootstrapConfig config(const cerium::graph::Plan& plan, std::size_t slots) {
    return {.slots = slots, .message_bound = cerium::graph::required_message_bound(plan)};
  }
};

}  // namespace gpu_test
