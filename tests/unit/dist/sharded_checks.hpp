#pragma once
// The sharded evaluator's checks, shared by the CPU suite (tests/unit/dist) and the GPU suite (tests/gpu): a
// program of every evaluator operation run on the single-device CPU evaluator and on 1 to 8 in-process ranks
// (on the host or on a GPU, ShardedOptions::device), with the same words on every rank and the CPU's; and one
// bootstrap likewise.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "cerium/boot/sharded_bootstrapper.hpp"
#include "cerium/ckks/sharded_evaluator.hpp"
#include "cerium/dist/in_process.hpp"
#include "cerium/dist/traffic_model.hpp"
#include "support/catch.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

namespace sharded_test {

using namespace evaluator_test;
using namespace cerium::dist;

// Runs body on every rank of an in-process group with a sharded evaluator carrying the fixture's keys, and
// checks that every rank downloaded the same results; returns rank 0's.
template <class Body>
inline std::vector<Ciphertext> run_sharded(int ranks, const Fixture& f, Body body, ShardedOptions options = {}) {
  InProcessGroup group(ranks);
  std::vector<std::vector<Ciphertext>> results(static_cast<std::size_t>(ranks));
  group.run([&](Communicator& comm) {
    ShardedEvaluator ev(f.context, ShardedBackend(comm, f.context, options));
    ev.set_relinearization_key(f.evaluator.relinearization_key());
    if (f.evaluator.galois_keys()) ev.set_galois_keys(f.evaluator.galois_keys());
    std::vector<Ciphertext> mine;
    for (const Ciphertext& c : body(ev)) mine.push_back(ev.download(c));
    results[static_cast<std::size_t>(comm.rank())] = std::move(mine);
  });
  for (int r = 1; r < ranks; ++r) {
    REQUIRE(results[static_cast<std::size_t>(r)].size() == results[0].size());
    for (std::size_t i = 0; i < results[0].size(); ++i) {
      REQUIRE(same_words(results[static_cast<std::size_t>(r)][i], results[0][i]));
    }
  }
  return std::move(results[0]);
}

// The operations of one program, written once for any evaluator.
template <class Evaluator>
inline std::vector<Ciphertext> program(const Evaluator& ev, const Ciphertext& a_host, const Ciphertext& b_host,
                                const Plaintext& p_host) {
  const Ciphertext a = ev.upload(a_host), b = ev.upload(b_host);
  const Plaintext p = ev.upload(p_host);
  std::vector<Ciphertext> out;
  out.push_back(ev.add(a, b));
  out.push_back(ev.sub(a, b));
  Ciphertext product = ev.multiply(a, b);  // relinearized
  out.push_back(product.clone());
  ev.rescale_inplace(product);
  out.push_back(product.clone());
  out.push_back(ev.multiply(product, a));  // levels aligned (a comes down, its scale adjusted)
  out.push_back(ev.rescale(ev.multiply(a, p)));
  out.push_back(ev.add(ev.multiply(a, 0.75), Complex(0.25, -0.5)));
  out.push_back(ev.rotate(a, 1));
  const std::array<std::int64_t, 3> steps = {1, -3, 5};
  for (auto& c : ev.rotate_hoisted(b, steps)) out.push_back(std::move(c));
  out.push_back(ev.conjugate(a));
  out.push_back(ev.level_down(b, 1));
  out.push_back(ev.negate(ev.multiply_integer(a, 3)));
  return out;
}

// program()'s inputs, drawn from a seed, and its words on the single-device CPU evaluator.
struct ProgramCase {
  Fixture f{toy(11, 4, 2, 2), {.relinearization = true, .rotations = {1, -3, 5}, .conjugation = true}};
  Ciphertext a, b;
  Plaintext p;
  std::vector<Ciphertext> want;

