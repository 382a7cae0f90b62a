// CKKS operations on the CPU backend at N = 2^14 (presets::leveled_n14) and N = 2^16 (presets::leveled_n16), at
// the top level: encode, encrypt, multiply + relinearize + rescale, rotate, 8 hoisted rotations, and one key switch.
// Counters: N, limbs (of the operands), dnum (key-switching digits at that level).
//
// Key generation at N = 2^16 takes a while on the CPU, so each preset's set-up is built once (static) and each key
// only when the first benchmark that needs it runs: filter with --benchmark_filter to skip the ones you do not want.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/rlwe/key_switch.hpp"

namespace {

using namespace cerium::ckks;

const std::vector<std::int64_t> hoisted_steps = {1, 2, 3, 4, 5, 6, 7, 8};

struct Setup {
  ContextPtr context;
  KeyGenerator keygen;
  Encoder encoder;
  Encryptor encryptor;
  Evaluator evaluator;
  std::vector<double> values;
  Ciphertext a, b;

  explicit Setup(const CkksConfig& config)
      : context(Context::create(config)),
        keygen(context),
        encoder(context),
        encryptor(keygen.public_key()),
        evaluator(context),
        values(context->ring_degree() / 2) {
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (double& v : values) v = uniform(rng);
    a = encryptor.encrypt(encoder.encode(values));
    b = encryptor.encrypt(encoder.encode(values));
  }

  void need_relinearization_key() {
    if (!evaluator.relinearization_key()) {
      evaluator.set_relinearization_key(std::make_shared<const RelinearizationKey>(keygen.relinearization_key()));
    }
  }
  void need_rotation_keys() {
    if (!evaluator.galois_keys()) {
      evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(keygen.galois_keys(hoisted_steps)));
    }
  }
};

Setup& setup(int log_n) {
  static std::map<int, std::unique_ptr<Setup>> setups;
  auto& entry = setups[log_n];
  if (!entry) entry = std::make_unique<Setup>(log_n == 14 ? presets::leveled_n14() : presets::leveled_n16());
  return *entry;
}

void set_counters(benchmark::State& state, const Setup& s) {
  const int level = s.context->max_level();
  state.counters["N"] = static_cast<double>(s.context->ring_degree());
  state.counters["limbs"] = static_cast<double>(s.context->parameters().limbs_at(level));
  state.counters["dnum"] = static_cast<double>(s.context->digit_count(level));
}

void BM_Encode(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(s.encoder.encode(s.values));
  set_counters(state, s);
}

void BM_Encrypt(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  const Plaintext plaintext = s.encoder.encode(s.values);
  for (auto _ : state) benchmark::DoNotOptimize(s.encryptor.encrypt(plaintext));
  set_counters(state, s);
}

void BM_MultiplyRelinRescale(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  s.need_relinearization_key();
  for (auto _ : state) benchmark::DoNotOptimize(s.evaluator.rescale(s.evaluator.multiply(s.a, s.b)));
  set_counters(state, s);
}

// The same words in one call: the ModDown's and the rescale's corrections share one forward NTT per kept limb.
void BM_MultiplyRescale(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  s.need_relinearization_key();
  for (auto _ : state) benchmark::DoNotOptimize(s.evaluator.multiply_rescale(s.a, s.b));
  set_counters(state, s);
}

void BM_Rotate(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  s.need_rotation_keys();
  for (auto _ : state) benchmark::DoNotOptimize(s.evaluator.rotate(s.a, 1));
  set_counters(state, s);
}

void BM_RotateHoisted8(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  s.need_rotation_keys();
  for (auto _ : state) benchmark::DoNotOptimize(s.evaluator.rotate_hoisted(s.a, hoisted_steps));
  set_counters(state, s);
  state.counters["rotations"] = static_cast<double>(hoisted_steps.size());
}

// ModUp of every digit, inner product with the key, ModDown: the core of relinearization and rotation.
void BM_KeySwitch(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  s.need_relinearization_key();
  const SwitchingKey& key = s.evaluator.relinearization_key()->key();
  const int level = s.a.level();
  for (auto _ : state) benchmark::DoNotOptimize(key_switch(*s.context, s.a.part(1), level, key));
  set_counters(state, s);
}

#define CERIUM_CKKS_BENCH(name) BENCHMARK(name)->Arg(14)->Arg(16)->Unit(benchmark::kMillisecond)

CERIUM_CKKS_BENCH(BM_Encode);
CERIUM_CKKS_BENCH(BM_Encrypt);
CERIUM_CKKS_BENCH(BM_MultiplyRelinRescale);
CERIUM_CKKS_BENCH(BM_MultiplyRescale);
CERIUM_CKKS_BENCH(BM_KeySwitch);
CERIUM_CKKS_BENCH(BM_Rotate);
CERIUM_CKKS_BENCH(BM_RotateHoisted8);

}  // namespace
