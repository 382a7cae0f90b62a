// Every evaluator operation on the CUDA backend gives exactly the CPU backend's words, on fresh random inputs, at
// N = 2^12 .. 2^16, with one- and two-prime levels, several dnum values and at several levels.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cerium/backend/cuda/graph.hpp"
#include "cerium/backend/cuda/memory.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "gpu_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

namespace {

using namespace evaluator_test;
using cerium::backend::CudaBackend;

struct GpuFixture {
  Fixture cpu;
  CudaEvaluator gpu;
  std::mt19937_64 rng;

  GpuFixture(const CkksConfig& config, const KeyRequest& keys)
      : cpu(config, keys), gpu(cpu.context, CudaBackend(cpu.context)), rng(cerium_test::make_rng()) {
    if (cpu.evaluator.relinearization_key()) gpu.set_relinearization_key(cpu.evaluator.relinearization_key());
    if (cpu.evaluator.galois_keys()) gpu.set_galois_keys(cpu.evaluator.galois_keys());
  }

  Ciphertext fresh(int level = -1) { return cpu.encrypt(random_complex(rng, cpu.max_slots()), level); }
  std::vector<Ciphertext> fresh_list(int level, std::size_t count) {
    std::vector<Ciphertext> out;
    for (std::size_t i = 0; i < count; ++i) out.push_back(fresh(level));
    return out;
  }
  Plaintext plain(int level, double scale = 0) {
    return cpu.encoder.encode(random_complex(rng, cpu.max_slots()), EncodeOptions{.level = level, .scale = scale});
  }
};

// Runs op on both evaluators (the GPU on uploaded copies of the same inputs) and compares the words.
template <class Op>
void check_same(GpuFixture& f, const std::string& name, const std::vector<Ciphertext>& inputs, Op op) {
  INFO("operation " << name);
  std::vector<Ciphertext> on_gpu;
  for (const auto& c : inputs) on_gpu.push_back(f.gpu.upload(c));
  const Ciphertext want = op(f.cpu.evaluator, inputs);
  const Ciphertext got = f.gpu.download(op(f.gpu, on_gpu));
  CHECK(got.level() == want.level());
  CHECK(got.scale() == want.scale());
  CHECK(same_words(got, want));
}

void check_all_operations(const CkksConfig& config) {
  const std::vector<std::int64_t> steps = {1, -3, 7};
  GpuFixture f(config, KeyRequest{.rotations = steps, .conjugation = true});
  const int top = f.cpu.context->max_level();
  for (const int level : {top, top > 1 ? top - 1 : top}) {
    INFO("N = " << f.cpu.context->ring_degree() << ", level " << level << ", dnum " << config.dnum << ", width "
                << config.level_width);
    const std::vector<Ciphertext> one = f.fresh_list(level, 1);
    const std::vector<Ciphertext> two = f.fresh_list(level, 2);
    const Plaintext p = f.plain(level);
    const Plaintext p_gpu = f.gpu.upload(p);
    const double c = std::uniform_real_distribution<double>(-2, 2)(f.rng);
    const Complex z{c, -0.75 * c};

    check_same(f, "add", two, [](auto& e, auto& x) { return e.add(x[0], x[1]); });
    check_same(f, "sub", two, [](auto& e, auto& x) { return e.sub(x[0], x[1]); });
    check_same(f, "negate", one, [](auto& e, auto& x) { return e.negate(x[0]); });
    check_same(f, "add plaintext", one, [&](auto& e, auto& x) {
      return e.add(x[0], &e == static_cast<const void*>(&f.gpu) ? p_gpu : p);
    });
    check_same(f, "multiply plaintext", one, [&](auto& e, auto& x) {
      return e.multiply(x[0], &e == static_cast<const void*>(&f.gpu) ? p_gpu : p);
    });
    check_same(f, "add real constant", one, [&](auto& e, auto& x) { return e.add(x[0], c); });
    check_same(f, "add complex constant", one, [&](auto& e, auto& x) { return e.add(x[0], z); });
    check_same(f, "multiply real constant", one, [&](auto& e, auto& x) { return e.multiply(x[0], c); });
    check_same(f, "multiply complex constant", one, [&](auto& e, auto& x) { return e.multiply(x[0], z); });
    check_same(f, "multiply integer", one, [](auto& e, auto& x) { return e.multiply_integer(x[0], -12345); });
    check_same(f, "multiply no relin", two, [](auto& e, auto& x) { return e.multiply_no_relin(x[0], x[1]); });
    check_same(f, "multiply + relinearize", two, [](auto& e, auto& x) { return e.multiply(x[0], x[1]); });
    check_same(f, "square, relinearize later", one, [](auto& e, auto& x) {
      return e.relinearize(e.multiply_no_relin(x[0], x[0]));
    });
    check_same(f, "rotate", one, [](auto& e, auto& x) { return e.rotate(x[0], 1); });
    check_same(f, "rotate back", one, [](auto& e, auto& x) { return e.rotate(x[0], -3); });
    check_same(f, "conjugate", one, [](auto& e, auto& x) { return e.conjugate(x[0]); });
    check_same(f, "hoisted rotations", one, [&](auto& e, auto& x) {
      auto r = e.rotate_hoisted(x[0], steps);
      return e.add(e.add(r[0], r[1]), r[2]);
    });
    if (level >= 1) {
      check_same(f, "multiply, relinearize, rescale", two, [](auto& e, auto& x) {
        return e.rescale(e.multiply(x[0], x[1]));
      });
      // The GPU's fused path (one forward NTT for ModDown and rescale) against the CPU's two steps.
      check_same(f, "multiply_rescale", two, [](auto& e, auto& x) { return e.multiply_rescale(x[0], x[1]); });
      check_same(f, "square, relinearize_rescale later", one, [](auto& e, auto& x) {
        return e.relinearize_rescale(e.multiply_no_relin(x[0], x[0]));
      });
      // Sums of separately rescaled plaintext products: the CUDA backend's fused form (one rescale's transforms
      // for the sum) against the CPU's term-by-term words; 40 terms pass the combination kernel's launch size.
      for (const std::size_t terms : {std::size_t{1}, std::size_t{3}, std::size_t{40}}) {
        INFO("terms " << terms);
        const std::vector<Ciphertext> xs = f.fresh_list(level, terms);
        std::vector<Plaintext> ps, ps_gpu;
        for (std::size_t t = 0; t < terms; ++t) {
          ps.push_back(f.plain(level));
          ps_gpu.push_back(f.gpu.upload(ps.back()));
        }
        // The terms as the evaluator e (the CPU's or the GPU's) takes them.
        const auto terms_of = [&](auto& e, auto& x) {
          const bool on_gpu = &e == static_cast<const void*>(&f.gpu);
          std::pair<std::vector<const Ciphertext*>, std::vector<const Plaintext*>> out;
          for (std::size_t t = 0; t < terms; ++t) {
            out.first.push_back(&x[t]);
            out.second.push_back(on_gpu ? &ps_gpu[t] : &ps[t]);
          }
          return out;
        };
        check_same(f, "multiply_plain_rescale_sum", xs, [&](auto& e, auto& x) {
          const auto [a, p] = terms_of(e, x);
          return e.multiply_plain_rescale_sum(a, p);
        });
        // The same products summed unrescaled (a sum rounded once, graph::RunOptions::round_sums_once).
        check_same(f, "multiply_plain_sum", xs, [&](auto& e, auto& x) {
          const auto [a, p] = terms_of(e, x);
          return e.rescale(e.multiply_plain_sum(a, p));
        });
      }
      check_same(f, "level_down", one, [&](auto& e, auto& x) { return e.level_down(x[0], level - 1); });
      check_same(f, "adjust_scale", one, [&](auto& e, auto& x) { return e.adjust_scale(x[0], x[0].scale() * 0.75); });
      check_same(f, "operands at different levels", two, [&](auto& e, auto& x) {
        return e.add(e.rescale(e.multiply(x[0], 0.5)), x[1]);
      });
    }
  }
}

}  // namespace

