// A transformer block as a planned program (token-wise Q, K, V projections and multi-head self-attention with a
// polynomial softmax, on row-packed slots) run by the graph executor on limb-sharded ranks: the single-device
// executor's words on 1, 2, 3, 4 and 8 in-process ranks, and its result within 2^-12 of the plaintext twin.
#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <vector>

#include "cerium/ckks/sharded_evaluator.hpp"
#include "cerium/dist/in_process.hpp"
#include "cerium/graph/executor.hpp"
#include "support/catch.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "unit/dist/attention_block.hpp"

using namespace evaluator_test;
using namespace cerium::dist;
using namespace sharded_test;

TEST_CASE("an attention block runs on sharded ranks with the single-device words", "[dist][sharded][program][slow]") {
  auto rng = cerium_test::make_rng(509);
  Fixture f(toy(11, 26, 2, 3), {.relinearization = true});
  const AttentionBlock model(rng);
  const auto& shape = model.shape;
  const graph::Plan plan = model.plan(f.context);
  f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
  const std::vector<double> x = normal(8 * 16, rng, 1);
  const Ciphertext input = f.encryptor.encrypt(f.encoder.encode(pack(shape.layout, x), plan.input_encoding(0)));

  std::vector<Ciphertext> inputs;
  inputs.push_back(input.clone());
  const Ciphertext want = std::move(graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(std::move(inputs))[0]);
  graph::PlainOps ops;
  const auto twin = model(ops, pack(shape.layout, x));
  const auto got_slots = f.decrypt(want);
  double error = 0;
  for (std::size_t i = 0; i < twin.size(); ++i) error = std::max(error, std::abs(got_slots[i] - twin[i]));
  CHECK(error < std::exp2(-12));

  for (int ranks : {1, 2, 3, 4, 8}) {
    INFO(ranks << " ranks");
    InProcessGroup group(ranks);
    std::vector<Ciphertext> got(static_cast<std::size_t>(ranks));
    group.run([&](Communicator& comm) {
      ShardedEvaluator ev(f.context, ShardedBackend(comm, f.context));
      ev.set_relinearization_key(f.evaluator.relinearization_key());
      ev.set_galois_keys(f.evaluator.galois_keys());
      std::vector<Ciphertext> in;
      in.push_back(ev.upload(input));
      auto out = graph::Executor<ShardedBackend>(plan, ev, nullptr, {.encode_threads = 1}).run(std::move(in));
      got[static_cast<std::size_t>(comm.rank())] = ev.download(out.at(0));
    });
    for (const auto& g : got) REQUIRE(same_words(g, want));
  }
}
