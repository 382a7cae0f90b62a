// The in-process transport: every collective against what it must deliver, on 1 to 8 ranks, the bytes counted,
// and the failures that must end every rank with a CommunicationError instead of a hang.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "cerium/core/error.hpp"
#include "cerium/dist/in_process.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"
#include "unit/dist/rank_checks.hpp"

using namespace cerium;
using namespace cerium::dist;
using sharded_test::RankChecks;

TEST_CASE("in-process collectives deliver every rank's words", "[dist][communicator]") {
  for (int ranks : {1, 2, 3, 4, 8}) {
    InProcessGroup group(ranks);
    const auto seed = cerium_test::test_seed();
    RankChecks checks;
    group.run([&](Communicator& comm) {
      const auto expect = [&](bool ok, const char* what) { checks.check(ok, comm.rank(), what); };
      std::mt19937_64 rng(seed + static_cast<std::uint64_t>(comm.rank()));
      // all-gather with a different count per rank (rank r sends r + 1 words: r * 1000 + i)
      std::vector<std::size_t> counts(static_cast<std::size_t>(ranks));
      for (int r = 0; r < ranks; ++r) counts[static_cast<std::size_t>(r)] = static_cast<std::size_t>(r) + 1;
      std::vector<std::uint32_t> mine(counts[static_cast<std::size_t>(comm.rank())]);
      for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<std::uint32_t>(comm.rank() * 1000 + i);
      std::vector<std::uint32_t> all(std::accumulate(counts.begin(), counts.end(), std::size_t{0}));
      comm.all_gather(mine, all, counts);
      std::size_t k = 0;
      for (int r = 0; r < ranks; ++r) {
        for (std::size_t i = 0; i <= static_cast<std::size_t>(r); ++i) expect(all[k++] == r * 1000 + i, "all-gather: rank r's words in order");
      }
      // broadcast from the last rank
      std::vector<std::uint32_t> words(5, 0);
      if (comm.rank() == ranks - 1) words = {7, 11, 13, 17, 0xffffffffu};
      comm.broadcast(words, ranks - 1);
      expect(words == std::vector<std::uint32_t>{7, 11, 13, 17, 0xffffffffu}, "broadcast from the last rank");
      // exact 64-bit sums of residues near 2^32 (a 32-bit sum would wrap)
      std::vector<std::uint64_t> sums = {0xfffffff0u, static_cast<std::uint64_t>(comm.rank()), rng() >> 33};
      const std::uint64_t third = sums[2];
      comm.all_reduce_sum(sums);
      expect(sums[0] == 0xfffffff0ull * static_cast<std::uint64_t>(ranks), "exact sum near 2^32");
      expect(sums[1] == static_cast<std::uint64_t>(ranks * (ranks - 1) / 2), "sum of the ranks");
      expect(sums[2] >= third, "a sum at least its own term");
      // a ring of sends
      if (ranks > 1) {
        const int next = (comm.rank() + 1) % ranks, previous = (comm.rank() + ranks - 1) % ranks;
        const std::vector<std::uint32_t> out = {static_cast<std::uint32_t>(comm.rank()), 42};
        comm.send(out, next);
        std::vector<std::uint32_t> in(2);
        comm.receive(in, previous);
        expect(in == std::vector<std::uint32_t>{static_cast<std::uint32_t>(previous), 42}, "the previous rank's message");
      }
      comm.barrier();
      // bytes, counted logically
      const Traffic& t = comm.traffic();
      const std::size_t total = all.size();
      expect(t.received(Collective::all_gather) == 4 * (total - mine.size()), "all-gather bytes received");
      expect(t.sent(Collective::all_gather) == 4 * mine.size() * static_cast<std::size_t>(ranks - 1), "all-gather bytes sent");
      expect(t.received(Collective::broadcast) == (comm.rank() == ranks - 1 ? 0u : 20u), "broadcast bytes received");
      expect(t.count(Collective::barrier) == 1, "one barrier counted");
    });
    INFO(ranks << " ranks: " << checks.failures());
    REQUIRE(checks.failures().empty());
  }
}

TEST_CASE("mismatched calls and failing ranks end every rank with a CommunicationError", "[dist][communicator]") {
  SECTION("different collectives") {
    InProcessGroup group(3);
    std::atomic<int> errors = 0;
    REQUIRE_THROWS_AS(group.run([&](Communicator& comm) {
                        try {
                          std::vector<std::uint32_t> words(4);
                          if (comm.rank() == 1) comm.barrier();
                          else comm.broadcast(words, 0);
                        } catch (const CommunicationError&) {
                          ++errors;
                          throw;
                        }
                      }),
                      CommunicationError);
    REQUIRE(errors == 3);
  }
  SECTION("different sizes") {
    InProcessGroup group(2);
    REQUIRE_THROWS_AS(group.run([&](Communicator& comm) {
                        std::vector<std::uint32_t> words(comm.rank() == 0 ? 4 : 5);
                        comm.broadcast(words, 0);
                      }),
                      CommunicationError);
  }
  SECTION("a rank that throws: the others stop at their next collective, its own error comes back") {
    InProcessGroup group(4);
    REQUIRE_THROWS_AS(group.run([&](Communicator& comm) {
                        if (comm.rank() == 2) throw InvalidArgument("rank 2's own failure");
                        comm.barrier();
                      }),
                      InvalidArgument);
  }
  SECTION("a rank that never comes: a timeout, not a hang") {
    InProcessGroup group(2, {.timeout = std::chrono::milliseconds(200)});
    REQUIRE_THROWS_AS(group.run([&](Communicator& comm) {
                        if (comm.rank() == 0) comm.barrier();
                      }),
                      CommunicationError);
  }
  SECTION("ranks that disagree on a fingerprint") {
    InProcessGroup group(3);
    REQUIRE_THROWS_AS(group.run([&](Communicator& comm) {
                        require_same_on_all_ranks(comm, comm.rank() == 2 ? 99 : 7, "the parameters");
                      }),
                      CommunicationError);
    InProcessGroup agreeing(3);
    REQUIRE_NOTHROW(agreeing.run([&](Communicator& comm) { require_same_on_all_ranks(comm, 7, "the parameters"); }));
  }
}