TEST_CASE("CUDA evaluator equals the CPU evaluator word for word", "[gpu][evaluator]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  SECTION("N = 2^12, two-prime levels, dnum 2") { check_all_operations(toy(12, 3, 2, 2)); }
  SECTION("N = 2^13, one-prime levels, dnum 3") { check_all_operations(toy(13, 5, 1, 3)); }
  SECTION("N = 2^14, two-prime levels, dnum 1") { check_all_operations(toy(14, 2, 2, 1)); }
}

// Larger rings: left out of the sanitizer runs (scripts/gpu-check.sh), which would take minutes on them.
TEST_CASE("CUDA evaluator equals the CPU evaluator at N = 2^15 and 2^16", "[gpu][evaluator][large]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  SECTION("N = 2^15, two-prime levels, dnum 4") { check_all_operations(toy(15, 4, 2, 4)); }
  SECTION("N = 2^16, two-prime levels, dnum 3") { check_all_operations(toy(16, 5, 2, 3)); }
}

TEST_CASE("A compressed periodic plaintext expands on the device to the host's words", "[gpu][evaluator][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  for (const int log_n : {12, 16}) {
    GpuFixture f(toy(log_n, 3, 2, 2), KeyRequest{});
    const std::size_t full = f.cpu.max_slots();
    for (const std::size_t period : {std::size_t{1}, std::size_t{64}, full}) {
      for (const int level : {0, 3}) {
        INFO("log N " << log_n << ", period " << period << ", level " << level);
        const PeriodicPlaintext compressed = f.cpu.encoder.encode_periodic_compressed(
            random_complex(f.rng, period), EncodeOptions{.level = level, .slots = full});
        const Plaintext want = compressed.expand();
        const Plaintext on_device = f.gpu.upload(compressed);
        CHECK(on_device.level() == level);
        CHECK(on_device.slots() == full);
        CHECK(f.gpu.download(on_device).poly() == want.poly());
        // And a product with it: the CPU's words (above level 0, where the product's scale fits).
        if (level == 0) continue;
        const Ciphertext ct = f.fresh(level);
        const Ciphertext cpu_product = f.cpu.evaluator.multiply(ct, want);
        const Ciphertext gpu_product = f.gpu.download(f.gpu.multiply(f.gpu.upload(ct), on_device));
        CHECK(same_words(gpu_product, cpu_product));
      }
    }
  }
}

