#pragma once
// The examples' common ending for a planned model at N = 2^16: the keys the plan needs (seeded), then the run on
// the GPU when there is one; on the CPU it first says how long that would take and runs only with `cpu`.
// `run(evaluator, bootstrapper)` is called with the CUDA or the CPU pair. A model planned in stages
// (graph::StagedPlanner) passes all its plans: the keys are their union, the bootstrapper made for the largest
// value any of them bootstraps.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <span>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/backend_keys.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/simulate.hpp"
#if CERIUM_HAS_CUDA
#include "cerium/backend/cuda/device.hpp"
#include "cerium/backend/cuda/memory.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#endif

// One bootstrap's precision relative to its message bound (bootstrappable_n16: 21.0 bits mean, bench/RESULTS.md).
inline constexpr double kBootstrapBits = 21;

// The bits of bootstrap noise a simulation of `plans` should use (the examples' `--noise auto`): one bootstrap's
// precision less log2 of the message bound the plans need (graph::required_message_bound). With the rounding model
// it predicts an encrypted BERT-Base layer's precision within about a bit (bench/RESULTS.md).
inline double simulated_noise_bits(std::span<const cerium::graph::Plan> plans) {
  double bound = 1;
  for (const cerium::graph::Plan& plan : plans) bound = std::max(bound, cerium::graph::required_message_bound(plan));
  return kBootstrapBits - std::log2(bound);
}

// The noise the examples' `--noise` simulates for `plan` (graph::simulate_outputs_noisy): every bootstrapped value
// off by up to 2^-bits times its magnitude's power of two, and the rescales' and key switches' rounding of the
// plan's parameters; `seed` of the noise's generator.
inline cerium::graph::BootstrapNoise run_noise(const cerium::graph::Plan& plan, double bits, std::uint64_t seed) {
  return {.absolute = std::exp2(-bits), .scaled_by_magnitude = true, .seed = seed,
          .rounding = cerium::graph::rounding_noise(plan.program.context()->parameters())};
}

// A `--noise` argument: its bits, or -1 for "auto" (then simulated_noise_bits once the plans exist).
inline double noise_bits_argument(const std::string& text) {
  return text == "auto" ? -1 : std::strtod(text.c_str(), nullptr);
}

template <class Run>
int run_planned(std::span<const cerium::graph::Plan> plans, cerium::boot::BootstrapConfig boot_config,
                const cerium::ckks::KeyGenerator& keygen, bool cpu, Run&& run) {
  using namespace cerium;
  std::set<std::int64_t> steps;
  bool conjugation = false;
  double magnitude = 0;
  int bootstraps = 0;
  std::size_t key_switches = 0;
  for (const graph::Plan& plan : plans) {
    // A bootstrapper made for the largest value the plans bootstrap on their calibration inputs.
    boot_config.message_bound = std::max(boot_config.message_bound, graph::required_message_bound(plan));
    magnitude = std::max(magnitude, plan.bootstrap_magnitude);
    steps.insert(plan.keys.steps.begin(), plan.keys.steps.end());
    conjugation = conjugation || plan.keys.conjugation;
    bootstraps += plan.bootstraps();
    key_switches += plan.key_switches();
  }
  if (boot_config.message_bound > 1) {
    fmt::print("bootstrapper made for |x| <= {} (largest value bootstrapped on the calibration inputs: {:.2f})\n",
               boot_config.message_bound, magnitude);
  }
  const auto& context = plans.front().program.context();
  const auto start = std::chrono::steady_clock::now();
  const auto since_start = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const std::vector<std::int64_t> step_list(steps.begin(), steps.end());
#if CERIUM_HAS_CUDA
  if (!cpu && cuda::has_cuda_device()) {
    fmt::print("backend: CUDA on {}\n", cuda::device_info(0).name);
    ckks::CudaEvaluator evaluator(context, backend::CudaBackend(context));
    // Made on the device from the generator's seeds (the host's words, milliseconds a key).
    const backend::CudaBackend& gpu = evaluator.backend();
    evaluator.set_relinearization_key(
        std::make_shared<const ckks::RelinearizationKey>(ckks::relinearization_key_on(gpu, keygen)));
    evaluator.set_galois_keys(
        std::make_shared<const ckks::GaloisKeys>(ckks::galois_keys_on(gpu, keygen, step_list, conjugation)));
    boot::CudaBootstrapper bootstrapper(context, boot_config, backend::CudaBackend(context));
    bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(
        bootstrapper.generate_keys(keygen, {}, ckks::KeyStorage::seeded)));
    fmt::print("keys made on the device in {:.1f} s ({} rotation keys for the plan)\n", since_start(),
               steps.size());
    const int status = run(evaluator, bootstrapper);
    const cuda::MemoryStats memory = cuda::memory_stats();
    fmt::print("device memory: peak {:.2f} GiB (keys, cached plaintexts, ciphertexts), {:.2f} GiB held by the pool\n",
               memory.peak / 1073741824.0, memory.reserved / 1073741824.0);
    return status;
  }
#endif
  if (!cpu) {
    // About 46 s a bootstrap and 0.7 s a key switch on one core at N = 2^16 (bench/RESULTS.md).
    const double estimate = 46.0 * bootstraps + 0.7 * static_cast<double>(key_switches);
    fmt::print("no GPU here: on the CPU this takes about {:.1f} hours ({} bootstraps, {} key switches); pass --cpu "
               "to run it anyway\n",
               estimate / 3600, bootstraps, key_switches);
    return 0;
  }
  fmt::print("backend: CPU\n");
  auto relin = std::make_shared<const ckks::RelinearizationKey>(keygen.relinearization_key(ckks::KeyStorage::seeded));
  auto galois = std::make_shared<const ckks::GaloisKeys>(
      keygen.galois_keys(step_list, conjugation, ckks::KeyStorage::seeded));
  ckks::Evaluator evaluator(context);
  evaluator.set_relinearization_key(relin);
  evaluator.set_galois_keys(galois);
  boot::Bootstrapper bootstrapper(context, boot_config);
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(keygen)));
  return run(evaluator, bootstrapper);
}

template <class Run>
int run_planned(const cerium::graph::Plan& plan, cerium::boot::BootstrapConfig boot_config,
                const cerium::ckks::KeyGenerator& keygen, bool cpu, Run&& run) {
  return run_planned(std::span<const cerium::graph::Plan>(&plan, 1), boot_config, keygen, cpu, std::forward<Run>(run));
}
