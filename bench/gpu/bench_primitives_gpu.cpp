// GPU CKKS primitives (elementwise, rescale, basis conversion, ModUp, ModDown, automorphism, key-switch inner
// product) at N = 2^16 and 40 limbs, against the device's own copy bandwidth.
//
// As in bench_ntt_gpu.cpp: each timed batch replays a CUDA graph of many calls, each on its own slice of a pool
// larger than the L2 cache (cold data), timed with CUDA events after warm-up. Counters: N, limbs, us (per call),
// GB_s (minimum traffic over time: every input word read once, every output word written once) and floor_ratio =
// time / (minimum traffic / copy bandwidth), 1.0 being as fast as copying that traffic once.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cerium/backend/cuda/automorphism.hpp"
#include "cerium/backend/cuda/basis_conversion.hpp"
#include "cerium/backend/cuda/check.hpp"
#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/elementwise.hpp"
#include "cerium/backend/cuda/key_switch.hpp"
#include "cerium/backend/cuda/rescale.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/backend/cuda/timer.hpp"
#include "cerium/math/primes.hpp"
#include "cerium/ring/automorphism.hpp"
#include "gpu_bench_support.hpp"

namespace {

using cerium::cuda::DeviceBuffer;
using cerium::cuda::Stream;
using cerium_bench::native;
using u32 = std::uint32_t;

constexpr std::size_t kN = std::size_t{1} << 16;
constexpr std::size_t kLimbs = 40;  // Q_l
constexpr std::size_t kAlpha = 4;   // special primes P, and ModUp's digit size
constexpr std::size_t kDigits = 3;  // key-switch digits in the inner-product benchmark

enum class Op { add, multiply, multiply_accumulate, multiply_scalar, rescale1, rescale2, rescale2_ntt, convert,
                mod_up, mod_down, automorphism, inner_product, inner_product_rotated };

// The primes of Q_l u P: 30-bit, all above 2^29 (the random inputs stay below every prime).
const std::vector<u32>& chain() {
  static const auto p = cerium::math::generate_ntt_primes({.bits = 30, .count = kLimbs + kAlpha, .ring_degree = kN});
  return p;
}
cerium::ring::RnsBasisPtr basis(std::size_t first, std::size_t count) {
  return cerium::ring::make_basis(kN, std::vector<u32>(chain().begin() + first, chain().begin() + first + count));
}

// One call's operands laid out in a slice; the launch, the slice size and the minimum traffic in limbs.
struct Case {
  std::size_t slice_limbs = 0;
  std::size_t traffic_limbs = 0;
  std::function<void(u32* slice, const Stream&)> launch;
  std::shared_ptr<void> keep;  // the plan(s) the launch uses
};

template <class T>
std::shared_ptr<T> share(T&& t) { return std::make_shared<T>(std::move(t)); }

Case make_case(Op op, const Stream& s) {
  const std::size_t L = kLimbs, n = kN;
  Case c;
  switch (op) {
    case Op::add: case Op::multiply: case Op::multiply_accumulate: case Op::multiply_scalar: {
      auto plan = std::make_shared<cerium::cuda::ElementwisePlan>(*basis(0, L), s);
      std::vector<u32> scalars(L, 12345);
      auto sc = std::make_shared<cerium::cuda::DeviceScalars>(*basis(0, L), scalars, s);
      c.keep = std::make_shared<std::pair<decltype(plan), decltype(sc)>>(plan, sc);
      c.slice_limbs = 3 * L;
      c.traffic_limbs = op == Op::multiply_scalar ? 2 * L : op == Op::multiply_accumulate ? 4 * L : 3 * L;
      c.launch = [plan, sc, op, L, n](u32* x, const Stream& st) {
        if (op == Op::add) plan->add(x + 2 * L * n, x, x + L * n, L, st);
        else if (op == Op::multiply) plan->multiply(x + 2 * L * n, x, x + L * n, L, st);
        else if (op == Op::multiply_accumulate) plan->multiply_accumulate(x + 2 * L * n, x, x + L * n, L, st);
        else plan->multiply_scalar(x + 2 * L * n, x, *sc, L, st);
      };
      break;
    }
    case Op::rescale1: case Op::rescale2: case Op::rescale2_ntt: {
      const std::size_t d = op == Op::rescale1 ? 1 : 2;
      auto plan = std::make_shared<cerium::cuda::RescalePlan>(
          *basis(0, L), cerium::cuda::RescaleConfig{.dropped = d, .ntt_form = op == Op::rescale2_ntt}, s);
      c.keep = plan;
      c.slice_limbs = 2 * L;
      c.traffic_limbs = 2 * L - d;
      c.launch = [plan, op, L, n](u32* x, const Stream& st) {
        if (op == Op::rescale2_ntt) plan->apply_ntt(x, x + L * n, st);
        else plan->apply(x, x + L * n, st);
      };
      break;
    }
    case Op::convert: {
      auto plan = std::make_shared<cerium::cuda::BasisConversionPlan>(*basis(0, kAlpha), *basis(kAlpha, L), s);
      c.keep = plan;
      c.slice_limbs = kAlpha + L;
      c.traffic_limbs = kAlpha + L;
      c.launch = [plan](u32* x, const Stream& st) { plan->convert(x, x + kAlpha * kN, st); };
      break;
    }
    case Op::mod_up: {
      auto plan = std::make_shared<cerium::cuda::ModUpPlan>(*basis(0, kAlpha), *basis(0, L + kAlpha), s);
      c.keep = plan;
      c.slice_limbs = kAlpha + L + kAlpha;
      c.traffic_limbs = kAlpha + L + kAlpha;
      c.launch = [plan](u32* x, const Stream& st) { plan->apply(x, x + kAlpha * kN, st); };
      break;
    }
    case Op::mod_down: {
      auto plan = std::make_shared<cerium::cuda::ModDownPlan>(*basis(0, L + kAlpha), *basis(0, L),
                                                              cerium::ring::Rounding::nearest, s);
      c.keep = plan;
      c.slice_limbs = 2 * L + kAlpha;
      c.traffic_limbs = 2 * L + kAlpha;
      c.launch = [plan, L, n](u32* x, const Stream& st) { plan->apply(x, x + (L + kAlpha) * n, st); };
      break;
    }
    case Op::automorphism: {
      auto plan = std::make_shared<cerium::cuda::AutomorphismPlan>(
          cerium::ring::Automorphism(kN, cerium::ring::rotation_galois_element(1, kN)), s);
      c.keep = plan;
      c.slice_limbs = 2 * L;
      c.traffic_limbs = 2 * L;
      c.launch = [plan, L, n](u32* x, const Stream& st) { plan->apply(x, x + L * n, L, st); };
      break;
    }
    case Op::inner_product: case Op::inner_product_rotated: {
      const std::size_t qp = L + kAlpha;
      auto plan = std::make_shared<cerium::cuda::KeySwitchInnerProductPlan>(
          *basis(0, qp), cerium::cuda::KeySwitchLayout{.q_limbs = L, .key_q_limbs = L}, s);
      auto automorphism = std::make_shared<cerium::cuda::AutomorphismPlan>(
          cerium::ring::Automorphism(kN, cerium::ring::rotation_galois_element(1, kN)), s);
      c.keep = std::make_shared<std::pair<decltype(plan), decltype(automorphism)>>(plan, automorphism);
      c.slice_limbs = 3 * kDigits * qp + 2 * qp;  // digits, key b, key a, two outputs
      c.traffic_limbs = c.slice_limbs;
      const bool rotated = op == Op::inner_product_rotated;
      c.launch = [plan, automorphism, qp, n, rotated](u32* x, const Stream& st) {
        const std::size_t block = kDigits * qp * n;
        plan->apply(x, kDigits, x + block, x + 2 * block, x + 3 * block, x + 3 * block + qp * n, st,
                    rotated ? automorphism.get() : nullptr);
      };
      break;
    }
  }
  return c;
}

struct Fixture {
  Op op;
  std::size_t reps = 0, slice = 0;
  Stream stream = Stream::create();
  Case c;
  DeviceBuffer pool;
  std::unique_ptr<cerium_bench::CapturedGraph> graph;

