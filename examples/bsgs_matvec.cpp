// A baby-step giant-step matrix-vector product written with the eDSL: y = M x for a 64 x 64 matrix over 64
// slots, as y = sum_j rot( sum_i rot(x, i) * rot(diag_{jg+i}, -jg), jg ) with g = 8 (diag_k's slot i holds
// M[i][(i + k) mod 64]). The planner hoists the 7 baby-step rotations of x onto one ModUp and reuses them for
// all 8 giant steps, and each inner sum of 8 plaintext products is one fused pass per polynomial. Prints the plan,
// then precision and time against the unfused plan and the eager evaluator doing the same.
// Toy parameters (N = 2^12, not secure): an example of the API, not a benchmark.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/expr/expr.hpp"
#include "cerium/plan/eval.hpp"
#include "cerium/plan/explain.hpp"

using namespace cerium;
using namespace cerium::ckks;

namespace {

constexpr std::size_t kSlots = 64, kBaby = 8, kGiant = 8;

template <std::size_t I>
auto baby(const expr::CipherLeaf& x) {
  if constexpr (I == 0) {
    return x;
  } else {
    return rotate(x, static_cast<std::int64_t>(I));
  }
}

template <std::size_t J, std::size_t... I>
auto giant(const expr::CipherLeaf& x, const std::vector<expr::PlainLeaf>& diagonals, std::index_sequence<I...>) {
  auto sum = (... + (baby<I>(x) * diagonals[J * kBaby + I]));
  if constexpr (J == 0) {
    return sum;
  } else {
    return rotate(std::move(sum), static_cast<std::int64_t>(J * kBaby));
  }
}

template <std::size_t... J>
auto matvec(const expr::CipherLeaf& x, const std::vector<expr::PlainLeaf>& diagonals, std::index_sequence<J...>) {
  return rescale((... + giant<J>(x, diagonals, std::make_index_sequence<kBaby>{})));
}

template <class F>
double milliseconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main() {
  const ContextPtr context = Context::create(CkksConfig{
      .log_n = 12, .levels = 3, .level_width = 2, .level_prime_bits = 28, .dnum = 2, .insecure_opt_out = true});
  KeyGenerator keygen(context);
  std::vector<std::int64_t> steps;
  for (std::size_t i = 1; i < kBaby; ++i) steps.push_back(static_cast<std::int64_t>(i));
  for (std::size_t j = 1; j < kGiant; ++j) steps.push_back(static_cast<std::int64_t>(j * kBaby));
  Evaluator evaluator(context);
  evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(keygen.galois_keys(steps)));
  const Encoder encoder(context);
  const Encryptor encryptor(keygen.public_key());
  const Decryptor decryptor(keygen.secret_key());

  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::vector<double>> m(kSlots, std::vector<double>(kSlots));
  for (auto& row : m)
    for (auto& v : row) v = dist(rng);
  std::vector<double> x(kSlots);
  for (auto& v : x) v = dist(rng);
  const EncodeOptions sparse{.slots = kSlots};
  const Ciphertext cx = encryptor.encrypt(encoder.encode(x, sparse));

  std::vector<Plaintext> diagonals;
  for (std::size_t k = 0; k < kSlots; ++k) {
    const std::size_t shift = k / kBaby * kBaby;  // pre-rotated by -jg for its giant step
    std::vector<double> diag(kSlots);
    for (std::size_t i = 0; i < kSlots; ++i) {
      const std::size_t row = (i + kSlots - shift) % kSlots;
      diag[i] = m[row][(row + k) % kSlots];
    }
    diagonals.push_back(encoder.encode(diag, sparse));
  }
  std::vector<expr::PlainLeaf> leaves;
  for (const auto& d : diagonals) leaves.push_back(lift(d));

  auto y = matvec(lift(cx), leaves, std::make_index_sequence<kGiant>{});
  fmt::print("BSGS {}x{} matrix-vector product, {}\n\n{}\n", kSlots, kSlots, context->parameters().describe(),
             explain(y));

  Ciphertext fused, unfused, eager;
  const double fused_ms = milliseconds([&] { fused = eval(y, EvalContext{evaluator}); });
  const double unfused_ms =
      milliseconds([&] { unfused = eval(y, EvalContext{evaluator}, PlanOptions{.fuse_sums = false}); });
  const double eager_ms = milliseconds([&] {  // the textbook eager loop: every rotation its own ModUp
    Ciphertext total;
    for (std::size_t j = 0; j < kGiant; ++j) {
      Ciphertext acc;
      for (std::size_t i = 0; i < kBaby; ++i) {
        Ciphertext term = i == 0 ? cx.clone() : evaluator.rotate(cx, static_cast<std::int64_t>(i));
        evaluator.multiply_inplace(term, diagonals[j * kBaby + i]);
        if (i == 0) acc = std::move(term); else evaluator.add_inplace(acc, term);
      }
      if (j > 0) acc = evaluator.rotate(acc, static_cast<std::int64_t>(j * kBaby));
      if (j == 0) total = std::move(acc); else evaluator.add_inplace(total, acc);
    }
    evaluator.rescale_inplace(total);
    eager = std::move(total);
  });

  Ciphertext eager_once;
  const double eager_once_ms = milliseconds([&] {  // eager, baby steps rotated once (one ModUp each)
    std::vector<Ciphertext> babies;
    babies.push_back(cx.clone());
    for (std::size_t i = 1; i < kBaby; ++i) babies.push_back(evaluator.rotate(cx, static_cast<std::int64_t>(i)));
    Ciphertext total;
    for (std::size_t j = 0; j < kGiant; ++j) {
      Ciphertext acc = evaluator.multiply(babies[0], diagonals[j * kBaby]);
      for (std::size_t i = 1; i < kBaby; ++i)
        evaluator.add_inplace(acc, evaluator.multiply(babies[i], diagonals[j * kBaby + i]));
      if (j > 0) acc = evaluator.rotate(acc, static_cast<std::int64_t>(j * kBaby));
      if (j == 0) total = std::move(acc); else evaluator.add_inplace(total, acc);
    }
    evaluator.rescale_inplace(total);
    eager_once = std::move(total);
  });

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
  const auto same_words = [](const Ciphertext& a, const Ciphertext& b) {
    bool same = a.size() == b.size() && a.level() == b.level() && a.scale() == b.scale();
    for (std::size_t i = 0; same && i < a.size(); ++i) same = a.part(i) == b.part(i);
    return same;
  };
  const bool same = same_words(fused, eager) && same_words(fused, eager_once) && same_words(fused, unfused);
  const auto fused_stats = plan_stats(y), unfused_stats = plan_stats(y, PlanOptions{.fuse_sums = false});
  fmt::print("eval (planned):  {:7.2f} ms, precision {:.1f} bits, {} elementwise passes\n", fused_ms,
             precision(fused), fused_stats.elementwise_passes);
  fmt::print("eval, unfused:   {:7.2f} ms, precision {:.1f} bits, {} elementwise passes (fuse_sums off)\n",
             unfused_ms, precision(unfused), unfused_stats.elementwise_passes);
  fmt::print("eager, textbook: {:7.2f} ms, precision {:.1f} bits (baby steps redone per giant step)\n", eager_ms,
             precision(eager));
  fmt::print("eager, babies once: {:4.2f} ms, precision {:.1f} bits (one ModUp per rotation)\n", eager_once_ms,
             precision(eager_once));
  fmt::print("same words (planned vs both eager): {}\n", same ? "yes" : "no");
  return same ? 0 : 1;
}
