// Out of device memory at every allocation point (issue 26): a bootstrap and a traced program are run once to count
// their allocation requests, then once per request with that request failing (cuda::inject_allocation_failure, as
// a full device would). Every failure must be a typed OutOfMemoryError; the input, the keys and the evaluator stay
// valid; no memory stays held; the same call then succeeds with the words of the run that never failed. A last
// pass steps the memory limit down from the peak and requires the same.

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "cerium/backend/cuda/memory.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/tracer.hpp"
#include "gpu_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;

namespace {

struct ClearInjection {
  ~ClearInjection() {
    cuda::inject_allocation_failure(-1);
    cuda::set_memory_limit(0);
  }
};

// Runs `call` once per allocation request it makes, that request failing; checks each failure and what follows.
// `call` returns the result's host copy; `check_intact` checks what existed before. Returns the requests walked.
template <class Call, class Intact>
std::size_t walk_allocations(Call&& call, Intact&& check_intact) {
  const ClearInjection clear;
  const Ciphertext want = call();
  const std::size_t held = cuda::memory_stats().in_use;
  const std::size_t before = cuda::allocation_requests();
  (void)call();
  const std::size_t requests = cuda::allocation_requests() - before;
  REQUIRE(requests > 0);
  std::size_t typed = 0;
  for (std::size_t k = 0; k < requests; ++k) {
    cuda::inject_allocation_failure(static_cast<long long>(k));
    try {
      (void)call();
      FAIL("request " << k << " of " << requests << " was to fail");
    } catch (const OutOfMemoryError&) {
      ++typed;
    }
    cuda::inject_allocation_failure(-1);
    cuda::work_stream().synchronize();
    INFO("after the failure of request " << k << " of " << requests);
    CHECK(cuda::memory_stats().in_use == held);  // every temporary of the failed call freed
    if (k % 16 == 0 || k + 1 == requests) check_intact();
  }
  CHECK(typed == requests);
  CHECK(same_words(call(), want));
  return requests;
}

}  // namespace

TEST_CASE("A bootstrap that runs out of device memory at any allocation fails cleanly", "[gpu][errors][oom][bootstrap]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(presets::bootstrappable_toy(11), {.relinearization = false});
  boot::CudaBootstrapper boot(f.context, boot::BootstrapConfig{}, backend::CudaBackend(f.context));
  boot.set_keys(std::make_shared<const boot::BootstrapKeys>(boot.generate_keys(f.keygen)));
  const auto& ev = boot.evaluator();
  auto rng = cerium_test::make_rng(2601);
  const Ciphertext host_input = f.encrypt(random_real(rng, boot.slots()), 1, boot.slots());
  const Ciphertext input = ev.upload(host_input);
  const std::size_t requests = walk_allocations(
      [&] { return ev.download(boot.bootstrap(input)); },
      [&] { CHECK(same_words(ev.download(input), host_input)); });
  INFO(requests << " allocation requests in a bootstrap at N = 2^11");
  CHECK(requests > 50);
  // The figure the reliability record cites: faults injected, each a typed error with nothing leaked.
  WARN("bootstrap at N = 2^11: " << requests << " allocation requests, each made to fail in turn");

  // The limit stepped down from the bootstrap's peak: every step either succeeds with the same words or throws
  // OutOfMemoryError, and the bootstrap succeeds once it is lifted.
  const ClearInjection clear;
  const Ciphertext want = ev.download(boot.bootstrap(input));
  cuda::work_stream().synchronize();
  const std::size_t held = cuda::memory_stats().in_use;
  cuda::reset_peak_memory();
  (void)boot.bootstrap(input);
  const std::size_t peak = cuda::memory_stats().peak;
  REQUIRE(peak > held);
  int failures = 0;
  for (int step = 0; step <= 16; ++step) {
    cuda::set_memory_limit(held + (peak - held) * static_cast<std::size_t>(16 - step) / 16);
    std::optional<Ciphertext> got;
    try {
      got = ev.download(boot.bootstrap(input));
    } catch (const OutOfMemoryError&) {
      ++failures;
    }
    if (got.has_value()) CHECK(same_words(*got, want));
    cuda::set_memory_limit(0);
    CHECK(cuda::memory_stats().in_use == held);
  }
  CHECK(failures >= 15);  // everything below the peak fails
  CHECK(same_words(ev.download(boot.bootstrap(input)), want));
}

TEST_CASE("A traced program that runs out of device memory at any allocation fails cleanly, keys and plans included",
          "[gpu][errors][oom][program]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(toy(12, 4, 2, 2), {.relinearization = true});
  auto rng = cerium_test::make_rng(2602);
  graph::Tracer t(f.context);
  const auto x = t.input("x", 64), y = t.input("y", 64);
  const auto p = t.multiply(x, y);
  const auto q = t.add(t.rotate(p, 3), t.multiply(x, graph::PlainVector(random_real(rng, 64))));
  t.output(t.add(t.multiply(q, q), t.rotate(y, 5)), "z");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  f.evaluator.set_galois_keys(
      std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps, plan.keys.conjugation)));
  std::vector<Ciphertext> inputs;
  inputs.push_back(f.encryptor.encrypt(f.encoder.encode(random_complex(rng, 64), plan.input_encoding(0))));
  inputs.push_back(f.encryptor.encrypt(f.encoder.encode(random_complex(rng, 64), plan.input_encoding(1))));
  // Each call makes its own evaluator (keys uploaded, plans built on first use): those allocations fail in turn
  // too. The host inputs and keys must come through every failure untouched.
  const auto call = [&] {
    CudaEvaluator gpu(f.context, backend::CudaBackend(f.context));
    gpu.set_relinearization_key(f.evaluator.relinearization_key());
    gpu.set_galois_keys(f.evaluator.galois_keys());
    std::vector<Ciphertext> copies;
    for (const auto& c : inputs) copies.push_back(c.clone());
    const graph::Executor<backend::CudaBackend> executor(plan, gpu, nullptr, {.cache_plaintexts = true});
    return gpu.download(executor.run(std::move(copies)).at(0));
  };
  const Ciphertext first = inputs[0].clone();
  const std::size_t requests = walk_allocations(call, [&] { CHECK(same_words(inputs[0], first)); });
  INFO(requests << " allocation requests in the program's run with a fresh evaluator");
  CHECK(requests > 10);
  WARN("traced program: " << requests << " allocation requests, each made to fail in turn");
}
