// The eDSL on the CUDA backend: eval(expression) on a CudaEvaluator (inputs uploaded with evaluator.upload)
// gives exactly the words of eval on the CPU Evaluator, for every fusion rule: hoisted rotations, fused sums of
// plaintext products (the BSGS inner sums), fused sums of ciphertext products with one relinearization, the
// power-basis polynomial, common subexpressions, runtime sums, integer and complex constants, constant products
// and sums split through -, rescale folded into the fused pass; fused and unfused plans alike. Also the
// backend's multiply_accumulate_many, linear_combination and linear_combination_rescaled alone, the first two
// over more terms than one launch takes.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/expr/expr.hpp"
#include "cerium/plan/eval.hpp"
#include "cerium/plan/explain.hpp"
#include "gpu_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

namespace {

using namespace evaluator_test;
using cerium::backend::CudaBackend;
using cerium::plan::PlanOptions;

struct ExprGpuFixture {
  Fixture cpu;
  CudaEvaluator gpu;
  std::mt19937_64 rng;

  // N = 2^12, 5 two-prime levels (a degree-15 polynomial needs 5), dnum 2.
  ExprGpuFixture()
      : cpu(toy(12, 5, 2, 2), KeyRequest{.relinearization = true, .rotations = {1, 2, 3, 4, 8, 12}}),
        gpu(cpu.context, CudaBackend(cpu.context)),
        rng(cerium_test::make_rng(501)) {
    gpu.set_relinearization_key(cpu.evaluator.relinearization_key());
    gpu.set_galois_keys(cpu.evaluator.galois_keys());
  }

  Values values(double bound = 1.0) {
    Values v = random_real(rng, cpu.max_slots());
    for (auto& x : v) x *= bound;
    return v;
  }
};

ExprGpuFixture& fixture() {
  static ExprGpuFixture f;
  return f;
}

// The same ciphertext on the host (for the CPU evaluator) and on the device.
struct Pair {
  std::shared_ptr<const Ciphertext> host, device;
};
struct PlainPair {
  std::shared_ptr<const Plaintext> host, device;
};

Pair cipher(ExprGpuFixture& f, double bound = 1.0) {
  auto host = std::make_shared<const Ciphertext>(f.cpu.encrypt(f.values(bound)));
  return {host, std::make_shared<const Ciphertext>(f.gpu.upload(*host))};
}
PlainPair plain(ExprGpuFixture& f) {
  auto host = std::make_shared<const Plaintext>(f.cpu.encoder.encode(f.values()));
  return {host, std::make_shared<const Plaintext>(f.gpu.upload(*host))};
}

// build(pick) makes the expression from host or device leaves; both evals must give the same words, fused and
// not fused, with the rescale folded as each backend chooses, always, and never.
template <class Build>
void check_same(ExprGpuFixture& f, Build build) {
  const std::optional<bool> folds[] = {std::nullopt, true, false};
  for (const bool fuse : {true, false}) {
    for (const auto& fold : folds) {
      INFO("fuse_sums " << fuse << ", fold_rescale " << (fold ? (*fold ? "true" : "false") : "backend's"));
      const PlanOptions options{.fuse_sums = fuse, .fold_rescale = fold};
      const Ciphertext want = eval(build(false), EvalContext{f.cpu.evaluator}, options);
      const Ciphertext got = f.gpu.download(eval(build(true), EvalContext{f.gpu}, options));
      CHECK(got.level() == want.level());
      CHECK(got.scale() == want.scale());
      CHECK(same_words(got, want));
    }
  }
}

template <class P>
auto leaf(const P& p, bool device) {
  return cerium::lift(device ? p.device : p.host);
}

}  // namespace

TEST_CASE("GPU eDSL: multiply_accumulate_many equals the CPU over 40 terms", "[gpu][expr]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto& f = fixture();
  std::vector<Pair> a, b;
  for (int i = 0; i < 40; ++i) {
    a.push_back(cipher(f));
    b.push_back(cipher(f));
  }
  for (const bool accumulate : {false, true}) {
    cerium::ring::RnsPoly want = a[0].host->part(0).clone();
    cerium::ring::RnsPoly got = f.gpu.backend().clone(a[0].device->part(0));
    std::vector<const cerium::ring::RnsPoly*> ha, hb, da, db;
    for (std::size_t i = 1; i < a.size(); ++i) {
      ha.push_back(&a[i].host->part(1));
      hb.push_back(&b[i].host->part(0));
      da.push_back(&a[i].device->part(1));
      db.push_back(&b[i].device->part(0));
    }
    f.cpu.evaluator.backend().multiply_accumulate_many(want, ha, hb, accumulate);
    f.gpu.backend().multiply_accumulate_many(got, da, db, accumulate);
    CHECK(f.gpu.backend().download(got) == want);
  }
}

