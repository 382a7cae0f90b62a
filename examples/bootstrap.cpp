// Bootstrapping: encrypt real values at level 1, bootstrap, and report the precision, the levels the result has
// left, the key memory and the time of each step.
//
//   cerium_example_bootstrap                  toy parameters (N = 2^12, insecure), full slots: a few seconds
//   cerium_example_bootstrap --log-n 13       another toy size
//   cerium_example_bootstrap --n16            presets::bootstrappable_n16 (N = 2^16, 128-bit): minutes on a CPU
//   --slots S                                  sparse packing (a power of two below N/2)
//   --no-encapsulation                        bootstrap under the dense secret (needs a larger K; toy sizes only)
//   --repeat R                                time R bootstraps
//   --chain C                                 then C more rounds of (multiply by a fresh encryption of random
//                                             signs of size 0.9..1, bootstrap), printing the precision of each
//   --cpu                                     the CPU backend even where a GPU is present (default: the GPU
//                                             when the build has CUDA and a device is visible)
//   --cache-diagonals on|off|auto             keep the DFT diagonals as plaintexts (fast) or encode each when
//                                             used; auto (default): on the CPU, cached when they take at most half
//                                             the memory available (N = 2^16: 6.4 GiB); on the GPU, cached

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/core/host_memory.hpp"
#include "cerium/core/parallel.hpp"
#if CERIUM_HAS_CUDA
#include "cerium/backend/cuda/device.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#endif

using namespace cerium;
using namespace cerium::ckks;
using namespace cerium::boot;

namespace {

template <class F>
auto timed(const char* what, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  auto result = f();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  fmt::print("  {:<28} {:10.3f} s\n", what, elapsed.count());
  return result;
}

double mib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }
double gib(std::size_t bytes) { return mib(bytes) / 1024.0; }

}  // namespace

struct Options {
  int log_n = 12;
  bool n16 = false;
  bool cpu = false;
  int repeat = 1;
  int chain = 0;
  std::string cache_diagonals = "auto";
  BootstrapConfig config;
};

// Everything after the context: the bootstrapper (make_bootstrapper(context, config)), keys, bootstraps, report.
template <class MakeBootstrapper>
int run(const ContextPtr& context, Options options, MakeBootstrapper make_bootstrapper) {
  BootstrapConfig& config = options.config;
  KeyGenerator keygen(context);
  auto boot = timed("bootstrapper set-up", [&] { return make_bootstrapper(context, config); });
  const auto& levels = boot->levels();
  fmt::print("  slots {}, levels: top {}, after CoeffToSlot {}, after EvalMod {} (EvalMod {}), output {}\n",
             boot->slots(), levels.top, levels.after_coeff_to_slot, levels.after_eval_mod, levels.eval_mod,
             levels.output);
  fmt::print("  {} rotation keys + conjugation\n", boot->rotation_steps().size());
  auto keys = timed("key generation", [&] {
    return std::make_shared<const BootstrapKeys>(boot->generate_keys(keygen, [](const ProgressEvent& e) {
      if (e.done == e.total) fmt::print("    {}: {} done\n", e.task, e.total);
    }));
  });
  timed("keys to the backend", [&] {
    boot->set_keys(keys);
    return 0;
  });
  fmt::print("  key memory {:.1f} MiB, cached diagonals {:.1f} MiB\n", mib(keys->memory_bytes()),
             mib(boot->plaintext_bytes()));

  const auto& evaluator = boot->evaluator();
  const Encoder encoder(context);
  const Encryptor encryptor(keygen.public_key());
  const Decryptor decryptor(keygen.secret_key());
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> x(boot->slots());
  for (auto& v : x) v = uniform(rng);
  const Ciphertext input =
      evaluator.upload(encryptor.encrypt(encoder.encode(x, EncodeOptions{.level = 1, .slots = boot->slots()})));

  Ciphertext output;
  for (int r = 0; r < options.repeat; ++r) {
    // The download waits for the device, so the time is the bootstrap's (plus one copy to the host).
    output = timed("bootstrap (+ download)", [&] {
      Ciphertext out = boot->bootstrap(input);
      (void)evaluator.download(out);
      return out;
    });
  }
  auto report = [&](const Ciphertext& ct, const std::vector<double>& want, const char* what) {
    const auto got = encoder.decode(decryptor.decrypt(evaluator.download(ct)));
    double total = 0, worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double e = std::abs(got[i] - want[i]);
      total += e;
      worst = std::max(worst, e);
    }
    fmt::print("{}: precision mean {:.1f} bits, worst slot {:.1f} bits\n", what,
               -std::log2(total / static_cast<double>(want.size())), -std::log2(worst));
  };
  report(output, x, "bootstrap");
  fmt::print("output: level {} (the application has {} levels before the next bootstrap), scale 2^{:.2f}\n",
             output.level(), output.level() - 1, std::log2(output.scale()));

  // Chained: multiply (one level), bootstrap again.
  std::uniform_real_distribution<double> size(0.9, 1.0);
  std::bernoulli_distribution sign(0.5);
  std::vector<double> want = x;
  for (int round = 1; round <= options.chain; ++round) {
    std::vector<double> w(boot->slots());
    for (auto& v : w) v = sign(rng) ? size(rng) : -size(rng);
    for (std::size_t i = 0; i < w.size(); ++i) want[i] *= w[i];
    const Ciphertext cw = evaluator.upload(encryptor.encrypt(
        encoder.encode(w, EncodeOptions{.level = output.level(), .scale = output.scale(), .slots = boot->slots()})));
    Ciphertext product = evaluator.rescale(evaluator.multiply(output, cw));
    output = timed("multiply + bootstrap", [&] { return boot->bootstrap(product); });
    report(output, want, fmt::format("round {}", round).c_str());
  }
  return 0;
}

