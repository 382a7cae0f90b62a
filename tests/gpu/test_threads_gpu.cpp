// Several host threads sharing one GPU: each thread has its own CudaEvaluator on the same device (one work stream,
// one memory pool, one plan cache), runs its own chain of operations on its own inputs, and must get exactly the
// CPU evaluator's words, whatever the interleaving of the threads' launches, allocations and first-use plans.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cerium/ckks/cuda_evaluator.hpp"
#include "gpu_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;

namespace {

// multiply, relinearize, rescale, rotate, add: a chain that touches the key switch, the rescale and the pool.
template <class Evaluator>
Ciphertext chain(const Evaluator& ev, const Ciphertext& x, const Ciphertext& y, int rounds) {
  Ciphertext a = x.clone();
  for (int r = 0; r < rounds; ++r) {
    Ciphertext p = ev.rescale(ev.relinearize(ev.multiply(a, y)));
    Ciphertext turned = ev.rotate(p, 1 + r);
    a = ev.add(p, turned);
    if (a.level() <= 1) break;
  }
  return a;
}

}  // namespace

TEST_CASE("Several host threads sharing one GPU get the CPU's words", "[gpu][threads]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(toy(14, 6, 2, 3), KeyRequest{.relinearization = true, .rotations = {1, 2, 3, 4}});
  auto rng = cerium_test::make_rng(4413);
  constexpr int kThreads = 4, kRounds = 4;
  std::vector<Ciphertext> xs, ys, want;
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(f.encryptor.encrypt(f.encoder.encode(random_complex(rng, f.max_slots()))));
    ys.push_back(f.encryptor.encrypt(f.encoder.encode(random_complex(rng, f.max_slots()))));
    want.push_back(chain(f.evaluator, xs.back(), ys.back(), kRounds));
  }
  std::vector<Ciphertext> got(kThreads);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        // Each thread its own evaluator (a fresh backend: plans built concurrently on first use).
        CudaEvaluator gpu(f.context, backend::CudaBackend(f.context));
        gpu.set_relinearization_key(f.evaluator.relinearization_key());
        gpu.set_galois_keys(f.evaluator.galois_keys());
        for (int repeat = 0; repeat < 3; ++repeat) {
          got[t] = gpu.download(chain(gpu, gpu.upload(xs[t]), gpu.upload(ys[t]), kRounds));
        }
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t << ": " << failures[t]);
    REQUIRE(failures[t].empty());
    CHECK(same_words(got[t], want[t]));
  }
}