TEST_CASE("GPU eDSL: BSGS linear transform (hoisting, fused plaintext-product sums)", "[gpu][expr]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto& f = fixture();
  const Pair x = cipher(f);
  std::vector<PlainPair> diagonals;
  for (int i = 0; i < 16; ++i) diagonals.push_back(plain(f));
  check_same(f, [&](bool device) {
    auto lx = leaf(x, device);
    using Inner = decltype(rotate(lx, 0) * leaf(diagonals[0], device));
    using Giant = decltype(rotate(cerium::sum(std::vector<Inner>{rotate(lx, 0) * leaf(diagonals[0], device)}), 0));
    std::vector<Giant> giants;
    for (int j = 0; j < 4; ++j) {
      std::vector<Inner> inner;
      for (int i = 0; i < 4; ++i) inner.push_back(rotate(lx, i) * leaf(diagonals[static_cast<std::size_t>(4 * j + i)], device));
      giants.push_back(rotate(cerium::sum(std::move(inner)), 4 * j));
    }
    return rescale(cerium::sum(std::move(giants)));
  });
}

TEST_CASE("GPU eDSL: sums of ciphertext products share one relinearization", "[gpu][expr]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto& f = fixture();
  std::vector<Pair> a, b;
  for (int i = 0; i < 8; ++i) {
    a.push_back(cipher(f));
    b.push_back(cipher(f));
  }
  check_same(f, [&](bool device) {
    std::vector<decltype(leaf(a[0], device) * leaf(b[0], device))> terms;
    for (std::size_t i = 0; i < a.size(); ++i) terms.push_back(leaf(a[i], device) * leaf(b[i], device));
    return rescale(cerium::sum(std::move(terms)));
  });
  const PlainPair p = plain(f);
  check_same(f, [&](bool device) {  // tensors and a plaintext product in one fused sum, then a constant
    return leaf(a[0], device) * leaf(b[0], device) + leaf(a[1], device) * leaf(p, device) +
           leaf(a[2], device) * leaf(b[2], device) - 0.5;
  });
  check_same(f, [&](bool device) {  // a common subexpression, evaluated once
    auto product = leaf(a[3], device) * leaf(b[3], device);
    return rotate(product, 1) + product;
  });
}

TEST_CASE("GPU eDSL: degree-15 polynomial, constants, runtime rotations", "[gpu][expr]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto& f = fixture();
  const Pair x = cipher(f, 0.9);
  std::array<double, 16> c{};
  for (std::size_t k = 0; k < c.size(); ++k) c[k] = (k % 2 == 0 ? 1.0 : -1.0) / static_cast<double>(k + 1);
  check_same(f, [&](bool device) { return cerium::polynomial(leaf(x, device), c); });
  check_same(f, [&](bool device) {
    return rescale(leaf(x, device) * cerium::integer(3) * 0.25) + cerium::integer(1) +
           sum_rotations(leaf(x, device), std::vector<std::int64_t>{1, 2, 3});
  });
}

TEST_CASE("GPU eDSL: linear_combination with constant terms equals the CPU over more terms than a launch takes",
          "[gpu][expr]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto& f = fixture();
  std::vector<Pair> a;
  for (int i = 0; i < 40; ++i) a.push_back(cipher(f));
  const auto& basis = a[0].host->part(0).basis();
  const std::size_t limbs = basis.size();
  // 35 polynomial products (two launches' worth) and 39 constant terms (several launches at any limb count).
  std::vector<const cerium::ring::RnsPoly*> ha, hb, hc, da, db, dc;
  std::vector<std::uint32_t> scalars;
  for (std::size_t i = 1; i < a.size(); ++i) {
    if (i < 36) {
      ha.push_back(&a[i].host->part(1));
      hb.push_back(&a[i - 1].host->part(0));
      da.push_back(&a[i].device->part(1));
      db.push_back(&a[i - 1].device->part(0));
    }
    hc.push_back(&a[i].host->part(0));
    dc.push_back(&a[i].device->part(0));
    for (std::size_t l = 0; l < limbs; ++l) scalars.push_back(static_cast<std::uint32_t>(f.rng() % basis.prime(l)));
  }
  for (const bool accumulate : {false, true}) {
    cerium::ring::RnsPoly want = a[0].host->part(0).clone();
    cerium::ring::RnsPoly got = f.gpu.backend().clone(a[0].device->part(0));
    f.cpu.evaluator.backend().linear_combination(want, ha, hb, hc, scalars, accumulate);
    f.gpu.backend().linear_combination(got, da, db, dc, scalars, accumulate);
    CHECK(f.gpu.backend().download(got) == want);
  }
  // The shapes with their own kernel instantiation (kernels/elementwise.cu), and their neighbours: generic.
  for (const std::size_t count : {1, 2, 3, 4, 8, 16}) {
    for (const bool products : {true, false}) {
      INFO(count << (products ? " products" : " constant terms"));
      const std::size_t p = products ? count : 0, q = products ? 0 : count;
      const std::span<const cerium::ring::RnsPoly* const> ha_(ha.data(), p), hb_(hb.data(), p), hc_(hc.data(), q);
      const std::span<const cerium::ring::RnsPoly* const> da_(da.data(), p), db_(db.data(), p), dc_(dc.data(), q);
      const std::span<const std::uint32_t> s_(scalars.data(), q * limbs);
      cerium::ring::RnsPoly want = a[0].host->part(0).clone();
      cerium::ring::RnsPoly got = f.gpu.backend().clone(a[0].device->part(0));
      f.cpu.evaluator.backend().linear_combination(want, ha_, hb_, hc_, s_, false);
      f.gpu.backend().linear_combination(got, da_, db_, dc_, s_, false);
      CHECK(f.gpu.backend().download(got) == want);
    }
  }
  // No terms: zero.
  cerium::ring::RnsPoly zero = f.gpu.backend().clone(a[0].device->part(0));
  f.gpu.backend().linear_combination(zero, {}, {}, {}, {}, false);
  CHECK(f.gpu.backend().download(zero) == cerium::ring::RnsPoly(a[0].host->part(0).basis_ptr(),
                                                                 {.form = cerium::ring::PolyForm::ntt}));
}

