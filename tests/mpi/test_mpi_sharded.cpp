// Limb-sharded CKKS over MPI processes (ctest dist_mpi: `mpirun -np 4 --oversubscribe`): every rank builds the
// same keys and ciphertexts from fixed seeds, computes the CPU evaluator's reference on its own, and checks that
// the sharded evaluator and bootstrapper over the MPI communicator give the same words.
// Catch2 2.x: this file provides the runner (main is ours, after MPI_Init); 3.x: catch_session.hpp below.
#define CATCH_CONFIG_RUNNER
#include <memory>
#include <vector>

#include "cerium/boot/sharded_bootstrapper.hpp"
#include "cerium/ckks/sharded_evaluator.hpp"
#include "cerium/dist/mpi.hpp"
#include "cerium/graph/executor.hpp"
#include "support/catch.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "unit/dist/attention_block.hpp"

#if CERIUM_CATCH_VERSION == 3
#include <catch2/catch_session.hpp>
#endif

using namespace evaluator_test;
using namespace cerium::dist;

namespace {

// Keys and encryptions from fixed seeds: the same words on every rank.
struct SeededSetup {
  ContextPtr context;
  KeyGenerator keygen;
  Encoder encoder;
  Encryptor encryptor;
  Decryptor decryptor;
  explicit SeededSetup(const CkksConfig& config)
      : context(Context::create(config)),
        keygen(context, fixed_seed(1)),
        encoder(context),
        encryptor(keygen.public_key(), fixed_seed(2)),
        decryptor(keygen.secret_key()) {}
};

}  // namespace

TEST_CASE("MPI ranks: collectives and a fingerprint check", "[dist][mpi]") {
  auto comm = make_mpi_communicator();
  REQUIRE(comm->size() >= 1);
  std::vector<std::uint32_t> mine = {static_cast<std::uint32_t>(comm->rank()), 0xfffffff1u};
  std::vector<std::size_t> counts(static_cast<std::size_t>(comm->size()), 2);
  std::vector<std::uint32_t> all(2 * counts.size());
  comm->all_gather(mine, all, counts);
  for (int r = 0; r < comm->size(); ++r) REQUIRE(all[2 * static_cast<std::size_t>(r)] == static_cast<std::uint32_t>(r));
  std::vector<std::uint64_t> sums = {0xfffffff1u};
  comm->all_reduce_sum(sums);
  REQUIRE(sums[0] == 0xfffffff1ull * static_cast<std::uint64_t>(comm->size()));
  REQUIRE_NOTHROW(require_same_on_all_ranks(*comm, 12345, "a constant"));
  if (comm->size() > 1) {
    REQUIRE_THROWS_AS(require_same_on_all_ranks(*comm, comm->rank() == 1 ? 1 : 2, "the parameters"),
                      CommunicationError);
  }
}

TEST_CASE("MPI ranks: the sharded evaluator gives the CPU evaluator's words", "[dist][mpi]") {
  const SeededSetup s(toy(11, 4, 2, 2));
  auto relin = std::make_shared<const RelinearizationKey>(s.keygen.relinearization_key());
  auto galois = std::make_shared<const GaloisKeys>(s.keygen.galois_keys(std::vector<std::int64_t>{1, -3}, true));
  Evaluator cpu(s.context);
  cpu.set_relinearization_key(relin);
  cpu.set_galois_keys(galois);
  auto comm = make_mpi_communicator();
  ShardedEvaluator ev(s.context, ShardedBackend(*comm, s.context));
  ev.set_relinearization_key(relin);
  ev.set_galois_keys(galois);

  auto rng = cerium_test::make_rng(7);  // the same values on every rank: the seed is fixed below
  rng.seed(20261205);
  const std::size_t slots = s.context->ring_degree() / 2;
  const Ciphertext a = s.encryptor.encrypt(s.encoder.encode(random_complex(rng, slots)));
  const Ciphertext b = s.encryptor.encrypt(s.encoder.encode(random_complex(rng, slots)));
  const auto check = [&](const Ciphertext& sharded, const Ciphertext& reference) {
    REQUIRE(same_words(ev.download(sharded), reference));
  };
  const Ciphertext ea = ev.upload(a), eb = ev.upload(b);
  check(ev.add(ea, eb), cpu.add(a, b));
  check(ev.rescale(ev.multiply(ea, eb)), cpu.rescale(cpu.multiply(a, b)));
  check(ev.rotate(ea, -3), cpu.rotate(a, -3));
  check(ev.conjugate(eb), cpu.conjugate(b));
  check(ev.multiply(ev.rescale(ev.multiply(ea, ea)), eb), cpu.multiply(cpu.rescale(cpu.multiply(a, a)), b));
}

