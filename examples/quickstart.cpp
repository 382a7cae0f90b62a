// Quickstart: encrypt a vector, evaluate 0.5 x^2 + x - 0.25 on it, rotate the result by one slot, decrypt, and
// compare with the same computation in the clear. Parameters: presets::leveled_n14 (N = 2^14, 8192 slots, scale
// 2^56, 4 levels, 128-bit secure). Runs on the GPU when the build has CUDA and a device is visible (the same
// evaluator code over the CUDA backend, which gives the CPU's words), else on the CPU; --cpu forces the CPU.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/key_generator.hpp"
#if CERIUM_HAS_CUDA
#include "cerium/backend/cuda/device.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#endif

using namespace cerium::ckks;

namespace {

// Runs f, prints how long it took, returns its result.
template <class F>
auto timed(const char* what, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  auto result = f();
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  fmt::print("  {:<34} {:9.2f} ms\n", what, elapsed.count());
  return result;
}

// The computation on any evaluator: inputs are uploaded to where it computes, the result downloaded.
template <class Eval>
int run(const ContextPtr& context, Eval& evaluator, const char* where) {
  fmt::print("Cerium quickstart on {}: {}\n\n", where, context->parameters().describe());

  // Keys: a secret key, the public key to encrypt with, the relinearization key for products and one rotation key.
  KeyGenerator keygen(context);
  const PublicKey public_key = timed("public key", [&] { return keygen.public_key(); });
  auto relin_key = timed("relinearization key",
                         [&] { return std::make_shared<const RelinearizationKey>(keygen.relinearization_key()); });
  auto galois_keys =
      timed("rotation key (step 1)", [&] { return std::make_shared<const GaloisKeys>(keygen.galois_keys({1})); });

  const Encoder encoder(context);
  const Encryptor encryptor(public_key);
  const Decryptor decryptor(keygen.secret_key());
  timed("keys to the evaluator", [&] {
    evaluator.set_relinearization_key(relin_key);
    evaluator.set_galois_keys(galois_keys);
    return 0;
  });

  // The input: one value in [-1, 1] per slot.
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> x(context->ring_degree() / 2);
  for (double& v : x) v = uniform(rng);

  const Ciphertext ct =
      timed("encode + encrypt + upload", [&] { return evaluator.upload(encryptor.encrypt(encoder.encode(x))); });

  // 0.5 x^2 + x - 0.25 as (0.5 x) x + x - 0.25: the constant multiply and the product each spend one level; adding
  // x (still at the top level) brings it down to the product's level and scale automatically.
  const auto evaluate = [&] {
    Ciphertext half_x = evaluator.rescale(evaluator.multiply(ct, 0.5));
    Ciphertext y = evaluator.rescale(evaluator.multiply(half_x, ct));
    evaluator.add_inplace(y, ct);
    evaluator.sub_inplace(y, 0.25);
    return evaluator.rotate(y, 1);
  };
  (void)evaluator.download(evaluate());  // a first run builds the backend's plans
  const Ciphertext result = timed("0.5 x^2 + x - 0.25, rotate by 1", [&] {
    Ciphertext r = evaluate();
    (void)evaluator.download(r);  // waits for the device
    return r;
  });

  const std::vector<double> decoded = timed(
      "download + decrypt + decode", [&] { return encoder.decode_real(decryptor.decrypt(evaluator.download(result))); });

  // The same in the clear: slot i of the rotated result holds the polynomial at x[i + 1].
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[(i + 1) % x.size()];
    worst = std::max(worst, std::abs(decoded[i] - (0.5 * v * v + v - 0.25)));
  }
  fmt::print("\n  slots {}, result at level {} of {}, scale 2^{:.2f}\n", x.size(), result.level(), context->max_level(),
             std::log2(result.scale()));
  fmt::print("  first slots: {:.6f} {:.6f} {:.6f} (expected {:.6f} {:.6f} {:.6f})\n", decoded[0], decoded[1],
             decoded[2], 0.5 * x[1] * x[1] + x[1] - 0.25, 0.5 * x[2] * x[2] + x[2] - 0.25,
             0.5 * x[3] * x[3] + x[3] - 0.25);
  fmt::print("  max error 2^{:.1f}: {:.1f} bits of precision\n", std::log2(worst), -std::log2(worst));
  return -std::log2(worst) > 20 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool force_cpu = argc > 1 && std::string(argv[1]) == "--cpu";
  const ContextPtr context = Context::create(presets::leveled_n14());
#if CERIUM_HAS_CUDA
  if (!force_cpu && cerium::cuda::has_cuda_device()) {
    CudaEvaluator evaluator(context, cerium::backend::CudaBackend(context));
    return run(context, evaluator, cerium::cuda::device_info(0).name.c_str());
  }
#endif
  (void)force_cpu;
  Evaluator evaluator(context);
  return run(context, evaluator, "the CPU");
}