TEST_CASE("GPU eDSL: constant and integer products fused, sums split through -", "[gpu][expr]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto& f = fixture();
  std::vector<Pair> a;
  for (int i = 0; i < 4; ++i) a.push_back(cipher(f));
  const PlainPair p = plain(f), q = plain(f);
  check_same(f, [&](bool device) {
    return rescale(leaf(a[0], device) * 0.5 + leaf(a[1], device) * -0.25 - leaf(a[2], device) * 0.125 +
                   0.75 * leaf(a[3], device));
  });
  check_same(f, [&](bool device) {
    return leaf(a[0], device) * cerium::integer(2) - leaf(a[1], device) * cerium::integer(-3) + leaf(a[2], device) -
           (leaf(a[3], device) - leaf(a[0], device) * cerium::integer(5));
  });
  check_same(f, [&](bool device) {
    return leaf(a[0], device) * leaf(p, device) - (leaf(a[1], device) * leaf(q, device) - leaf(a[2], device) *
                                                   leaf(p, device));
  });
  check_same(f, [&](bool device) {
    return rescale(leaf(a[0], device) * leaf(a[1], device) - leaf(a[1], device) * leaf(a[2], device) +
                   leaf(a[2], device) * leaf(a[3], device));
  });
}

TEST_CASE("GPU eDSL: rescale folded into the fused pass equals the CPU", "[gpu][expr]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto& f = fixture();
  std::vector<Pair> a;
  std::vector<PlainPair> w;
  for (int i = 0; i < 5; ++i) {
    a.push_back(cipher(f));
    w.push_back(plain(f));
  }
  check_same(f, [&](bool device) {  // plaintext products: one folded pass per part
    std::vector<decltype(leaf(a[0], device) * leaf(w[0], device))> terms;
    for (std::size_t i = 0; i < a.size(); ++i) terms.push_back(leaf(a[i], device) * leaf(w[i], device));
    return rescale(cerium::sum(std::move(terms)));
  });
  check_same(f, [&](bool device) {  // a subtracted plaintext product: computed alone, no fold
    return rescale(leaf(a[0], device) * leaf(w[0], device) - leaf(a[1], device) * leaf(w[1], device) +
                   leaf(a[3], device) * leaf(w[3], device));
  });
  // The backend operation alone, at two levels (two dropped primes each), against the CPU's.
  for (const int level : {f.cpu.context->max_level(), 1}) {
    const auto& rescaler = f.cpu.context->rescaler(level);
    std::vector<const cerium::ring::RnsPoly*> ha, hb, hc, da, db, dc;
    std::vector<Ciphertext> host, device;
    for (int i = 0; i < 4; ++i) {
      host.push_back(f.cpu.evaluator.level_down(*a[static_cast<std::size_t>(i)].host, level));
      device.push_back(f.gpu.upload(host.back()));
    }
    std::vector<std::uint32_t> scalars;
    for (int i = 0; i < 2; ++i) {
      ha.push_back(&host[i].part(0));
      hb.push_back(&host[i + 1].part(1));
      da.push_back(&device[i].part(0));
      db.push_back(&device[i + 1].part(1));
      hc.push_back(&host[i + 2].part(1));
      dc.push_back(&device[i + 2].part(1));
      for (std::size_t l = 0; l < rescaler.basis().size(); ++l)
        scalars.push_back(static_cast<std::uint32_t>(f.rng() % rescaler.basis().prime(l)));
    }
    cerium::ring::RnsPoly want;
    f.cpu.evaluator.backend().linear_combination_rescaled(rescaler, want, ha, hb, hc, scalars);
    cerium::ring::RnsPoly got = f.gpu.backend().allocate(
        f.cpu.context->q_basis(level - 1), {.form = cerium::ring::PolyForm::ntt});
    f.gpu.backend().linear_combination_rescaled(rescaler, got, da, db, dc, scalars);
    CHECK(f.gpu.backend().download(got) == want);
  }
}
