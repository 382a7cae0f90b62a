// Planned programs on the CUDA backend give exactly the CPU executor's words (hoisted rotations included), and the
// eager twin on the GPU gives the same words as the GPU executor without hoisting.

#include <memory>
#include <vector>

#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/graph/eager.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/tracer.hpp"
#include "gpu_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "unit/graph/graph_test_support.hpp"

using namespace evaluator_test;

TEST_CASE("CUDA executor equals the CPU executor word for word", "[gpu][program]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(toy(12, 6, 2, 2), {.relinearization = true});
  auto rng = cerium_test::make_rng(4411);
  for (int trial = 0; trial < 6; ++trial) {
    const graph_test::ProgramShape shape{.seed = rng(), .operations = 16, .depth = 5, .slots = 16};
    INFO("trial " << trial << ", program seed " << shape.seed);
    graph::Tracer tracer(f.context);
    graph_test::random_program(tracer, {tracer.input("x", shape.slots), tracer.input("y", shape.slots)}, shape);
    graph::Program program = std::move(tracer).finish();
    for (const bool hoist : {true, false}) {
      graph::PlanOptions options;
      options.hoist_rotations = hoist;
      const graph::Plan plan = graph::plan(program, options);
      f.evaluator.set_galois_keys(
          std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps, plan.keys.conjugation)));
      CudaEvaluator gpu(f.context, backend::CudaBackend(f.context));
      gpu.set_relinearization_key(f.evaluator.relinearization_key());
      gpu.set_galois_keys(f.evaluator.galois_keys());

      const auto inputs = [&] {
        std::vector<Ciphertext> v;
        v.push_back(f.encryptor.encrypt(f.encoder.encode(random_complex(rng, shape.slots), plan.input_encoding(0))));
        v.push_back(f.encryptor.encrypt(f.encoder.encode(random_complex(rng, shape.slots), plan.input_encoding(1))));
        return v;
      }();
      const auto copies = [&] {
        std::vector<Ciphertext> v;
        for (const auto& c : inputs) v.push_back(c.clone());
        return v;
      };
      const auto want = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(copies());
      const auto got = graph::Executor<backend::CudaBackend>(plan, gpu).run(copies());
      REQUIRE(got.size() == want.size());
      for (std::size_t o = 0; o < got.size(); ++o) CHECK(same_words(gpu.download(got[o]), want[o]));
      if (!hoist) {
        graph::Eager<backend::CudaBackend> eager(gpu);
        std::vector<Ciphertext> values;
        for (const auto& c : inputs) values.push_back(eager.input(c));
        graph_test::random_program(eager, std::move(values), shape);
        for (std::size_t o = 0; o < got.size(); ++o) CHECK(same_words(gpu.download(eager.outputs()[o]), want[o]));
      }
    }
  }
}
