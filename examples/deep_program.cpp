// A deep encrypted program written once, traced into a graph, planned (bootstraps placed, rotation keys inferred,
// memory known before running), explained, and run on the GPU when there is one, else on the CPU; checked
// against the same code run on doubles.
//
//   cerium_example_deep_program                 toy bootstrappable parameters (N = 2^12, insecure): seconds
//   --steps S                                   the depth: S rounds of y <- y^2 / 2 + x / 4 (2 levels each; 16)
//   --explain                                   print the plan node by node (by default: its summary)
//   --dot FILE                                  also write the plan as Graphviz DOT (dot -Tsvg FILE > plan.svg)
//   --cpu                                       the CPU backend even where a GPU is present

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/tracer.hpp"
#if CERIUM_HAS_CUDA
#include "cerium/backend/cuda/device.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#endif

using namespace cerium;

namespace {

// The model, for any ops object: graph::Tracer (traces), graph::Eager (computes now), or the doubles below.
// S rounds of a contracting polynomial map, then the mean of each group of 8 neighbouring slots.
template <class Ops>
typename Ops::Value model(Ops& ops, const typename Ops::Value& x, int steps) {
  typename Ops::Value y = ops.multiply(x, 0.5);
  for (int i = 0; i < steps; ++i) y = ops.add(ops.multiply(ops.multiply(y, y), 0.5), ops.multiply(x, 0.25));
  for (const std::int64_t r : {1, 2, 4}) y = ops.add(y, ops.rotate(y, r));
  return ops.multiply(y, 1.0 / 8);
}

// The same operations on slot vectors.
struct Doubles {
  using Value = std::vector<std::complex<double>>;
  Value add(const Value& a, const Value& b) const {
    Value out(a);
    for (std::size_t i = 0; i < a.size(); ++i) out[i] += b[i];
    return out;
  }
  Value multiply(const Value& a, const Value& b) const {
    Value out(a);
    for (std::size_t i = 0; i < a.size(); ++i) out[i] *= b[i];
    return out;
  }
  Value multiply(const Value& a, double c) const {
    Value out(a);
    for (auto& v : out) v *= c;
    return out;
  }
  Value rotate(const Value& a, std::int64_t r) const {
    Value out(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[(i + static_cast<std::size_t>(r)) % a.size()];
    return out;
  }
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <backend::PolyBackend B>
int run(const graph::Plan& plan, const ckks::BasicEvaluator<B>& evaluator,
        const boot::BasicBootstrapper<B>& bootstrapper, const ckks::KeyGenerator& keygen, int steps) {
  const auto& context = plan.program.context();
  const ckks::Encoder encoder(context);
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> dist(-1, 1);
  Doubles::Value x(context->parameters().max_slots());
  for (auto& v : x) v = dist(rng);

  std::vector<ckks::Ciphertext> inputs;
  inputs.push_back(ckks::Encryptor(keygen.public_key()).encrypt(encoder.encode(x, plan.input_encoding(0))));
  graph::Executor<B> executor(plan, evaluator, &bootstrapper);
  const auto start = std::chrono::steady_clock::now();
  auto outputs = executor.run(std::move(inputs), [&](const graph::RunProgress& p) {
    if (p.nodes_done == p.nodes) {
      fmt::print("run: {} nodes, {} bootstraps in {:.3f} s\n", p.nodes, p.bootstraps_done, p.elapsed_seconds);
    }
  });
  const double elapsed = seconds_since(start);
  Doubles doubles;
  const Doubles::Value want = model(doubles, x, steps);
  const auto got = encoder.decode(ckks::Decryptor(keygen.secret_key()).decrypt(evaluator.download(outputs.at(0))));
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  fmt::print("precision against doubles: {:.1f} bits (worst slot), {:.3f} s in all\n", -std::log2(worst), elapsed);
  return -std::log2(worst) >= 12 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 16;
  bool cpu = false, full_table = false;
  std::string dot_file;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--steps" && i + 1 < argc) {
      steps = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--dot" && i + 1 < argc) {
      dot_file = argv[++i];
    } else if (arg == "--cpu") {
      cpu = true;
    } else if (arg == "--explain") {
      full_table = true;
    } else {
      fmt::print(stderr, "usage: {} [--steps S] [--explain] [--dot FILE] [--cpu]\n", argv[0]);
      return 2;
    }
  }
  const auto context = ckks::Context::create(ckks::presets::bootstrappable_toy(12, 24));
  fmt::print("{}\n", context->parameters().describe());

  // 1. Trace the model once.
  graph::Tracer tracer(context);
  tracer.output(model(tracer, tracer.input("x"), steps), "y");
  graph::Program program = std::move(tracer).finish();

  // 2. Plan it for a bootstrapper: bootstraps placed, keys inferred, memory known.
  boot::BootstrapConfig boot_config;
  boot::Bootstrapper cpu_bootstrapper(context, boot_config);
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(cpu_bootstrapper);
  const graph::Plan plan = graph::plan(std::move(program), options);
  fmt::print("{}", full_table ? graph::explain(plan) : graph::summary(plan));
  if (!dot_file.empty()) {
    std::ofstream(dot_file) << graph::to_dot(plan);
    fmt::print("plan written to {}\n", dot_file);
  }

  // 3. Only the keys it needs.
  const ckks::KeyGenerator keygen(context);
  auto relin = std::make_shared<const ckks::RelinearizationKey>(keygen.relinearization_key());
  auto galois = std::make_shared<const ckks::GaloisKeys>(keygen.galois_keys(plan.keys.steps, plan.keys.conjugation));
  auto boot_keys = std::make_shared<const boot::BootstrapKeys>(cpu_bootstrapper.generate_keys(keygen));

  // 4. Run it where the work is fastest.
#if CERIUM_HAS_CUDA
  if (!cpu && cuda::has_cuda_device()) {
    fmt::print("backend: CUDA on {}\n", cuda::device_info(0).name);
    ckks::CudaEvaluator evaluator(context, backend::CudaBackend(context));
    evaluator.set_relinearization_key(relin);
    evaluator.set_galois_keys(galois);
    boot::CudaBootstrapper bootstrapper(context, boot_config, backend::CudaBackend(context));
    bootstrapper.set_keys(boot_keys);
    return run(plan, evaluator, bootstrapper, keygen, steps);
  }
#endif
  (void)cpu;
  fmt::print("backend: CPU\n");
  ckks::Evaluator evaluator(context);
  evaluator.set_relinearization_key(relin);
  evaluator.set_galois_keys(galois);
  cpu_bootstrapper.set_keys(boot_keys);
  return run(plan, evaluator, cpu_bootstrapper, keygen, steps);
}