  explicit ProgramCase(std::uint64_t salt) {
    auto rng = cerium_test::make_rng(salt);
    const std::size_t slots = f.max_slots();
    a = f.encrypt(random_complex(rng, slots));
    b = f.encrypt(random_complex(rng, slots));
    p = f.encoder.encode(random_complex(rng, slots));
    want = program(f.evaluator, a, b, p);
  }
  // program() on a sharded evaluator (given the fixture's keys here), downloaded: want's words, one by one.
  void check(const ShardedEvaluator& ev) const {
    const std::vector<Ciphertext> got = program(ev, a, b, p);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      INFO("result " << i);
      REQUIRE(same_words(ev.download(got[i]), want[i]));
    }
  }
};

// The program on the CPU evaluator and sharded over each rank count with the layout: the same words.
inline void check_program_on_ranks(std::initializer_list<int> rank_counts, ShardedOptions options,
                                   std::uint64_t salt) {
  const ProgramCase c(salt);
  for (int ranks : rank_counts) {
    INFO(ranks << " ranks");
    const std::vector<Ciphertext> got = run_sharded(
        ranks, c.f, [&](const ShardedEvaluator& ev) { return program(ev, c.a, c.b, c.p); }, options);
    REQUIRE(got.size() == c.want.size());
    for (std::size_t i = 0; i < c.want.size(); ++i) {
      INFO("result " << i);
      REQUIRE(same_words(got[i], c.want[i]));
    }
  }
}

// One bootstrap at N = 2^log_n (bootstrappable toy parameters) on the CPU and on each rank count: the same words on
// every rank; prints what it moved in top-level key switches' worth (the placement's model leaves the
// bootstraps' gathers out: this says how much that is).
inline void check_sharded_bootstrap(int log_n, std::initializer_list<int> rank_counts, std::uint64_t salt,
                                    ShardedOptions options = {}) {
  const Fixture f(presets::bootstrappable_toy(log_n), {.relinearization = true});
  boot::Bootstrapper cpu(f.context);
  const auto keys = std::make_shared<const boot::BootstrapKeys>(cpu.generate_keys(f.keygen));
  cpu.set_keys(keys);
  auto rng = cerium_test::make_rng(salt);
  const Values x = random_real(rng, cpu.slots());
  const Ciphertext input = f.encrypt(x, 1, cpu.slots());
  const Ciphertext want = cpu.bootstrap(input);
  REQUIRE(precision_bits(f.decrypt(want), x) > 14);
  for (int ranks : rank_counts) {
    INFO(ranks << " ranks, N = 2^" << log_n);
    InProcessGroup group(ranks);
    std::vector<Ciphertext> got(static_cast<std::size_t>(ranks));
    std::vector<std::uint64_t> received(static_cast<std::size_t>(ranks));
    group.run([&](Communicator& comm) {
      boot::ShardedBootstrapper sharded(f.context, {}, ShardedBackend(comm, f.context, options));
      sharded.set_keys(keys);
      const auto& ev = sharded.evaluator();
      const Ciphertext placed = ev.upload(input);
      comm.reset_traffic();
      const Ciphertext fresh = sharded.bootstrap(placed);
      received[static_cast<std::size_t>(comm.rank())] = comm.traffic().received();
      got[static_cast<std::size_t>(comm.rank())] = ev.download(fresh);
    });
    for (const auto& g : got) REQUIRE(same_words(g, want));
    const LimbTraffic model(f.context, ranks);
    const dist::RankBytes key_switch = model.key_switch(f.context->max_level(), true);
    std::uint64_t total = 0, per_key_switch = 0;
    for (std::size_t r = 0; r < received.size(); ++r) {
      total += received[r];
      per_key_switch += key_switch.received[r];
    }
    if (ranks > 1) {
      WARN("one bootstrap on " << ranks << " ranks moves " << total / 1024 << " KiB in all, "
                               << static_cast<double>(total) / static_cast<double>(per_key_switch)
                               << " top-level key switches' worth (N = 2^" << log_n << ")");
    }
    CHECK((total > 0) == (ranks > 1));
  }
}


}  // namespace sharded_test