TEST_CASE("An unscaled plaintext encodes on the device to the host encoder's words at every level",
          "[gpu][evaluator][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  for (const int log_n : {12, 16}) {
    GpuFixture f(toy(log_n, 4, 2, 2), KeyRequest{});
    const std::size_t full = f.cpu.max_slots();
    const int top = f.cpu.context->max_level();
    // Periods below N / 8 take the device's sparse path (the NTT's first stages on N / gap words, up to 8192 of
    // them); N / 4 and the full slot vector its dense one (an encoding pass, then the whole NTT).
    for (const std::size_t period : {std::size_t{1}, std::size_t{64}, std::size_t{1024}, std::size_t{4096},
                                     std::size_t{8192}, full}) {
      if (period > full) continue;
      // Values far from 1 too, so that large scales give integers of 2^64 and more (the mantissa-and-shift path).
      for (const double magnitude : {1.0, 1e6}) {
        auto values = random_complex(f.rng, period);
        for (auto& v : values) v *= magnitude;
        const UnscaledPlaintext host = f.cpu.encoder.unscaled(values, full);
        const UnscaledPlaintext on_device = f.gpu.upload(host);
        REQUIRE_FALSE(on_device.device().host_accessible());
        for (int level = 0; level <= top; ++level) {
          for (const double log_scale : {30.0, 20.0 + 20.0 * level}) {
            INFO("log N " << log_n << ", period " << period << ", magnitude " << magnitude << ", level " << level
                          << ", scale 2^" << log_scale);
            const EncodeOptions options{.level = level, .scale = std::ldexp(1.0, static_cast<int>(log_scale))};
            const Plaintext want = f.cpu.encoder.encode_periodic(values, {.level = level, .scale = options.scale,
                                                                          .slots = full});
            const Plaintext got = f.gpu.encode(on_device, options);
            CHECK(got.level() == level);
            CHECK(got.scale() == options.scale);
            CHECK(got.slots() == full);
            CHECK(f.gpu.download(got).poly() == want.poly());
            // The same integers over Q_l u P (a double-hoisted transform's diagonals): the host's words.
            CHECK(f.gpu.backend().download(f.gpu.encode_extended(on_device, options)) ==
                  f.cpu.encoder.encode_extended(host, options));
          }
        }
      }
    }
    // A batch (periods mixed; more than one launch's 32) gives the words of one by one.
    std::vector<UnscaledPlaintext> many;
    for (std::size_t t = 0; t < 37; ++t) {
      many.push_back(f.gpu.upload(f.cpu.encoder.unscaled(random_complex(f.rng, t % 3 == 0 ? full : 16), full)));
    }
    std::vector<const UnscaledPlaintext*> pointers;
    for (const auto& u : many) pointers.push_back(&u);
    const EncodeOptions batch_options{.level = top - 1, .scale = std::ldexp(1.0, 40)};
    const std::vector<Plaintext> batch = f.gpu.encode(pointers, batch_options);
    REQUIRE(batch.size() == many.size());
    for (std::size_t t = 0; t < many.size(); ++t) {
      INFO("log N " << log_n << ", batch term " << t);
      CHECK(f.gpu.download(batch[t]).poly() == f.gpu.download(f.gpu.encode(many[t], batch_options)).poly());
    }
    // A batch of sparse terms only (one launch of the sparse path, gaps mixed): the same.
    std::vector<UnscaledPlaintext> sparse, sparse_on_host;
    for (std::size_t t = 0; t < 35; ++t) {
      const std::size_t period = std::min<std::size_t>(full / 8, std::size_t{16} << (t % 7));
      sparse_on_host.push_back(f.cpu.encoder.unscaled(random_complex(f.rng, period), full));
      sparse.push_back(f.gpu.upload(sparse_on_host.back()));
    }
    std::vector<const UnscaledPlaintext*> sparse_pointers;
    for (const auto& u : sparse) sparse_pointers.push_back(&u);
    const std::vector<Plaintext> sparse_batch = f.gpu.encode(sparse_pointers, batch_options);
    for (std::size_t t = 0; t < sparse.size(); ++t) {
      INFO("log N " << log_n << ", sparse batch term " << t);
      const Plaintext want = f.cpu.encoder.encode(sparse_on_host[t], batch_options);
      CHECK(f.gpu.download(sparse_batch[t]).poly() == want.poly());
    }
    // The checks come before the device works: scale overflow and a level that does not exist.
    const UnscaledPlaintext on_device = f.gpu.upload(f.cpu.encoder.unscaled(random_complex(f.rng, 8), full));
    CHECK_THROWS_AS(f.gpu.encode(on_device, {.level = 0, .scale = std::ldexp(1.0, 200)}), InvalidArgument);
    CHECK_THROWS_AS(f.gpu.encode(on_device, {.level = top + 1}), LevelError);
  }
}

