// One context with its keys, encoder, encryptor, evaluator and decryptor shared by several threads at once: the
// thread-safety that context.hpp, encryptor.hpp, decryptor.hpp and evaluator.hpp promise. Each thread encrypts,
// multiplies and relinearizes, rotates and decrypts its own values while the others do the same, fills the
// context's automorphism cache, generates a Galois key with a progress callback and logs through the shared sink.
// Threads only record what they computed; the checks run after they join (Catch2 assertions are not
// thread-safe). CI runs this file under ThreadSanitizer
// too (scripts/sanitize.sh).

#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "cerium/core/log.hpp"
#include "cerium/core/parallel.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/tracer.hpp"
#include "evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

namespace {

constexpr int thread_count = 4;
constexpr int rounds = 2;

struct Round {
  Values x, y;
  std::int64_t steps = 0;
  double product_bits = 0;  // rotate(rescale(x * y), steps) against the plaintext computation
  double public_bits = 0;   // decrypt_public(encrypt(x)) against x
};

struct ThreadResult {
  std::vector<Round> rounds;
  std::int64_t key_step = 0;
  GaloisKeys key;  // galois_keys({key_step}) made in the thread
  std::vector<const ring::Automorphism*> automorphisms;  // indexed like `elements` below
  std::exception_ptr error;
};

// Odd Galois elements that no key uses, so the threads race to build them in the context's cache.
std::vector<std::uint32_t> cold_elements(std::size_t n) {
  std::vector<std::uint32_t> elements;
  for (std::uint32_t g = 2 * static_cast<std::uint32_t>(n) - 3; elements.size() < 12; g -= 2) elements.push_back(g);
  return elements;
}

void run_thread(const Fixture& f, const std::vector<std::uint32_t>& elements, int index, ThreadResult& out,
                std::atomic<int>& progress_events) {
  try {
    // Keys depend on the generator's seed and the key's identity only, so this one must equal the evaluator's.
    out.key = f.keygen.galois_keys({out.key_step}, false, KeyStorage::seeded,
                                   [&progress_events](const ProgressEvent&) { progress_events.fetch_add(1); });
    // Each thread walks the cache in its own order.
    out.automorphisms.resize(elements.size());
    for (std::size_t i = 0; i < elements.size(); ++i) {
      const std::size_t k = (i + static_cast<std::size_t>(index) * 5) % elements.size();
      out.automorphisms[k] = &f.context->automorphism(elements[k]);
    }
    const NoiseFlooding flooding{.noise_bound = fresh_noise_bound_public_key(*f.context),
                                 .statistical_security = 10,
                                 .query_budget = 1};  // every call past the first logs a warning
    for (Round& r : out.rounds) {
      const Ciphertext a = f.encrypt(r.x);
      const Ciphertext b = f.encrypt(r.y);
      const Ciphertext product = f.evaluator.rescale(f.evaluator.multiply(a, b));
      const Ciphertext rotated_product = f.evaluator.rotate(product, r.steps);
      r.product_bits = precision_bits(f.decrypt(rotated_product),
                                      rotated(zip(r.x, r.y, [](Complex u, Complex v) { return u * v; }), r.steps));
      r.public_bits = precision_bits(f.encoder.decode(f.decryptor.decrypt_public(a, flooding)), r.x);
    }
  } catch (...) {
    out.error = std::current_exception();
  }
}

}  // namespace

TEST_CASE("one context and its keys serve several threads at once", "[ckks][threads]") {
  auto rng = cerium_test::make_rng(701);
  const CkksConfig config = toy(11, 3, 2, 2);
  const std::vector<std::int64_t> steps = {1, 2, 3, -1, 7, -5, 100, 513};
  Fixture f(config, {.relinearization = true, .rotations = steps});
  const std::vector<std::uint32_t> elements = cold_elements(f.context->ring_degree());

  std::vector<ThreadResult> results(thread_count);
  for (int t = 0; t < thread_count; ++t) {
    results[t].key_step = steps[static_cast<std::size_t>(t)];
    for (int k = 0; k < rounds; ++k) {
      results[t].rounds.push_back(Round{.x = random_complex(rng, f.max_slots()),
                                        .y = random_complex(rng, f.max_slots()),
                                        .steps = steps[static_cast<std::size_t>(t * rounds + k) % steps.size()]});
    }
  }

  std::atomic<int> warnings{0}, progress_events{0};
  const LogLevel old_level = log_level();
  set_log_level(LogLevel::warn);
  LogSink old_sink = set_log_sink([&warnings](LogLevel level, std::string_view) {
    if (level == LogLevel::warn) warnings.fetch_add(1);
  });
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < thread_count; ++t) {
      threads.emplace_back(run_thread, std::cref(f), std::cref(elements), t, std::ref(results[t]),
                           std::ref(progress_events));
    }
  }
  set_log_sink(std::move(old_sink));
  set_log_level(old_level);

  // 56-bit scale, N = 2^11: the evaluator tests' bound for one multiplication or rotation, less 2 bits for both.
  const double bound = config.level_prime_bits * config.level_width - config.log_n - 11.0;
  for (int t = 0; t < thread_count; ++t) {
    const ThreadResult& r = results[t];
    if (r.error) std::rethrow_exception(r.error);
    for (const Round& round : r.rounds) {
      INFO("thread " << t << ", rotation by " << round.steps << ": " << round.product_bits << " bits (bound " << bound
                     << "), public decryption " << round.public_bits << " bits");
      CHECK(round.product_bits >= bound);
      CHECK(round.public_bits >= 20);
    }
    // The cache built each element once: every thread got the same tables.
    CHECK(r.automorphisms == results[0].automorphisms);
    const std::uint32_t element = ring::rotation_galois_element(r.key_step, f.context->ring_degree());
    const SwitchingKey& mine = r.key.at(element);
    const SwitchingKey& shared = f.evaluator.galois_keys()->at(element);
    REQUIRE(mine.digit_count() == shared.digit_count());
    for (std::size_t d = 0; d < mine.digit_count(); ++d) {
      CHECK(mine.b(d) == shared.b(d));
      CHECK(mine.a(d) == shared.a(d));
    }
  }
  CHECK(progress_events.load() == 2 * thread_count);  // one at the start and one per key
  CHECK(f.encryptor.encryptions() == 2u * thread_count * rounds);
  CHECK(f.decryptor.public_decryptions() == std::uint64_t{thread_count} * rounds);
  CHECK(warnings.load() == thread_count * rounds - 1);  // past a budget of 1
}