  explicit Fixture(Op op_) : op(op_) {
    c = make_case(op, stream);
    slice = c.slice_limbs * kN;
    reps = std::clamp<std::size_t>((cerium_bench::kColdBytes + 4 * slice - 1) / (4 * slice), 4, 1024);
    pool = cerium_bench::random_pool(slice, reps, static_cast<unsigned>(op) + 17, stream);
    graph = std::make_unique<cerium_bench::CapturedGraph>(
        stream, reps, [&](std::size_t r) { c.launch(pool.data() + r * slice, stream); });
  }
};

Fixture& fixture(Op op) {
  static auto* cached = new std::unique_ptr<Fixture>();  // never destroyed: no CUDA call after runtime teardown
  auto& f = *cached;
  if (!f || f->op != op) {
    f.reset();
    f = std::make_unique<Fixture>(op);
  }
  return *f;
}

void BM_primitive(benchmark::State& state, Op op) {
  if (!cerium::cuda::has_cuda_device()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  Fixture& f = fixture(op);
  const double seconds = cerium_bench::median(cerium_bench::time_replays(state, *f.graph));
  const double bytes = static_cast<double>(f.c.traffic_limbs * kN) * 4.0;
  const double copy = cerium_bench::copy_bandwidth();
  state.counters["N"] = static_cast<double>(kN);
  state.counters["limbs"] = static_cast<double>(kLimbs);
  state.counters["us"] = seconds * 1e6;
  state.counters["GB_s"] = bytes / seconds / 1e9;
  state.counters["copy_GB_s"] = copy / 1e9;
  state.counters["floor_ratio"] = seconds / (bytes / copy);
  state.SetLabel(cerium_bench::device_label());
}

void setup(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(10);
}

BENCHMARK_CAPTURE(BM_primitive, add, Op::add)->Name("prim_add_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, multiply, Op::multiply)->Name("prim_multiply_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, mac, Op::multiply_accumulate)->Name("prim_mac_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, scalar, Op::multiply_scalar)->Name("prim_scalar_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, rescale1, Op::rescale1)->Name("prim_rescale1_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, rescale2, Op::rescale2)->Name("prim_rescale2_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, rescale2_ntt, Op::rescale2_ntt)->Name("prim_rescale2_ntt_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, convert, Op::convert)->Name("prim_convert_4to40_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, mod_up, Op::mod_up)->Name("prim_modup_a4_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, mod_down, Op::mod_down)->Name("prim_moddown_p4_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, automorphism, Op::automorphism)->Name("prim_automorphism_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, inner_product, Op::inner_product)->Name("prim_ks_inner_d3_gpu")->Apply(setup);
BENCHMARK_CAPTURE(BM_primitive, inner_rot, Op::inner_product_rotated)->Name("prim_ks_inner_rot_d3_gpu")->Apply(setup);

}  // namespace
