// Limb-sharded CKKS over 1 to 8 in-process ranks: every evaluator operation, key switching, hoisted rotations,
// a double-hoisted linear transform and bootstrapping give the single-device CPU evaluator's words, limb for limb.
#include <array>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cerium/boot/sharded_bootstrapper.hpp"
#include "cerium/circuits/linear_transform.hpp"
#include "cerium/ckks/sharded_evaluator.hpp"
#include "cerium/dist/in_process.hpp"
#include "cerium/dist/traffic_model.hpp"
#include "support/catch.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "unit/dist/rank_checks.hpp"
#include "unit/dist/sharded_checks.hpp"

using namespace evaluator_test;
using namespace cerium::dist;
using namespace sharded_test;

TEST_CASE("sharded evaluator: the CPU evaluator's words on 1 to 8 ranks", "[dist][sharded]") {
  check_program_on_ranks({1, 2, 3, 4, 8}, {.layout = LayoutPolicy::contiguous}, 41);
}

TEST_CASE("sharded evaluator, balanced layout: the same words with every rank holding limbs at every level",
          "[dist][sharded]") {
  check_program_on_ranks({2, 3, 4}, {.layout = LayoutPolicy::balanced}, 43);
  const auto context = Context::create(toy(11, 4, 2, 2));
  // Level 1 (3 primes) has limbs on 3 ranks in the balanced layout, on one in the contiguous one.
  const LimbLayout balanced(*context, 3, 0, Device::cpu(), LayoutPolicy::balanced);
  const LimbLayout contiguous(*context, 3, 0);
  const auto count_owners = [&](const LimbLayout& l) {
    const auto c = l.counts(*context->q_basis(1));
    return std::count_if(c.begin(), c.end(), [](std::size_t n) { return n != 0; });
  };
  CHECK(count_owners(balanced) == 3);
  CHECK(count_owners(contiguous) == 1);
}

TEST_CASE("sharded evaluator: a double-hoisted linear transform's words", "[dist][sharded]") {
  const Fixture f(toy(10, 3, 1, 2), {.relinearization = true, .rotations = {}});
  auto rng = cerium_test::make_rng(43);
  const std::size_t slots = 16;
  // A dense 16 x 16 matrix in diagonal form.
  circuits::DiagonalMatrix matrix;
  matrix.slots = slots;
  for (std::size_t k = 0; k < slots; ++k) matrix.add_diagonal(static_cast<std::int64_t>(k), random_complex(rng, slots));
  circuits::LinearTransformConfig config;
  config.slots = slots;
  config.hoisting = circuits::Hoisting::doubled;
  const auto transform_for = [&](const auto& ev) {
    return circuits::LinearTransform<std::remove_cvref_t<decltype(ev.backend())>>(ev, matrix, config);
  };
  Fixture keyed(f.context, {.relinearization = true});
  {
    const auto cpu_transform = transform_for(f.evaluator);
    const auto steps = cpu_transform.rotation_steps();
    keyed.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(steps, false)));
  }
  const Ciphertext x = f.encrypt(random_complex(rng, slots), -1, slots);
  const Ciphertext want = transform_for(keyed.evaluator).apply(keyed.evaluator, x);
  for (int ranks : {2, 3}) {
    INFO(ranks << " ranks");
    const auto got = run_sharded(ranks, keyed, [&](const ShardedEvaluator& ev) {
      std::vector<Ciphertext> out;
      out.push_back(transform_for(ev).apply(ev, ev.upload(x)));
      return out;
    });
    REQUIRE(same_words(got[0], want));
  }
}

TEST_CASE("sharded bootstrapping: the CPU bootstrapper's words (N = 2^11)", "[dist][sharded][bootstrap]") {
  check_sharded_bootstrap(11, {2, 4}, 47);
}

TEST_CASE("sharded bootstrapping at N = 2^12 on 1, 2, 3, 4 and 8 ranks: the CPU bootstrapper's words",
          "[dist][sharded][bootstrap][slow]") {
  check_sharded_bootstrap(12, {1, 2, 3, 4, 8}, 59);
}