TEST_CASE("Sums of products by unscaled plaintexts kept compact on the device give the CPU's words",
          "[gpu][evaluator][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  for (const int log_n : {12, 16}) {
    GpuFixture f(toy(log_n, 4, 2, 2), KeyRequest{});
    const std::size_t full = f.cpu.max_slots();
    const int top = f.cpu.context->max_level();
    const CudaBackend& backend = f.gpu.backend();
    // A token row's period (1024 at N = 2^16), the shortest and the longest periods kept compact (gap N / 2 and
    // gap 4), and 70 terms (past one launch's 64 term products and 32 encodings).
    for (const std::size_t period : {std::size_t{1}, std::size_t{64}, std::size_t{1024}, full / 8}) {
      if (period > full / 8) continue;
      const std::size_t gap = (full * 2) / (2 * period);
      REQUIRE(backend.compact_encoding(gap));
      for (const std::size_t terms : {std::size_t{1}, std::size_t{5}, std::size_t{70}}) {
        if (terms == 70 && period != 64) continue;
        for (const int level : {1, top}) {
          INFO("log N " << log_n << ", period " << period << ", terms " << terms << ", level " << level);
          const std::vector<Ciphertext> xs = f.fresh_list(level, terms);
          std::vector<UnscaledPlaintext> host, device;
          for (std::size_t t = 0; t < terms; ++t) {
            host.push_back(f.cpu.encoder.unscaled(random_complex(f.rng, period), full));
            device.push_back(f.gpu.upload(host.back()));
          }
          const EncodeOptions options{.level = level, .scale = f.cpu.evaluator.level_prime_product(level),
                                      .slots = full};
          // The compact words are the encoded plaintext's every gap-th word.
          std::vector<const DeviceWords*> words;
          std::vector<std::size_t> gaps;
          for (const auto& u : device) {
            words.push_back(&u.words());
            gaps.push_back(u.gap());
          }
          const auto compact = backend.encode_compact_batch(f.cpu.context->q_basis(level), words, gaps, options.scale);
          const auto compact_host = compact.words.copy_to(Device::cpu(), compact.words.size());
          const std::size_t count = (full * 2) / gap, limbs = f.cpu.context->q_basis(level)->size();
          for (const std::size_t t : {std::size_t{0}, terms - 1}) {
            const Plaintext want = f.cpu.encoder.encode(host[t], options);
            bool same = true;
            for (std::size_t i = 0; i < limbs; ++i) {
              for (std::size_t k = 0; k < count; ++k) {
                same = same && compact_host.data()[(t * limbs + i) * count + k] == want.poly().limb(i)[k * gap];
              }
            }
            CHECK(same);
          }
          std::vector<Ciphertext> on_gpu;
          std::vector<const Ciphertext*> a_cpu, a_gpu;
          std::vector<const UnscaledPlaintext*> p_cpu, p_gpu;
          for (std::size_t t = 0; t < terms; ++t) on_gpu.push_back(f.gpu.upload(xs[t]));
          for (std::size_t t = 0; t < terms; ++t) {
            a_cpu.push_back(&xs[t]);
            a_gpu.push_back(&on_gpu[t]);
            p_cpu.push_back(&host[t]);
            p_gpu.push_back(&device[t]);
          }
          const Ciphertext want = f.cpu.evaluator.multiply_plain_rescale_sum(a_cpu, p_cpu, options);
          const Ciphertext got = f.gpu.download(f.gpu.multiply_plain_rescale_sum(a_gpu, p_gpu, options));
          CHECK(got.level() == want.level());
          CHECK(got.scale() == want.scale());
          CHECK(same_words(got, want));
          // Summed unrescaled from the compact words: the CPU's sum of the encoded plaintexts' products.
          CHECK(same_words(f.gpu.download(f.gpu.multiply_plain_sum(a_gpu, p_gpu, options)),
                           f.cpu.evaluator.multiply_plain_sum(a_cpu, p_cpu, options)));
        }
      }
    }
    // Gaps mixed (not kept compact: encoded whole, the same words) and a product scale that does not fit the
    // level (before the device works).
    const std::vector<Ciphertext> xs = f.fresh_list(top, 2);
    std::vector<UnscaledPlaintext> host, device;
    std::vector<Ciphertext> on_gpu;
    for (const std::size_t period : {std::size_t{16}, std::size_t{64}}) {
      host.push_back(f.cpu.encoder.unscaled(random_complex(f.rng, period), full));
      device.push_back(f.gpu.upload(host.back()));
      on_gpu.push_back(f.gpu.upload(xs[device.size() - 1]));
    }
    const EncodeOptions options{.level = top, .scale = f.cpu.evaluator.level_prime_product(top), .slots = full};
    const std::vector<const Ciphertext*> a_cpu = {&xs[0], &xs[1]}, a_gpu = {&on_gpu[0], &on_gpu[1]};
    const std::vector<const UnscaledPlaintext*> p_cpu = {&host[0], &host[1]}, p_gpu = {&device[0], &device[1]};
    CHECK(same_words(f.gpu.download(f.gpu.multiply_plain_rescale_sum(a_gpu, p_gpu, options)),
                     f.cpu.evaluator.multiply_plain_rescale_sum(a_cpu, p_cpu, options)));
    CHECK_THROWS_AS(f.gpu.multiply_plain_rescale_sum(a_gpu, p_gpu, {.level = top, .scale = std::ldexp(1.0, 300)}),
                    Error);
  }
}

