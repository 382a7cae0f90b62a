#pragma once
// The sharded evaluator's checks, shared by the CPU suite (tests/unit/dist) and the GPU suite (tests/gpu): a
// program of every evaluator operation run on the single-device CPU evaluator and on 1 to 8 in-process ranks
// (on the host or on a GPU, ShardedOptions::device), with the same words on every rank and the CPU's.
#include <array>
#include <initializer_list>
#include <utility>
#include <vector>

#include "cerium/ckks/sharded_evaluator.hpp"
#include "cerium/dist/in_process.hpp"
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

// The program on the CPU evaluator and sharded over each rank count with the layout: the same words.
inline void check_program_on_ranks(std::initializer_list<int> rank_counts, ShardedOptions options,
                                   std::uint64_t salt) {
  const Fixture f(toy(11, 4, 2, 2), {.relinearization = true, .rotations = {1, -3, 5}, .conjugation = true});
  auto rng = cerium_test::make_rng(salt);
  const std::size_t slots = f.max_slots();
  const Ciphertext a = f.encrypt(random_complex(rng, slots));
  const Ciphertext b = f.encrypt(random_complex(rng, slots));
  const Plaintext p = f.encoder.encode(random_complex(rng, slots));
  const std::vector<Ciphertext> want = program(f.evaluator, a, b, p);
  for (int ranks : rank_counts) {
    INFO(ranks << " ranks");
    const std::vector<Ciphertext> got = run_sharded(
        ranks, f, [&](const ShardedEvaluator& ev) { return program(ev, a, b, p); }, options);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      INFO("result " << i);
      REQUIRE(same_words(got[i], want[i]));
    }
  }
}

}  // namespace sharded_test