TEST_CASE("the traffic model predicts the bytes every rank moves", "[dist][sharded][traffic]") {
  const Fixture f(toy(11, 4, 2, 2), {.relinearization = true, .rotations = {1, 2, 3}});
  auto rng = cerium_test::make_rng(53);
  const Ciphertext a = f.encrypt(random_complex(rng, f.max_slots()));
  const int level = a.level();
  struct Case {
    int ranks;
    LayoutPolicy policy;
  };
  for (const Case c : {Case{2, LayoutPolicy::contiguous}, Case{3, LayoutPolicy::contiguous},
                       Case{4, LayoutPolicy::contiguous}, Case{8, LayoutPolicy::contiguous},
                       Case{3, LayoutPolicy::balanced}}) {
    const int ranks = c.ranks;
    INFO(ranks << " ranks, " << (c.policy == LayoutPolicy::balanced ? "balanced" : "contiguous"));
    const LimbTraffic model(f.context, ranks, c.policy);
    InProcessGroup group(ranks);
    sharded_test::RankChecks checks;
    group.run([&](Communicator& comm) {
      ShardedEvaluator ev(f.context, ShardedBackend(comm, f.context, {.layout = c.policy}));
      ev.set_relinearization_key(f.evaluator.relinearization_key());
      ev.set_galois_keys(f.evaluator.galois_keys());
      const Ciphertext x = ev.upload(a);
      const auto r = static_cast<std::size_t>(comm.rank());
      const auto expect = [&](const RankBytes& predicted, const std::string& what) {
        checks.check(comm.traffic().sent() == predicted.sent[r], comm.rank(), what + ": bytes sent");
        checks.check(comm.traffic().received() == predicted.received[r], comm.rank(), what + ": bytes received");
        comm.reset_traffic();
      };
      comm.reset_traffic();
      Ciphertext squared = ev.multiply_no_relin(x, x);
      ev.relinearize_inplace(squared);
      expect(model.key_switch(level), "relinearize");
      Ciphertext y = ev.rescale(squared);
      expect(model.rescale(level), "rescale");
      Ciphertext z = ev.multiply_no_relin(x, x);
      ev.relinearize_rescale_inplace(z);
      expect(model.key_switch(level, true), "relinearize and rescale");
      y = ev.rotate(x, 2);
      expect(model.key_switch(level), "rotate");
      const std::array<std::int64_t, 3> steps = {1, 2, 3};
      auto rotations = ev.rotate_hoisted(x, steps);
      expect(model.hoisted_rotations(level, 3), "three hoisted rotations");
      y = ev.download(z);
      expect(model.download(*f.context->q_basis(z.level()), 2), "download");
    });
    INFO(checks.failures());
    CHECK(checks.failures().empty());
  }
}

TEST_CASE("ranks that disagree fail together with a CommunicationError", "[dist][sharded][errors]") {
  const Fixture f(toy(10, 2, 1, 1), {.relinearization = true});
  SECTION("each rank encrypts with its own randomness") {
    InProcessGroup group(3);
    REQUIRE_THROWS_AS(group.run([&](Communicator& comm) {
                        ShardedEvaluator ev(f.context, ShardedBackend(comm, f.context));
                        const Encryptor own(f.keygen.public_key());  // a fresh OS seed per rank
                        auto rng = cerium_test::make_rng(61);
                        (void)ev.upload(own.encrypt(f.encoder.encode(random_complex(rng, f.max_slots()))));
                      }),
                      CommunicationError);
  }
  SECTION("ranks with different parameters") {
    const auto other = Context::create(toy(10, 3, 1, 1));
    InProcessGroup group(2);
    REQUIRE_THROWS_AS(group.run([&](Communicator& comm) {
                        ShardedEvaluator ev(comm.rank() == 0 ? f.context : other,
                                            ShardedBackend(comm, comm.rank() == 0 ? f.context : other));
                      }),
                      CommunicationError);
  }
  SECTION("a rank that fails (a rotation without its key): its typed error, the others stop") {
    InProcessGroup group(2);
    auto rng = cerium_test::make_rng(67);
    const Ciphertext input = f.encrypt(random_complex(rng, f.max_slots()));
    REQUIRE_THROWS_AS(group.run([&](Communicator& comm) {
                        ShardedEvaluator ev(f.context, ShardedBackend(comm, f.context));
                        ev.set_relinearization_key(f.evaluator.relinearization_key());
                        const Ciphertext x = ev.upload(input);
                        if (comm.rank() == 1) (void)ev.rotate(x, 1);  // no Galois keys
                        (void)ev.multiply(x, x);
                      }),
                      MissingKeyError);
  }
}

TEST_CASE("a sharded backend names the device it cannot compute on", "[dist][sharded][errors]") {
  const auto context = Context::create(toy(10, 2, 1, 1));
  InProcessGroup group(1);
  group.run([&](Communicator& comm) {
    CHECK_THROWS_AS(ShardedBackend(comm, context, {.device = Device::remote(1)}), UnsupportedError);
#if !defined(CERIUM_HAS_CUDA)
    // Without the CUDA backend a GPU rank is refused up front, naming the build option.
    CHECK_THROWS_WITH(ShardedBackend(comm, context, {.device = Device::cuda(0)}),
                      Catch::Matchers::Contains("CERIUM_CUDA=ON"));
#endif
    const ShardedBackend cpu(comm, context);
    CHECK(cpu.device() == Device::cpu());
    CHECK(cpu.layout().local_device() == Device::cpu());
  });
}