TEST_CASE("MPI ranks: sharded bootstrapping gives the CPU bootstrapper's words (N = 2^11)", "[dist][mpi]") {
  const SeededSetup s(presets::bootstrappable_toy(11));
  boot::Bootstrapper cpu(s.context);
  // The encapsulation's ephemeral secret from a fixed seed too (generate_keys would draw it from the OS: a
  // different key on every rank).
  const boot::BootstrapKeyRequest request{.rotation_steps = cpu.rotation_steps(), .seed = fixed_seed(3)};
  const auto keys = std::make_shared<const boot::BootstrapKeys>(boot::generate_bootstrap_keys(s.keygen, request));
  cpu.set_keys(keys);
  auto comm = make_mpi_communicator();
  boot::ShardedBootstrapper sharded(s.context, {}, ShardedBackend(*comm, s.context));
  sharded.set_keys(keys);
  std::mt19937_64 rng(99);
  const Values x = random_real(rng, cpu.slots());
  const Ciphertext input = s.encryptor.encrypt(s.encoder.encode(x, EncodeOptions{.level = 1, .slots = cpu.slots()}));
  const Ciphertext want = cpu.bootstrap(input);
  const auto& ev = sharded.evaluator();
  REQUIRE(same_words(ev.download(sharded.bootstrap(ev.upload(input))), want));
  REQUIRE(precision_bits(s.encoder.decode(s.decryptor.decrypt(want)), x) > 14);
}

TEST_CASE("MPI ranks: an attention block as a planned program gives the single-device words", "[dist][mpi]") {
  const SeededSetup s(toy(11, 26, 2, 3));
  std::mt19937_64 rng(509);  // the same weights and tokens on every rank
  const sharded_test::AttentionBlock model(rng);
  const graph::Plan plan = model.plan(s.context);
  auto relin = std::make_shared<const RelinearizationKey>(s.keygen.relinearization_key());
  auto galois = std::make_shared<const GaloisKeys>(s.keygen.galois_keys(plan.keys.steps));
  Evaluator cpu(s.context);
  cpu.set_relinearization_key(relin);
  cpu.set_galois_keys(galois);
  const auto x = sharded_test::normal(8 * 16, rng, 1);
  const Ciphertext input =
      s.encryptor.encrypt(s.encoder.encode(sharded_test::pack(model.shape.layout, x), plan.input_encoding(0)));
  std::vector<Ciphertext> in_cpu;
  in_cpu.push_back(input.clone());
  const Ciphertext want = std::move(graph::Executor<backend::CpuBackend>(plan, cpu).run(std::move(in_cpu))[0]);

  auto comm = make_mpi_communicator();
  ShardedEvaluator ev(s.context, ShardedBackend(*comm, s.context));
  ev.set_relinearization_key(relin);
  ev.set_galois_keys(galois);
  std::vector<Ciphertext> in;
  in.push_back(ev.upload(input));
  auto out = graph::Executor<ShardedBackend>(plan, ev, nullptr, {.encode_threads = 1}).run(std::move(in));
  REQUIRE(same_words(ev.download(out.at(0)), want));
}

int main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  return Catch::Session().run(argc, argv);
}