TEST_CASE("Slot values transformed on the device give the host encoder's unscaled words", "[gpu][evaluator][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  for (const int log_n : {12, 16}) {
    GpuFixture f(toy(log_n, 4, 2, 2), KeyRequest{});
    const std::size_t full = f.cpu.max_slots();
    const int top = f.cpu.context->max_level();
    for (const std::size_t period : {std::size_t{1}, std::size_t{2}, std::size_t{16}, std::size_t{1024}, full}) {
      for (const double magnitude : {1.0, 1e6}) {
        auto values = random_complex(f.rng, period);
        for (auto& v : values) v *= magnitude;
        for (const std::size_t slots : {full, std::max<std::size_t>(period, 8)}) {
          INFO("log N " << log_n << ", period " << period << ", magnitude " << magnitude << ", slots " << slots);
          const UnscaledPlaintext want = f.cpu.encoder.unscaled(values, slots);
          const UnscaledPlaintext got = f.gpu.unscaled(values, slots);
          REQUIRE_FALSE(got.device().host_accessible());
          CHECK(got.slots() == want.slots());
          CHECK(got.period() == want.period());
          CHECK(got.largest() == want.largest());
          const UnscaledPlaintext back = got.copy_to(Device::cpu());
          CHECK(std::ranges::equal(back.host_coefficients(), want.host_coefficients()));
          // Finished on the device at two levels: the host encoder's plaintexts.
          for (const int level : {0, top}) {
            const EncodeOptions options{.level = level, .scale = std::ldexp(1.0, 30 + 10 * level)};
            CHECK(f.gpu.download(f.gpu.encode(got, options)).poly() == f.cpu.encoder.encode(want, options).poly());
          }
        }
      }
    }
    // The host's checks, before anything reaches the device.
    auto bad = random_complex(f.rng, 8);
    bad[3] = {std::nan(""), 0.0};
    CHECK_THROWS_AS(f.gpu.unscaled(bad, full), InvalidArgument);
    CHECK_THROWS_AS(f.gpu.unscaled(random_complex(f.rng, 6), full), InvalidArgument);
    CHECK_THROWS_AS(f.gpu.unscaled(random_complex(f.rng, 16), 8), InvalidArgument);
  }
}

