// An encrypted matrix-vector product y = M x with circuits::LinearTransform: M (64 x 64, random) in diagonal form,
// evaluated baby-step giant-step (the babies' rotations share one ModUp, each giant's products are one fused pass
// per polynomial, one rescale). Prints the plan, the precision against the plaintext product and the time, next to
// the diagonal method without giant steps (every diagonal a hoisted rotation), and checks that both give the words
// of the eager evaluator sequence they stand for.
// Toy parameters (N = 2^12, not secure): an example of the API, not a benchmark.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "cerium/circuits/linear_transform.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "same_words.hpp"

using namespace cerium;
using namespace cerium::ckks;

namespace {

constexpr std::size_t kSlots = 64;

template <class F>
double milliseconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The eager sequence a transform stands for: babies hoisted, per giant the products by the pre-rotated diagonals
// summed, the giant's rotation, the giants summed, one rescale.
Ciphertext eager(const Evaluator& ev, const Encoder& encoder, const circuits::LinearTransform<>& lt,
                 const Ciphertext& x) {
  const auto& plan = lt.plan();
  const std::vector<Ciphertext> babies = ev.rotate_hoisted(ev.level_down(x, lt.level()), plan.babies);
  Ciphertext total;
  for (const auto& [giant, giant_babies] : plan.giants) {
    Ciphertext inner;
    for (const auto baby : giant_babies) {
      const auto at = std::find(plan.babies.begin(), plan.babies.end(), baby) - plan.babies.begin();
      const auto diagonal = circuits::bsgs_diagonal(*lt.matrix(), giant, baby);
      const Plaintext pt = encoder.encode(std::span<const std::complex<double>>(diagonal),
                                          {.level = lt.level(), .scale = lt.config().plaintext_scale, .slots = kSlots});
      Ciphertext term = ev.multiply(babies[static_cast<std::size_t>(at)], pt);
      if (inner.empty()) inner = std::move(term); else ev.add_inplace(inner, term);
    }
    if (giant != 0) inner = ev.rotate(inner, giant);
    if (total.empty()) total = std::move(inner); else ev.add_inplace(total, inner);
  }
  ev.rescale_inplace(total);
  return total;
}

}  // namespace

int main() {
  const ContextPtr context = Context::create(CkksConfig{
      .log_n = 12, .levels = 3, .level_width = 2, .level_prime_bits = 28, .dnum = 2, .insecure_opt_out = true});
  const Encoder encoder(context);
  KeyGenerator keygen(context);
  const Encryptor encryptor(keygen.public_key());
  const Decryptor decryptor(keygen.secret_key());
  Evaluator evaluator(context);

  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::vector<double>> m(kSlots, std::vector<double>(kSlots));
  for (auto& row : m)
    for (auto& v : row) v = dist(rng);
  std::vector<double> x(kSlots);
  for (auto& v : x) v = dist(rng);

  const auto matrix = circuits::DiagonalMatrix::from_dense(m);
  // Single hoisting, the sequence eager() writes out (the default for a matrix of values is doubled hoisting: one
  // ModDown per giant instead of one per baby, so other words within the same precision).
  const circuits::LinearTransform<> bsgs(evaluator, matrix, {.level = 3, .hoisting = circuits::Hoisting::single});
  const circuits::LinearTransform<> diagonal(
      evaluator, matrix, {.level = 3, .hoisting = circuits::Hoisting::single, .bsgs = {.stride = kSlots}});
  // Keys for exactly the steps the two transforms use.
  std::vector<std::int64_t> steps = bsgs.rotation_steps();
  for (const auto s : diagonal.rotation_steps()) steps.push_back(s);
  evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(keygen.galois_keys(steps)));
  const Ciphertext cx = encryptor.encrypt(encoder.encode(x, EncodeOptions{.slots = kSlots}));

  const auto precision = [&](const Ciphertext& ct) {
    const auto out = encoder.decode(decryptor.decrypt(ct));
    double worst = 0;
    for (std::size_t i = 0; i < kSlots; ++i) {
      double want = 0;
      for (std::size_t j = 0; j < kSlots; ++j) want += m[i][j] * x[j];
      worst = std::max(worst, std::abs(out[i] - std::complex<double>(want, 0)));
    }
    return -std::log2(worst);
  };

  fmt::print("{}x{} matrix-vector product, {}\n\n", kSlots, kSlots, context->parameters().describe());
  bool all_same = true;
  for (const auto* lt : {&bsgs, &diagonal}) {
    const auto& plan = lt->plan();
    Ciphertext y;
    const double ms = milliseconds([&] { y = lt->apply(evaluator, cx); });
    const bool same = same_words(y, eager(evaluator, encoder, *lt, cx));
    all_same = all_same && same;
    fmt::print("{:<9} stride {:>2}: {:>2} baby + {:>2} giant rotations ({} key switches), {:6.2f} ms, precision "
               "{:.1f} bits, eager words: {}\n",
               lt == &bsgs ? "BSGS" : "diagonal", plan.stride, plan.baby_rotations(), plan.giant_rotations(),
               plan.rotations(), ms, precision(y), same ? "same" : "DIFFER");
  }
  return all_same ? 0 : 1;
}