// The host threads Cerium starts itself: Galois keys made on every core, and a planned run's plaintexts encoded
// ahead (Executor::encode_plaintexts) or streamed (ExecutorOptions::encode_threads). Each must give the words of
// the same work done on one thread.
TEST_CASE("keys and plaintexts made on host threads equal those made on one", "[ckks][threads]") {
  Fixture f(toy(11, 3, 2, 2), {.relinearization = true});
  const std::vector<std::int64_t> steps = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const GaloisKeys keys = f.keygen.galois_keys(steps);
  for (const auto element : keys.galois_elements()) {
    const SwitchingKey alone = f.keygen.galois_key(element);
    for (std::size_t d = 0; d < alone.digit_count(); ++d) REQUIRE(keys.at(element).b(d) == alone.b(d));
  }
  f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(steps)));

  // y = sum_k rotate(x * w_k, k) + b: twelve plaintexts.
  const std::size_t slots = f.context->parameters().max_slots();
  auto rng = cerium_test::make_rng(4242);
  const auto plain = [&] {
    const Values v = random_real(rng, slots);
    std::vector<double> real;
    for (const auto& c : v) real.push_back(c.real());
    return graph::PlainVector(std::move(real));
  };
  graph::Tracer t(f.context);
  const graph::Value x = t.input("x");
  graph::Value y = t.multiply(x, plain());
  for (std::int64_t k = 1; k <= 10; ++k) y = t.add(y, t.rotate(t.multiply(x, plain()), k));
  t.output(t.add(y, plain()), "y");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  const Ciphertext input = f.encryptor.encrypt(f.encoder.encode(random_real(rng, slots), plan.input_encoding(0)));
  const auto run = [&](const graph::Executor<backend::CpuBackend>& executor) -> Ciphertext {
    std::vector<Ciphertext> inputs;
    inputs.push_back(input.clone());
    return std::move(executor.run(std::move(inputs)).at(0));
  };
  const Ciphertext one = run(graph::Executor<backend::CpuBackend>(plan, f.evaluator, nullptr, {.encode_threads = 1}));
  const graph::Executor<backend::CpuBackend> streamed(plan, f.evaluator, nullptr, {.encode_threads = 4});
  CHECK(same_words(run(streamed), one));
  const graph::Executor<backend::CpuBackend> cached(plan, f.evaluator, nullptr, {.cache_plaintexts = true});
  CHECK(cached.encode_plaintexts(4) == 12);
  CHECK(same_words(run(cached), one));
  CHECK(cached.plaintexts_encoded() == 12);
}

TEST_CASE("the CPU backend gives the same words on 1, 2 and 3 threads", "[ckks][threads][cpu_threads]") {
  // The batched loops (NTT over limbs, basis conversion, ModDown, rescale) split limbs or coefficient blocks
  // between OpenMP threads (core/parallel.hpp); without OpenMP every count is one thread.
  Fixture f(toy(13, 4, 2, 3), {.relinearization = true, .rotations = {1, -5}});
  auto rng = cerium_test::make_rng(151);
  const Ciphertext x = f.encrypt(random_complex(rng, f.max_slots()));
  const Ciphertext y = f.encrypt(random_complex(rng, f.max_slots()));
  const int before = cpu_threads();
  std::vector<std::vector<Ciphertext>> results;
  for (const int threads : {1, 2, 3}) {
    set_cpu_threads(threads);
    results.push_back(key_switching_results(f, x, y));
  }
  set_cpu_threads(before);
  for (std::size_t t = 1; t < results.size(); ++t) {
    for (std::size_t i = 0; i < results[0].size(); ++i) {
      INFO("thread count " << t + 1 << ", result " << i);
      CHECK(same_words(results[t][i], results[0][i]));
    }
  }
  CHECK_THROWS_AS(set_cpu_threads(-1), InvalidArgument);
}