TEST_CASE("CUDA backend primitives equal the CPU backend's", "[gpu][backend][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const auto context = Context::create(toy(13, 4, 2, 3));
  const CudaBackend gpu(context);
  const backend::CpuBackend cpu;
  auto rng = cerium_test::make_rng();
  const int level = context->max_level();
  const auto& q = context->q_basis(level);
  ring::RnsPoly x(q, ring::PolyForm::coefficient);
  for (std::size_t i = 0; i < x.limb_count(); ++i) {
    std::uniform_int_distribution<std::uint32_t> dist(0, q->prime(i) - 1);
    for (auto& w : x.limb(i)) w = dist(rng);
  }
  const ring::RnsPoly x_gpu = gpu.upload(x);

  SECTION("forward and inverse NTT over a level, Q u P and P") {
    for (const auto& basis : {q, context->qp_basis(level - 1), context->p_basis()}) {
      ring::RnsPoly y(basis, ring::PolyForm::coefficient);
      for (std::size_t i = 0; i < y.limb_count(); ++i)
        for (auto& w : y.limb(i)) w = static_cast<std::uint32_t>(rng() % basis->prime(i));
      ring::RnsPoly d = gpu.upload(y);
      gpu.to_ntt(d);
      cpu.to_ntt(y);
      CHECK(gpu.download(d) == y);
      gpu.to_coeff(d);
      cpu.to_coeff(y);
      CHECK(gpu.download(d) == y);
    }
  }
  SECTION("coefficient-form automorphism and rescale") {
    const ring::Automorphism& a = context->automorphism(ring::rotation_galois_element(5, context->ring_degree()));
    CHECK(gpu.download(gpu.automorphism(a, x_gpu)) == cpu.automorphism(a, x));
    ring::RnsPoly r = x.clone();
    ring::RnsPoly r_gpu = gpu.clone(x_gpu);
    cpu.rescale(context->rescaler(level), r);
    gpu.rescale(context->rescaler(level), r_gpu);
    CHECK(gpu.download(r_gpu) == r);
  }
  SECTION("ModUp, key-switch inner product and ModDown in NTT form; ModDown in coefficient form") {
    KeyGenerator keygen(context);
    const auto relin = std::make_shared<const RelinearizationKey>(keygen.relinearization_key(KeyStorage::seeded));
    const auto relin_gpu = resident(gpu, relin);
    ring::RnsPoly y = x.clone();
    y.to_ntt();
    const ring::RnsPoly y_gpu = gpu.upload(y);
    const auto digits = cpu.mod_up(*context, y, level);
    const auto digits_gpu = gpu.mod_up(*context, y_gpu, level);
    REQUIRE(digits.digits.size() == digits_gpu.digits.size());
    for (std::size_t d = 0; d < digits.digits.size(); ++d) CHECK(gpu.download(digits_gpu.digits[d]) == digits.digits[d]);
    const auto& a = context->automorphism(ring::rotation_galois_element(-2, context->ring_degree()));
    for (const ring::Automorphism* automorphism : {static_cast<const ring::Automorphism*>(nullptr), &a}) {
      const auto want = cpu.key_switch_apply(*context, digits, relin->key(), automorphism);
      const auto got = gpu.key_switch_apply(*context, digits_gpu, relin_gpu->key(), automorphism);
      CHECK(gpu.download(got[0]) == want[0]);
      CHECK(gpu.download(got[1]) == want[1]);
    }
    // Addends folded into ModDown's last pass: on both sums, on the first only, on the second only.
    ring::RnsPoly other = y.clone();
    cpu.negate(other);
    const ring::RnsPoly other_gpu = gpu.upload(other);
    using Addends = std::array<const ring::RnsPoly*, 2>;
    for (const auto& [host, device] : {std::pair{Addends{&y, &other}, Addends{&y_gpu, &other_gpu}},
                                       std::pair{Addends{&other, nullptr}, Addends{&other_gpu, nullptr}},
                                       std::pair{Addends{nullptr, &y}, Addends{nullptr, &y_gpu}}}) {
      const auto want = cpu.key_switch_apply(*context, digits, relin->key(), &a, host);
      const auto got = gpu.key_switch_apply(*context, digits_gpu, relin_gpu->key(), &a, device);
      CHECK(gpu.download(got[0]) == want[0]);
      CHECK(gpu.download(got[1]) == want[1]);
      // And rescaled in the same pass.
      const auto& rescaler = context->rescaler(level);
      const auto want_rescaled = cpu.key_switch_apply(*context, digits, relin->key(), &a, host, rescaler);
      const auto got_rescaled = gpu.key_switch_apply(*context, digits_gpu, relin_gpu->key(), &a, device, rescaler);
      CHECK(gpu.download(got_rescaled[0]) == want_rescaled[0]);
      CHECK(gpu.download(got_rescaled[1]) == want_rescaled[1]);
    }
    const auto& rescaler = context->rescaler(level);
    const auto want_rescaled = cpu.key_switch_apply(*context, digits, relin->key(), nullptr, {}, rescaler);
    const auto got_rescaled = gpu.key_switch_apply(*context, digits_gpu, relin_gpu->key(), nullptr, {}, rescaler);
    CHECK(gpu.download(got_rescaled[0]) == want_rescaled[0]);
    CHECK(gpu.download(got_rescaled[1]) == want_rescaled[1]);
    ring::RnsPoly wide(context->qp_basis(level), ring::PolyForm::coefficient);
    for (std::size_t i = 0; i < wide.limb_count(); ++i)
      for (auto& w : wide.limb(i)) w = static_cast<std::uint32_t>(rng() % wide.basis().prime(i));
    const auto& down = context->mod_down(level);
    CHECK(gpu.download(gpu.mod_down(down, gpu.upload(wide))) == cpu.mod_down(down, wide));
  }
  SECTION("ModRaise from one and two primes to the top level") {
    for (const std::size_t limbs : {std::size_t{1}, std::size_t{2}}) {
      const auto low = ring::make_basis(q->sub_basis(0, limbs));
      ring::RnsPoly y(low, ring::PolyForm::ntt);
      for (std::size_t i = 0; i < limbs; ++i)
        for (auto& w : y.limb(i)) w = static_cast<std::uint32_t>(rng() % low->prime(i));
      CHECK(gpu.download(gpu.mod_raise(gpu.upload(y), q)) == cpu.mod_raise(y, q));
    }
  }
  SECTION("host polynomials are refused with a clear error") {
    ring::RnsPoly host = x.clone();
    CHECK_THROWS_AS(gpu.add(host, x_gpu), UnsupportedError);
    CHECK_THROWS_AS(x_gpu.limb(0), UnsupportedError);
  }
}

