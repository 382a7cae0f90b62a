// Evaluator operations on the CUDA backend at N = 2^16, 40 limbs (two-prime levels of 28 bits), dnum 3 and 4:
// multiply + relinearize + rescale (two calls, and fused), rotate, 8 hoisted rotations, rescale; and the upload of
// a relinearization key, seeded (expanded on the device) against expanded; and three of them at lower levels (time
// against limbs).
//
// Each is timed two ways with CUDA events after warm-up, median of 20: `eager` issues the evaluator call from
// the host (what a program sees, host overhead included whenever the GPU waits for it), `graph` replays the same
// call captured once as a CUDA graph (the device time of its kernels). The floor is the bytes the operation must
// move (inputs and outputs once, the key limbs it uses once) over the copy bandwidth measured in this process.
#include <benchmark/benchmark.h>

#include <chrono>
#include <complex>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cerium/backend/cuda/memory.hpp"
#include "cerium/backend/cuda/timer.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "gpu_bench_support.hpp"

namespace {

using namespace cerium;
using namespace cerium::ckks;

const std::vector<std::int64_t> kHoisted = {1, 2, 3, 4, 5, 6, 7, 8};

struct Setup {
  ContextPtr context;
  std::unique_ptr<CudaEvaluator> evaluator;
  Ciphertext x, y;
  Plaintext p;
  std::size_t limbs = 0, alpha = 0, dnum = 0;
  double limb_bytes = 0;
};

Setup& setup(int dnum) {
  static std::map<int, std::unique_ptr<Setup>> cache;
  auto& slot = cache[dnum];
  if (slot) return *slot;
  slot = std::make_unique<Setup>();
  Setup& s = *slot;
  s.context = Context::create(cerium_bench::evaluator_bench_config(dnum));
  KeyGenerator keygen(s.context);
  s.evaluator = std::make_unique<CudaEvaluator>(s.context, backend::CudaBackend(s.context));
  s.evaluator->set_relinearization_key(
      std::make_shared<const RelinearizationKey>(keygen.relinearization_key(KeyStorage::seeded)));
  s.evaluator->set_galois_keys(std::make_shared<const GaloisKeys>(keygen.galois_keys(kHoisted, false, KeyStorage::seeded)));
  Encoder encoder(s.context);
  Encryptor encryptor(keygen.secret_key());
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> values(s.context->ring_degree() / 2);
  for (auto& v : values) v = dist(rng);
  s.x = s.evaluator->upload(encryptor.encrypt(encoder.encode(values)));
  for (auto& v : values) v = dist(rng);
  s.y = s.evaluator->upload(encryptor.encrypt(encoder.encode(values)));
  s.p = s.evaluator->upload(encoder.encode(values));
  s.limbs = s.context->parameters().limbs_at(s.context->max_level());
  s.alpha = s.context->parameters().alpha();
  s.dnum = s.context->digit_count(s.context->max_level());
  s.limb_bytes = 4.0 * static_cast<double>(s.context->ring_degree());
  return s;
}

enum class Mode { eager, graph };

// Median device time of one call in seconds.
double time_call(const std::function<void()>& call, Mode mode) {
  const auto& stream = cuda::work_stream();
  for (int i = 0; i < 3; ++i) call();  // plans, pool, clocks
  stream.synchronize();
  if (mode == Mode::eager) {
    cerium_bench::profile_once(stream, call);
    return cerium_bench::median_call_seconds(call, 20, 0);  // warmed up above
  }
  cerium_bench::CapturedGraph graph(stream, 1, [&](std::size_t) { call(); });
  return cerium_bench::median_call_seconds([&] { graph.replay(); }, 20, 0);
}

// limbs and dnum: the operands' (the top level's unless given).
void report(benchmark::State& state, const Setup& s, double seconds, double traffic_limbs, std::size_t limbs = 0,
            std::size_t dnum = 0) {
  const double bytes = traffic_limbs * s.limb_bytes;
  const double floor = bytes / cerium_bench::copy_bandwidth();
  state.SetIterationTime(seconds);
  state.counters["N"] = static_cast<double>(s.context->ring_degree());
  state.counters["limbs"] = static_cast<double>(limbs != 0 ? limbs : s.limbs);
  state.counters["dnum"] = static_cast<double>(dnum != 0 ? dnum : s.dnum);
  state.counters["alpha"] = static_cast<double>(s.alpha);
  state.counters["us"] = seconds * 1e6;
  state.counters["GB_s"] = bytes / seconds / 1e9;
  state.counters["floor_ratio"] = seconds / floor;
  state.counters["copy_GB_s"] = cerium_bench::copy_bandwidth() / 1e9;
  state.SetLabel(cerium_bench::device_label());
}

double key_limbs(const Setup& s) { return cerium_bench::key_limbs(s.limbs, s.dnum, s.alpha); }

void BM_multiply_relinearize_rescale_gpu(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  const auto mode = static_cast<Mode>(state.range(1));
  double seconds = 0;
  for (auto _ : state) {
    seconds = time_call([&] { benchmark::DoNotOptimize(s.evaluator->rescale(s.evaluator->multiply(s.x, s.y))); }, mode);
    report(state, s, seconds, cerium_bench::multiply_rescale_limbs(s.limbs, 2, key_limbs(s)));
  }
}

// The same words through the fused call: the relinearization's ModDown and the rescale share one forward NTT.
void BM_multiply_rescale_gpu(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  const auto mode = static_cast<Mode>(state.range(1));
  double seconds = 0;
  for (auto _ : state) {
    seconds = time_call([&] { benchmark::DoNotOptimize(s.evaluator->multiply_rescale(s.x, s.y)); }, mode);
    report(state, s, seconds, cerium_bench::multiply_rescale_limbs(s.limbs, 2, key_limbs(s)));
  }
}

void BM_rotate_gpu(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  const auto mode = static_cast<Mode>(state.range(1));
  for (auto _ : state) {
    const double seconds = time_call([&] { benchmark::DoNotOptimize(s.evaluator->rotate(s.x, 1)); }, mode);
    report(state, s, seconds, cerium_bench::rotate_limbs(s.limbs, key_limbs(s)));
  }
}

void BM_rotate_hoisted8_gpu(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  const auto mode = static_cast<Mode>(state.range(1));
  for (auto _ : state) {
    const double seconds = time_call([&] { benchmark::DoNotOptimize(s.evaluator->rotate_hoisted(s.x, kHoisted)); }, mode);
    report(state, s, seconds, 2.0 * s.limbs + 8 * (key_limbs(s) + 2.0 * s.limbs));
  }
}

void BM_rescale_gpu(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  const auto mode = static_cast<Mode>(state.range(1));
  for (auto _ : state) {
    const double seconds = time_call([&] { benchmark::DoNotOptimize(s.evaluator->rescale(s.x)); }, mode);
    report(state, s, seconds, cerium_bench::rescale_limbs(s.limbs, 2));
  }
}

// The stages of a key switch and of a multiplication, for the breakdown: the tensor product, ModUp of every
// digit, the inner product with the key plus ModDown, and relinearization as a whole.
void BM_tensor_gpu(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  const auto mode = static_cast<Mode>(state.range(1));
  for (auto _ : state) {
    const double seconds =
        time_call([&] { benchmark::DoNotOptimize(s.evaluator->multiply_no_relin(s.x, s.y)); }, mode);
    report(state, s, seconds, 4.0 * s.limbs + 3.0 * s.limbs);
  }
}

void BM_relinearize_gpu(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  const auto mode = static_cast<Mode>(state.range(1));
  const Ciphertext product = s.evaluator->multiply_no_relin(s.x, s.y);
  for (auto _ : state) {
    const double seconds = time_call([&] { benchmark::DoNotOptimize(s.evaluator->relinearize(product)); }, mode);
    report(state, s, seconds, 3.0 * s.limbs + key_limbs(s) + 2.0 * s.limbs);
  }
}

void BM_mod_up_gpu(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  const auto mode = static_cast<Mode>(state.range(1));
  const auto& backend = s.evaluator->backend();
  const int level = s.context->max_level();
  for (auto _ : state) {
    const double seconds =
        time_call([&] { benchmark::DoNotOptimize(backend.mod_up(*s.context, s.x.part(1), level)); }, mode);
    report(state, s, seconds, static_cast<double>(s.limbs + s.dnum * (s.limbs + s.alpha)));
  }
}

void BM_key_switch_apply_gpu(benchmark::State& state) {
  Setup& s = setup(static_cast<int>(state.range(0)));
  const auto mode = static_cast<Mode>(state.range(1));
  const auto& backend = s.evaluator->backend();
  const int level = s.context->max_level();
  const auto digits = backend.mod_up(*s.context, s.x.part(1), level);
  const auto& key = s.evaluator->relinearization_key()->key();
  for (auto _ : state) {
    const double seconds = time_call(
        [&] { benchmark::DoNotOptimize(backend.key_switch_apply(*s.context, digits, key, nullptr)); }, mode);
    report(state, s, seconds, static_cast<double>(s.dnum * (s.limbs + s.alpha)) + key_limbs(s) + 2.0 * s.limbs);
  }
}

// Uploading a relinearization key (dnum 3): expanded on the host and copied whole, against seeded (b copied, a
// expanded on the device from its seed). Wall time of the call and a stream synchronization, median of 5; the
// floor is the bytes that cross to the device (the whole key, or its b half) over the host-to-device bandwidth
// of a plain polynomial upload measured here.
double median_seconds(const std::function<void()>& call) {
  call();  // pool, plans
  std::vector<double> seconds;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    cuda::work_stream().synchronize();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return cerium_bench::median(seconds);
}

void BM_upload_relinearization_key_gpu(benchmark::State& state) {
  Setup& s = setup(3);
  const bool seeded = state.range(0) != 0;
  const auto& backend = s.evaluator->backend();
  KeyGenerator keygen(s.context);
  const RelinearizationKey key = keygen.relinearization_key(seeded ? KeyStorage::seeded : KeyStorage::expanded);
  const auto& basis = key.key().b(0).basis_ptr();
  const ring::RnsPoly host_limbs(basis, ring::PolyForm::ntt);
  const double part_bytes = s.limb_bytes * static_cast<double>(basis->size());
  const double h2d = part_bytes / median_seconds([&] { benchmark::DoNotOptimize(backend.upload(host_limbs)); });
  const double moved = part_bytes * static_cast<double>(key.key().digit_count()) * (seeded ? 1.0 : 2.0);
  for (auto _ : state) {
    const double seconds = median_seconds([&] { benchmark::DoNotOptimize(backend.upload(key.key())); });
    state.SetIterationTime(seconds);
    state.counters["N"] = static_cast<double>(s.context->ring_degree());
    state.counters["limbs"] = static_cast<double>(basis->size());
    state.counters["dnum"] = static_cast<double>(key.key().digit_count());
    state.counters["seeded"] = seeded ? 1 : 0;
    state.counters["ms"] = seconds * 1e3;
    state.counters["GB_moved"] = moved / 1e9;
    state.counters["h2d_GB_s"] = h2d / 1e9;
    state.counters["floor_ratio"] = seconds / (moved / h2d);
    state.SetLabel(cerium_bench::device_label());
  }
}

// Out-of-place operations against a copy followed by the in-place form (what they were before): the words are
// the same (tests/unit/ckks/test_out_of_place.cpp); the difference is one read and one write of the operand.
// Arguments: the operation (0 add, 1 multiply by a plaintext, 2 multiply by a constant, 3 tensor product,
// 4 level_down by 4 levels, 5 negate) and the form (0 copy + in place, 1 out of place); dnum 3, graph.
void BM_out_of_place_gpu(benchmark::State& state) {
  Setup& s = setup(3);
  const int op = static_cast<int>(state.range(0));
  const bool out_of_place = state.range(1) != 0;
  CudaEvaluator& ev = *s.evaluator;
  const int low = s.context->max_level() - 4;
  const std::function<Ciphertext()> direct[] = {
      [&] { return ev.add(s.x, s.y); },          [&] { return ev.multiply(s.x, s.p); },
      [&] { return ev.multiply(s.x, 0.75); },     [&] { return ev.multiply_no_relin(s.x, s.y); },
      [&] { return ev.level_down(s.x, low); },    [&] { return ev.negate(s.x); }};
  const std::function<void(Ciphertext&)> in_place[] = {
      [&](Ciphertext& c) { ev.add_inplace(c, s.y); },          [&](Ciphertext& c) { ev.multiply_inplace(c, s.p); },
      [&](Ciphertext& c) { ev.multiply_inplace(c, 0.75); },     [&](Ciphertext& c) { ev.multiply_no_relin_inplace(c, s.y); },
      [&](Ciphertext& c) { ev.level_down_inplace(c, low); },    [&](Ciphertext& c) { ev.negate_inplace(c); }};
  // Limbs an out-of-place pass must move: operands read, result written.
  const double l = static_cast<double>(s.limbs);
  const double traffic[] = {6 * l, 5 * l, 4 * l, 7 * l, 4 * (l - 8), 4 * l};
  for (auto _ : state) {
    const double seconds = time_call(
        [&] {
          if (out_of_place) {
            benchmark::DoNotOptimize(direct[op]());
          } else {
            Ciphertext c = s.x.clone();
            in_place[op](c);
            benchmark::DoNotOptimize(c);
          }
        },
        Mode::graph);
    report(state, s, seconds, traffic[op]);
  }
}

// A matrix product's inner sum: 16 distinct ciphertexts times 16 plaintexts at 40 limbs, each product rescaled on
// its own and the results added (the same words both ways): multiply_plain_rescale_sum (fused: one pass over
// the products, one rescale's forward NTT for the sum) against multiply, rescale and add per term. The floor:
// every operand read once and the sum written once.
void BM_plain_sum16_gpu(benchmark::State& state) {
  Setup& s = setup(3);
  const bool fused = state.range(0) == 0;
  const auto mode = static_cast<Mode>(state.range(1));
  constexpr std::size_t kTerms = 16;
  static std::vector<Ciphertext> xs;
  static std::vector<Plaintext> ps;
  if (xs.empty()) {
    for (std::size_t t = 0; t < kTerms; ++t) {
      xs.push_back(s.evaluator->rotate(t % 2 == 0 ? s.x : s.y, 1 + static_cast<std::int64_t>(t % 8)));
      ps.push_back(s.evaluator->upload(s.evaluator->download(s.p)));
    }
  }
  std::vector<const Ciphertext*> a;
  std::vector<const Plaintext*> p;
  for (std::size_t t = 0; t < kTerms; ++t) {
    a.push_back(&xs[t]);
    p.push_back(&ps[t]);
  }
  const auto term_by_term = [&] {
    Ciphertext sum = s.evaluator->rescale(s.evaluator->multiply(*a[0], *p[0]));
    for (std::size_t t = 1; t < kTerms; ++t) s.evaluator->add_inplace(sum, s.evaluator->rescale(s.evaluator->multiply(*a[t], *p[t])));
    return sum;
  };
  for (auto _ : state) {
    const double seconds = time_call(
        [&] {
          if (fused) {
            benchmark::DoNotOptimize(s.evaluator->multiply_plain_rescale_sum(a, p));
          } else {
            benchmark::DoNotOptimize(term_by_term());
          }
        },
        mode);
    report(state, s, seconds, kTerms * 3.0 * s.limbs + 2.0 * (s.limbs - 2));
    state.counters["terms"] = kTerms;
  }
}

// A weight's plaintext made where it is used, at a level of `limbs` limbs: encoded on the device from its unscaled
// coefficients kept there (ckks::UnscaledPlaintext: a scaling and rounding pass and an NTT; source 0), 16 of them
// in one batch (source 2, the time per plaintext), against the copy of a host-encoded plaintext (source 1: the
// streamed path's transfer alone, pageable host memory). period 0: a full slot vector (N / 2 values); period 1024:
// a transformer weight's diagonal, one token row repeated over the slots (N / 32 coefficients: the sparse path that
// runs the NTT's first stages on them alone). The floor: the coefficients read once and the limbs written once.
void BM_encode_unscaled_gpu(benchmark::State& state) {
  Setup& s = setup(3);
  const int level = static_cast<int>(state.range(0));
  const int source = static_cast<int>(state.range(1));
  const auto period = static_cast<std::size_t>(state.range(2));
  constexpr std::size_t kBatch = 16;
  const Encoder encoder(s.context);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> dist(-1, 1);
  const std::size_t slots = s.context->ring_degree() / 2;
  std::vector<std::complex<double>> values(period == 0 ? slots : period);
  for (auto& v : values) v = {dist(rng), 0.0};
  const UnscaledPlaintext unscaled = s.evaluator->upload(encoder.unscaled(values, slots));
  const std::vector<const UnscaledPlaintext*> batch(kBatch, &unscaled);
  const EncodeOptions options{.level = level, .slots = slots};
  const Plaintext host = encoder.encode_periodic(values, options);
  for (auto _ : state) {
    double seconds = time_call(
        [&] {
          if (source == 0) {
            benchmark::DoNotOptimize(s.evaluator->encode(unscaled, options));
          } else if (source == 1) {
            benchmark::DoNotOptimize(s.evaluator->upload(host));
          } else {
            benchmark::DoNotOptimize(s.evaluator->encode(batch, options));
          }
        },
        Mode::eager);
    if (source == 2) seconds /= kBatch;
    const double limbs = static_cast<double>(s.context->parameters().limbs_at(level));
    report(state, s, seconds, limbs + static_cast<double>(unscaled.bytes()) / static_cast<double>(s.limb_bytes));
    state.counters["limbs"] = limbs;
    state.counters["period"] = static_cast<double>(period);
    state.counters["unscaled_MB"] = static_cast<double>(unscaled.bytes()) / 1e6;
    state.counters["encoded_MB"] = limbs * s.limb_bytes / 1e6;
  }
}

// A transformer's matrix-product inner sum as BERT-Base runs it (levels of 4, 6 and 26 limbs here; BERT-Base's
// sums run at 4, 6, 10 and 26): `terms` ciphertexts at `level` times weight
// diagonals of one token row's period (1024 slots at N = 2^16) kept unscaled on the device, each product rescaled
// on its own. compact 1: multiply_plain_rescale_sum(unscaled): the plaintexts made as their distinct words only
// (N / 32 a limb) and read so; compact 0: encoded whole (encode(many)) and then summed; compact 2: compact, the
// sum rounded once (multiply_plain_sum then rescale: graph::RunOptions::round_sums_once, the executor's default).
// The floor: the ciphertexts read once and the sum written once (the plaintexts' 1/32 not counted).
void BM_plain_sum_unscaled_gpu(benchmark::State& state) {
  Setup& s = setup(3);
  const int level = static_cast<int>(state.range(0));
  const auto terms = static_cast<std::size_t>(state.range(1));
  const auto compact = state.range(2);
  constexpr std::size_t kPeriod = 1024;
  const Encoder encoder(s.context);
  const std::size_t slots = s.context->ring_degree() / 2;
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> dist(-0.1, 0.1);
  const Ciphertext base = s.evaluator->level_down(s.x, level);
  std::vector<Ciphertext> xs;
  std::vector<UnscaledPlaintext> ws;
  for (std::size_t t = 0; t < terms; ++t) {
    xs.push_back(s.evaluator->rotate(base, 1 + static_cast<std::int64_t>(t % 8)));
    std::vector<std::complex<double>> period(kPeriod);
    for (auto& v : period) v = {dist(rng), 0.0};
    ws.push_back(s.evaluator->upload(encoder.unscaled(period, slots)));
  }
  std::vector<const Ciphertext*> a;
  std::vector<const UnscaledPlaintext*> w;
  for (std::size_t t = 0; t < terms; ++t) {
    a.push_back(&xs[t]);
    w.push_back(&ws[t]);
  }
  const EncodeOptions options{.level = level, .scale = s.evaluator->level_prime_product(level), .slots = slots};
  for (auto _ : state) {
    const double seconds = time_call(
        [&] {
          if (compact == 2) {
            benchmark::DoNotOptimize(s.evaluator->rescale(s.evaluator->multiply_plain_sum(a, w, options)));
          } else if (compact == 1) {
            benchmark::DoNotOptimize(s.evaluator->multiply_plain_rescale_sum(a, w, options));
          } else {
            const std::vector<Plaintext> plains = s.evaluator->encode(w, options);
            std::vector<const Plaintext*> p;
            for (const Plaintext& q : plains) p.push_back(&q);
            benchmark::DoNotOptimize(s.evaluator->multiply_plain_rescale_sum(a, p));
          }
        },
        Mode::eager);
    const auto limbs = s.context->parameters().limbs_at(level);
    const double l = static_cast<double>(limbs);
    report(state, s, seconds, static_cast<double>(terms) * 2 * l + 2 * (l - 1), limbs);
    state.counters["terms"] = static_cast<double>(terms);
    state.counters["us_per_term"] = seconds * 1e6 / static_cast<double>(terms);
  }
}

// Time against limbs: multiply + relinearize + rescale (fused), rotate and rescale at lower levels (dnum 3 keys,
// eager), each with its memory floor at that level.
enum class SweptOp { multiply_rescale, rotate, rescale };

template <SweptOp op>
void BM_level_sweep_gpu(benchmark::State& state) {
  Setup& s = setup(3);
  const int level = static_cast<int>(state.range(0));
  const Ciphertext x = s.evaluator->level_down(s.x, level), y = s.evaluator->level_down(s.y, level);
  // What a rescale meets: a product's scale (rescaling a fresh ciphertext would lose its message: LevelError).
  Ciphertext product = x.clone();
  product.set_scale(x.scale() * s.evaluator->level_prime_product(level));
  const std::size_t limbs = s.context->parameters().limbs_at(level), dnum = s.context->digit_count(level);
  const double l = static_cast<double>(limbs);
  const double dropped = l - static_cast<double>(s.context->parameters().limbs_at(level - 1));
  const double key = cerium_bench::key_limbs(limbs, dnum, s.alpha);
  for (auto _ : state) {
    double seconds = 0, traffic = 0;
    if constexpr (op == SweptOp::multiply_rescale) {
      seconds = time_call([&] { benchmark::DoNotOptimize(s.evaluator->multiply_rescale(x, y)); }, Mode::eager);
      traffic = cerium_bench::multiply_rescale_limbs(l, dropped, key);
    } else if constexpr (op == SweptOp::rotate) {
      seconds = time_call([&] { benchmark::DoNotOptimize(s.evaluator->rotate(x, 1)); }, Mode::eager);
      traffic = cerium_bench::rotate_limbs(l, key);
    } else {
      seconds = time_call([&] { benchmark::DoNotOptimize(s.evaluator->rescale(product)); }, Mode::eager);
      traffic = cerium_bench::rescale_limbs(l, dropped);
    }
    report(state, s, seconds, traffic, limbs, dnum);
    state.counters["level"] = level;
  }
}

void swept_levels(benchmark::internal::Benchmark* b) {
  b->ArgName("level");
  for (const int level : {1, 2, 4, 8, 12, 16, 19}) b->Arg(level);
  b->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

void modes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"dnum", "graph"});
  for (const int dnum : {3, 4})
    for (const int mode : {0, 1}) b->Args({dnum, mode});
  b->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK(BM_level_sweep_gpu<SweptOp::multiply_rescale>)->Name("multiply_rescale_by_level_gpu")->Apply(swept_levels);