int main(int argc, char** argv) {
  Options options;
  BootstrapConfig& config = options.config;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--n16") {
      options.n16 = true;
    } else if (arg == "--cpu") {
      options.cpu = true;
    } else if (arg == "--log-n" && i + 1 < argc) {
      options.log_n = std::atoi(argv[++i]);
    } else if (arg == "--slots" && i + 1 < argc) {
      config.slots = static_cast<std::size_t>(std::atol(argv[++i]));
    } else if (arg == "--no-encapsulation") {
      config.sparse_encapsulation = false;
    } else if (arg == "--chain" && i + 1 < argc) {
      options.chain = std::max(0, std::atoi(argv[++i]));
    } else if (arg == "--repeat" && i + 1 < argc) {
      options.repeat = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--cache-diagonals" && i + 1 < argc &&
               (std::string(argv[i + 1]) == "on" || std::string(argv[i + 1]) == "off" ||
                std::string(argv[i + 1]) == "auto")) {
      options.cache_diagonals = argv[++i];
    } else {
      fmt::print(stderr,
                 "usage: {} [--n16 | --log-n L] [--slots S] [--no-encapsulation] [--repeat R] [--chain C] [--cpu] "
                 "[--cache-diagonals on|off|auto]\n",
                 argv[0]);
      return 2;
    }
  }
  CkksConfig params = options.n16 ? presets::bootstrappable_n16() : presets::bootstrappable_toy(options.log_n);
  if (!config.sparse_encapsulation && !options.n16) {
    // Without encapsulation the secret itself must be sparse for K = 17 to hold.
    params.secret = SecretDistribution::hamming_weight;
    params.hamming_weight = 32;
  }
  const ContextPtr context = timed("context", [&] { return Context::create(params); });
  fmt::print("{}\n", context->parameters().describe());
#if CERIUM_HAS_CUDA
  if (!options.cpu && cuda::has_cuda_device()) {
    fmt::print("backend: CUDA on {}\n", cuda::device_info(0).name);
    return run(context, options, [](const ContextPtr& c, const BootstrapConfig& b) {
      return std::make_unique<CudaBootstrapper>(c, b, backend::CudaBackend(c));
    });
  }
#endif
  fmt::print("backend: CPU ({} threads: OMP_NUM_THREADS or one per core)\n", cpu_threads());
  // The diagonals at N = 2^16 take gigabytes as plaintexts: cached when half the available memory holds them.
  config.cache_plaintexts = options.cache_diagonals != "off";
  if (options.cache_diagonals == "auto") {
    BootstrapConfig planned = config;
    planned.cache_plaintexts = false;
    const std::size_t needed = Bootstrapper(context, planned).cached_plaintext_bytes();
    const std::size_t available = available_host_memory();
    config.cache_plaintexts = needed <= available / 2;
    fmt::print("diagonals as plaintexts: {:.2f} GiB of {:.2f} GiB available: {}\n", gib(needed), gib(available),
               config.cache_plaintexts ? "cached" : "encoded when used (--cache-diagonals on to cache anyway)");
  }
  return run(context, options,
             [](const ContextPtr& c, const BootstrapConfig& b) { return std::make_unique<Bootstrapper>(c, b); });
}