// The fused key switch (ModUp's last NTT pass summing the digits with the key) against the CPU's ModUp and
// key_switch_apply: one-pass (N <= 2^13) and two-pass degrees, 1 to 4 digits (fused) and 5 (the unfused path),
// at the top level and at level 1, with addends, with and without the rescale.
TEST_CASE("CUDA fused key switch equals ModUp then key_switch_apply", "[gpu][backend][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto rng = cerium_test::make_rng();
  for (const CkksConfig& config : {toy(12, 3, 2, 2), toy(13, 4, 2, 3), toy(14, 4, 2, 4), toy(14, 4, 2, 5),
                                   toy(15, 3, 1, 1)}) {
    const auto context = Context::create(config);
    const CudaBackend gpu(context);
    const backend::CpuBackend cpu;
    KeyGenerator keygen(context);
    const auto relin = std::make_shared<const RelinearizationKey>(keygen.relinearization_key(KeyStorage::seeded));
    const auto relin_gpu = resident(gpu, relin);
    for (const int level : {context->max_level(), 1}) {
      INFO("N = " << context->ring_degree() << ", dnum " << config.dnum << ", level " << level);
      const auto random_poly = [&] {
        ring::RnsPoly p(context->q_basis(level), ring::PolyForm::ntt);
        for (std::size_t i = 0; i < p.limb_count(); ++i) {
          std::uniform_int_distribution<std::uint32_t> dist(0, p.basis().prime(i) - 1);
          for (auto& w : p.limb(i)) w = dist(rng);
        }
        return p;
      };
      const ring::RnsPoly y = random_poly(), other = random_poly();
      const ring::RnsPoly y_gpu = gpu.upload(y), other_gpu = gpu.upload(other);
      const auto digits = cpu.mod_up(*context, y, level);
      using Addends = std::array<const ring::RnsPoly*, 2>;
      const auto want = cpu.key_switch_apply(*context, digits, relin->key(), nullptr, Addends{&other, nullptr});
      const auto got = gpu.key_switch(*context, y_gpu, level, relin_gpu->key(), Addends{&other_gpu, nullptr}, nullptr);
      CHECK(gpu.download(got[0]) == want[0]);
      CHECK(gpu.download(got[1]) == want[1]);
      const auto& rescaler = context->rescaler(level);
      const auto want_rescaled =
          cpu.key_switch_apply(*context, digits, relin->key(), nullptr, Addends{&other, &y}, rescaler);
      const auto got_rescaled =
          gpu.key_switch(*context, y_gpu, level, relin_gpu->key(), Addends{&other_gpu, &y_gpu}, &rescaler);
      CHECK(gpu.download(got_rescaled[0]) == want_rescaled[0]);
      CHECK(gpu.download(got_rescaled[1]) == want_rescaled[1]);
    }
  }
}