BENCHMARK(BM_level_sweep_gpu<SweptOp::rotate>)->Name("rotate_by_level_gpu")->Apply(swept_levels);
BENCHMARK(BM_level_sweep_gpu<SweptOp::rescale>)->Name("rescale_by_level_gpu")->Apply(swept_levels);
BENCHMARK(BM_multiply_relinearize_rescale_gpu)->Apply(modes);
BENCHMARK(BM_multiply_rescale_gpu)->Apply(modes);
BENCHMARK(BM_rotate_gpu)->Apply(modes);
BENCHMARK(BM_rotate_hoisted8_gpu)->Apply(modes);
BENCHMARK(BM_rescale_gpu)->Apply(modes);
BENCHMARK(BM_tensor_gpu)->Apply(modes);
BENCHMARK(BM_relinearize_gpu)->Apply(modes);
BENCHMARK(BM_mod_up_gpu)->Apply(modes);
BENCHMARK(BM_key_switch_apply_gpu)->Apply(modes);
BENCHMARK(BM_out_of_place_gpu)
    ->ArgNames({"op", "out_of_place"})
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {0, 1}})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_plain_sum16_gpu)
    ->ArgNames({"term_by_term", "graph"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_plain_sum_unscaled_gpu)
    ->ArgNames({"level", "terms", "compact"})
    ->ArgsProduct({{1, 2, 12}, {64, 256}, {0, 1, 2}})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_encode_unscaled_gpu)
    ->ArgNames({"level", "source", "period"})
    ->ArgsProduct({{4, 19}, {0, 1, 2}, {0, 1024}})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_upload_relinearization_key_gpu)
    ->ArgName("seeded")
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
