// What the sharded backend costs on one GPU: the same evaluator calls (multiply + relinearize + rescale, rotate)
// at N = 2^16, 40 limbs, dnum 3, on the single-device CUDA evaluator and on a ShardedEvaluator of one GPU rank,
// its gathers through NCCL in device memory or through the host (the in-process transport, as MPI ranks do).
// With one rank nothing crosses to another device: the difference is the sharded layer itself (the gathers' copies
// and synchronizations, one kernel call per run of limbs). Wall-clock time of a call, device work included
// (the backend waited for after each call), median of 20 after 3 warm-up calls; counters: the
// collectives per call, the device's copy bandwidth and the memory floor as in bench_evaluator_gpu.cpp.
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/ckks/sharded_evaluator.hpp"
#include "cerium/dist/in_process.hpp"
#include "cerium/dist/nccl.hpp"
#include "gpu_bench_support.hpp"

namespace {

using namespace cerium;
using namespace cerium::ckks;

enum class Transport { unsharded, in_process, nccl };
const char* name_of(Transport t) {
  return t == Transport::unsharded ? "unsharded" : t == Transport::in_process ? "in_process" : "nccl";
}

// The keys and inputs on the host, made once for every transport.
struct HostSetup {
  ContextPtr context;
  std::shared_ptr<const RelinearizationKey> relinearization;
  std::shared_ptr<const GaloisKeys> galois;
  Ciphertext x, y;

  HostSetup() {
    context = Context::create(cerium_bench::evaluator_bench_config(3));
    KeyGenerator keygen(context);
    relinearization = std::make_shared<const RelinearizationKey>(keygen.relinearization_key());
    galois = std::make_shared<const GaloisKeys>(keygen.galois_keys(std::vector<std::int64_t>{1}, false));
    Encoder encoder(context);
    Encryptor encryptor(keygen.secret_key());
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> dist(-1, 1);
    std::vector<double> values(context->ring_degree() / 2);
    for (auto& v : values) v = dist(rng);
    x = encryptor.encrypt(encoder.encode(values));
    for (auto& v : values) v = dist(rng);
    y = encryptor.encrypt(encoder.encode(values));
  }
};

HostSetup& host() {
  static HostSetup setup;
  return setup;
}

// One evaluator per transport, its keys and inputs placed, and a way to wait for its work.
struct Side {
  std::unique_ptr<dist::InProcessGroup> group;
  std::unique_ptr<dist::Communicator> nccl;
  dist::Communicator* comm = nullptr;
  std::function<Ciphertext()> multiply, rotate;
  std::function<void()> wait;
  std::shared_ptr<void> evaluator;
};

template <class Evaluator>
void bind(Side& side, std::shared_ptr<Evaluator> ev) {
  ev->set_relinearization_key(host().relinearization);
  ev->set_galois_keys(host().galois);
  auto x = std::make_shared<Ciphertext>(ev->upload(host().x));
  auto y = std::make_shared<Ciphertext>(ev->upload(host().y));
  side.multiply = [ev, x, y] { return ev->rescale(ev->multiply(*x, *y)); };
  side.rotate = [ev, x] { return ev->rotate(*x, 1); };
  side.wait = [ev] { ev->backend().synchronize(); };
  side.evaluator = ev;
}

Side& side(Transport t) {
  static std::map<Transport, std::unique_ptr<Side>> cache;
  auto& slot = cache[t];
  if (slot) return *slot;
  slot = std::make_unique<Side>();
  Side& s = *slot;
  const auto& context = host().context;
  if (t == Transport::unsharded) {
    bind(s, std::make_shared<CudaEvaluator>(context, backend::CudaBackend(context)));
    return s;
  }
  if (t == Transport::in_process) {
    s.group = std::make_unique<dist::InProcessGroup>(1);
    s.comm = &s.group->communicator(0);
  } else {
    const auto path = std::filesystem::temp_directory_path() / "cerium_bench_nccl_id";
    std::filesystem::remove(path);
    s.nccl = dist::make_nccl_communicator(0, 1, dist::nccl_unique_id_via_file(path, 0));
    s.comm = s.nccl.get();
  }
  bind(s, std::make_shared<ShardedEvaluator>(context,
                                             dist::ShardedBackend(*s.comm, context, {.device = Device::cuda(0)})));
  return s;
}

void time_calls(benchmark::State& state, const std::function<Ciphertext()>& call, double traffic_limbs) {
  const auto t = static_cast<Transport>(state.range(0));
  Side& s = side(t);
  for (int i = 0; i < 3; ++i) benchmark::DoNotOptimize(call());
  s.wait();
  const auto collectives = [&s] {
    double calls = 0;
    if (s.comm) {
      for (const auto c : s.comm->traffic().calls) calls += static_cast<double>(c);
    }
    return calls;
  };
  const double collectives_before = collectives();
  std::vector<double> seconds;
  for (int i = 0; i < 20; ++i) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(call());
    s.wait();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const double t_call = cerium_bench::median(seconds);
  const auto& context = *host().context;
  const double limbs = static_cast<double>(context.parameters().limbs_at(context.max_level()));
  const double bytes = traffic_limbs * 4.0 * static_cast<double>(context.ring_degree());
  for (auto _ : state) state.SetIterationTime(t_call);
  state.counters["N"] = static_cast<double>(context.ring_degree());
  state.counters["limbs"] = limbs;
  state.counters["dnum"] = static_cast<double>(context.digit_count(context.max_level()));
  state.counters["ranks"] = t == Transport::unsharded ? 0 : 1;
  state.counters["us"] = t_call * 1e6;
  state.counters["collectives_per_call"] = (collectives() - collectives_before) / 20;
  state.counters["floor_ratio"] = t_call / (bytes / cerium_bench::copy_bandwidth());
  state.SetLabel(cerium_bench::device_label() + ", " + name_of(t));
}

// Traffic floors as bench_evaluator_gpu.cpp counts them (cerium_bench's helpers), at the top level.
struct TopLevel {
  double limbs, dropped, key;
};
TopLevel top_level() {
  const auto& context = *host().context;
  const int top = context.max_level();
  const std::size_t limbs = context.parameters().limbs_at(top);
  return {static_cast<double>(limbs), static_cast<double>(limbs - context.parameters().limbs_at(top - 1)),
          cerium_bench::key_limbs(limbs, context.digit_count(top), context.parameters().alpha())};
}

void BM_sharded_multiply_relinearize_rescale_gpu(benchmark::State& state) {
  const TopLevel t = top_level();
  time_calls(state, side(static_cast<Transport>(state.range(0))).multiply,
             cerium_bench::multiply_rescale_limbs(t.limbs, t.dropped, t.key));
}

void BM_sharded_rotate_gpu(benchmark::State& state) {
  const TopLevel t = top_level();
  time_calls(state, side(static_cast<Transport>(state.range(0))).rotate, cerium_bench::rotate_limbs(t.limbs, t.key));
}

void transports(benchmark::internal::Benchmark* b) {
  b->ArgName("transport")->DenseRange(0, 2)->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK(BM_sharded_multiply_relinearize_rescale_gpu)->Apply(transports);
BENCHMARK(BM_sharded_rotate_gpu)->Apply(transports);