TEST_CASE("Device memory: statistics, a cap that fails cleanly, pinned round trips", "[gpu][memory]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const auto context = Context::create(toy(14, 3, 2, 2));
  const CudaBackend gpu(context);
  const auto before = cuda::memory_stats();
  ring::RnsPoly kept = gpu.allocate(context->q_basis(3), {.form = ring::PolyForm::ntt});
  const auto during = cuda::memory_stats();
  CHECK(during.in_use >= before.in_use + kept.limb_count() * kept.n() * 4);
  CHECK(during.peak >= during.in_use);
  CHECK(during.allocations == before.allocations + 1);

  cuda::set_memory_limit(during.in_use + 1024);
  try {
    (void)gpu.allocate(context->q_basis(3), {.form = ring::PolyForm::ntt});
    FAIL("an allocation past the cap must throw");
  } catch (const OutOfMemoryError& e) {
    CHECK(message_contains(e, "memory limit"));
  }
  cuda::set_memory_limit(0);
  // What existed stays valid, and work goes on.
  CHECK(gpu.download(kept) == ring::RnsPoly(context->q_basis(3), ring::PolyForm::ntt));
  ring::RnsPoly big(context->key_basis(), ring::PolyForm::coefficient);
  auto rng = cerium_test::make_rng();
  for (std::size_t i = 0; i < big.limb_count(); ++i)
    for (auto& w : big.limb(i)) w = static_cast<std::uint32_t>(rng() % big.basis().prime(i));
  CHECK(gpu.download(gpu.upload(big)) == big);
}

TEST_CASE("A captured CUDA graph of in-place evaluator work replays it", "[gpu][graph][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  GpuFixture f(toy(12, 2, 2, 2), KeyRequest{});
  const Ciphertext x = f.fresh();
  const Ciphertext y = f.fresh();
  const Plaintext p = f.plain(f.cpu.context->max_level(), 1.0);  // scale 1: the product keeps x's scale
  Ciphertext x_gpu = f.gpu.upload(x);
  const Ciphertext y_gpu = f.gpu.upload(y);
  const Plaintext p_gpu = f.gpu.upload(p);
  const auto step = [&](auto& e, Ciphertext& a, const Ciphertext& b, const Plaintext& q) {
    e.add_inplace(a, b);
    e.multiply_inplace(a, q);
    a.set_scale(x.scale());  // the plaintext's scale is 1
  };
  // Plans are built outside the capture (their uploads wait on the host).
  Ciphertext warm = f.gpu.upload(x);
  step(f.gpu, warm, y_gpu, p_gpu);
  const cuda::Graph graph = cuda::Graph::capture([&] { step(f.gpu, x_gpu, y_gpu, p_gpu); });
  Ciphertext want = x.clone();
  for (int i = 0; i < 3; ++i) {
    graph.replay();
    step(f.cpu.evaluator, want, y, p);
  }
  CHECK(same_words(f.gpu.download(x_gpu), want));
}
