// Ciphertext-parallel runs: a planned program placed over 2 and 4 in-process ranks (graph::place_on_ranks), each
// rank computing its nodes and sending values to the ranks that read them: the single-device executor's words for
// every output, and exactly the bytes the placement predicted (plus a 20-byte header a transfer).
#include <memory>
#include <mutex>
#include <vector>

#include "cerium/dist/in_process.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/passes/rank_placement.hpp"
#include "cerium/graph/tracer.hpp"
#include "support/catch.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;
using namespace cerium::dist;

TEST_CASE("a placed program runs ciphertext-parallel with the single-device words and the predicted bytes",
          "[dist][placement]") {
  Fixture f(toy(11, 8, 1, 2), {.relinearization = true, .rotations = {1, 2, 3, 4, 5}});
  // Four heads on two inputs: each head rotates, multiplies and sums; the heads meet in two sums (two outputs).
  graph::Tracer t(f.context);
  const auto x = t.input("x", 16), y = t.input("y", 16);
  std::vector<graph::Value> heads;
  for (int h = 0; h < 4; ++h) {
    auto v = t.multiply(t.rotate(h % 2 == 0 ? x : y, h + 1), h % 2 == 0 ? y : x);
    v = t.add(t.rotate(v, 2), t.multiply(v, graph::PlainVector(std::vector<double>{0.5, -0.25})));
    heads.push_back(t.multiply(v, v));
  }
  t.output(t.add(heads[0], heads[1]), "first");
  t.output(t.add(heads[2], heads[3]), "second");
  graph::PlanOptions options;
  options.hoist_rotations = false;  // a placement computes rotations one by one: the same words here
  const graph::Plan plan = graph::plan(std::move(t).finish(), options);

  auto rng = cerium_test::make_rng(71);
  std::vector<Ciphertext> inputs;
  for (std::size_t i = 0; i < 2; ++i) {
    inputs.push_back(f.encryptor.encrypt(f.encoder.encode(random_complex(rng, 16), plan.input_encoding(i))));
  }
  std::vector<Ciphertext> copies;
  for (const auto& c : inputs) copies.push_back(c.clone());
  const auto want = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(std::move(copies));

  for (int ranks : {2, 4}) {
    INFO(ranks << " ranks");
    const graph::RankPlacement placement = graph::place_on_ranks(plan, {.ranks = ranks});
    INFO(graph::explain_placement(placement));
    InProcessGroup group(ranks);
    std::mutex mutex;
    std::vector<std::optional<Ciphertext>> got(want.size());
    std::uint64_t sent = 0;
    group.run([&](Communicator& comm) {
      std::vector<Ciphertext> mine;
      for (const auto& c : inputs) mine.push_back(c.clone());
      graph::Executor<backend::CpuBackend> run(plan, f.evaluator, nullptr,
                                               {.placement = &placement, .communicator = &comm});
      auto outputs = run.run(std::move(mine));
      const std::lock_guard lock(mutex);
      for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (outputs[i].context() != nullptr) got[i] = std::move(outputs[i]);
      }
      sent += comm.traffic().sent(Collective::send);
    });
    for (std::size_t i = 0; i < want.size(); ++i) {
      REQUIRE(got[i].has_value());
      CHECK(same_words(*got[i], want[i]));
    }
    CHECK(sent == placement.moved_bytes + 20 * placement.transfers);
    CHECK(placement.transfers > 0);
  }
}
