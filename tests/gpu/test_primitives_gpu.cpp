// The CUDA backend's CKKS primitives (elementwise, rescale, basis conversion, ModUp, ModDown, automorphism,
// key-switch inner product) must give the CPU reference's words exactly, on fresh random inputs. Every test
// skips (with a warning) where no device is present.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cerium/backend/cuda/automorphism.hpp"
#include "cerium/backend/cuda/basis_conversion.hpp"
#include "cerium/backend/cuda/device.hpp"
#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/elementwise.hpp"
#include "cerium/backend/cuda/key_switch.hpp"
#include "cerium/backend/cuda/rescale.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/math/primes.hpp"
#include "cerium/ring/automorphism.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "gpu_test_support.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using cerium::cuda::DeviceBuffer;
using cerium::cuda::Stream;
using cerium::ring::RnsBasis;
using cerium::ring::RnsBasisPtr;
using Words = std::vector<std::uint32_t>;

namespace {

// count distinct NTT primes for degree n, of 28 to 31 bits in turn (each pool sorted, so none repeats).
std::vector<std::uint32_t> primes(std::size_t n, std::size_t count, std::size_t skip = 0) {
  std::vector<std::vector<std::uint32_t>> pools;
  for (int bits = 28; bits <= 31; ++bits)
    pools.push_back(cerium::math::generate_ntt_primes({.bits = bits, .count = (count + skip + 3) / 4 + 1, .ring_degree = n}));
  std::vector<std::uint32_t> out;
  for (std::size_t i = skip; i < skip + count; ++i) out.push_back(pools[i % 4][i / 4]);
  return out;
}

RnsBasisPtr basis_of(std::size_t n, const std::vector<std::uint32_t>& p) { return cerium::ring::make_basis(n, p); }

Words random_words(std::mt19937_64& rng, const RnsBasis& basis) {
  Words w;
  for (auto q : basis.primes()) {
    const auto limb = cerium_test::random_residues(rng, basis.ring_degree(), q);
    w.insert(w.end(), limb.begin(), limb.end());
  }
  return w;
}

std::vector<std::span<const std::uint32_t>> const_limbs(const Words& w, std::size_t n) {
  std::vector<std::span<const std::uint32_t>> s;
  for (std::size_t i = 0; i * n < w.size(); ++i) s.emplace_back(w.data() + i * n, n);
  return s;
}
std::vector<std::span<std::uint32_t>> limbs(Words& w, std::size_t n) {
  std::vector<std::span<std::uint32_t>> s;
  for (std::size_t i = 0; i * n < w.size(); ++i) s.emplace_back(w.data() + i * n, n);
  return s;
}

cerium::ring::RnsPoly to_poly(const RnsBasisPtr& basis, const Words& w, cerium::ring::PolyForm form) {
  cerium::ring::RnsPoly p(basis, form);
  const std::size_t n = basis->ring_degree();
  for (std::size_t i = 0; i < basis->size(); ++i) std::copy_n(w.begin() + i * n, n, p.limb(i).begin());
  return p;
}
Words words_of(const cerium::ring::RnsPoly& p) {
  Words w;
  for (std::size_t i = 0; i < p.limb_count(); ++i) w.insert(w.end(), p.limb(i).begin(), p.limb(i).end());
  return w;
}

DeviceBuffer to_device(const Words& w, const Stream& s) {
  DeviceBuffer b(w.size(), s);
  b.upload(w);
  return b;
}
// A fresh buffer poisoned with 0xff bytes (not a residue of any prime), so an unwritten word shows.
DeviceBuffer poisoned(std::size_t words, const Stream& s) {
  DeviceBuffer b(words, s);
  b.fill_bytes(0xff);
  return b;
}
Words from_device(const DeviceBuffer& b, std::size_t words) {
  Words w(words);
  b.download(w);
  return w;
}

// "" when equal, else the first difference and how many words differ.
std::string difference(const Words& got, const Words& expected, std::size_t n) {
  if (got.size() != expected.size()) return "sizes differ";
  std::size_t count = 0, first = got.size();
  for (std::size_t k = 0; k < got.size(); ++k)
    if (got[k] != expected[k]) {
      if (count++ == 0) first = k;
    }
  if (count == 0) return "";
  return std::to_string(count) + " words differ; first at limb " + std::to_string(first / n) + " index " +
         std::to_string(first % n) + ": got " + std::to_string(got[first]) + ", expected " +
         std::to_string(expected[first]);
}

#define CHECK_WORDS(got, expected, n)                       \
  do {                                                      \
    INFO("seed " << cerium_test::test_seed());              \
    CHECK(difference((got), (expected), (n)) == std::string()); \
  } while (0)

}  // namespace

TEST_CASE("GPU elementwise ops give the CPU's words", "[gpu][primitives]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(12, 14, 16);
  const std::size_t count = GENERATE(std::size_t{1}, std::size_t{5}, std::size_t{40});
  const std::size_t n = std::size_t{1} << log_n;
  INFO("N = " << n << ", limbs = " << count);
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) * 100 + count);
  const auto basis = basis_of(n, primes(n, count));
  const Stream s = Stream::create();
  const cerium::cuda::ElementwisePlan plan(*basis, s);
  const Words a = random_words(rng, *basis), b = random_words(rng, *basis), c = random_words(rng, *basis);
  std::vector<std::uint32_t> scalars;
  for (auto q : basis->primes()) scalars.push_back(cerium_test::random_residues(rng, 1, q)[0]);
  const cerium::cuda::DeviceScalars device_scalars(*basis, scalars, s);
  const auto da = to_device(a, s), db = to_device(b, s), dc = to_device(c, s);
  auto out = poisoned(a.size(), s);
  using cerium::ring::PolyForm;

  SECTION("add") {
    auto p = to_poly(basis, a, PolyForm::coefficient);
    p += to_poly(basis, b, PolyForm::coefficient);
    plan.add(out.data(), da.data(), db.data(), count, s);
    CHECK_WORDS(from_device(out, a.size()), words_of(p), n);
  }
  SECTION("sub") {
    auto p = to_poly(basis, a, PolyForm::coefficient);
    p -= to_poly(basis, b, PolyForm::coefficient);
    plan.sub(out.data(), da.data(), db.data(), count, s);
    CHECK_WORDS(from_device(out, a.size()), words_of(p), n);
  }
  SECTION("negate") {
    auto p = to_poly(basis, a, PolyForm::coefficient);
    p.negate();
    plan.negate(out.data(), da.data(), count, s);
    CHECK_WORDS(from_device(out, a.size()), words_of(p), n);
  }
  SECTION("multiply (NTT form)") {
    auto p = to_poly(basis, a, PolyForm::ntt);
    p *= to_poly(basis, b, PolyForm::ntt);
    plan.multiply(out.data(), da.data(), db.data(), count, s);
    CHECK_WORDS(from_device(out, a.size()), words_of(p), n);
  }
  SECTION("multiply-accumulate") {
    auto p = to_poly(basis, a, PolyForm::ntt);
    p *= to_poly(basis, b, PolyForm::ntt);
    p += to_poly(basis, c, PolyForm::ntt);
    out.copy_from(dc);
    plan.multiply_accumulate(out.data(), da.data(), db.data(), count, s);
    CHECK_WORDS(from_device(out, a.size()), words_of(p), n);
  }
  SECTION("per-limb scalar multiply") {
    auto p = to_poly(basis, a, PolyForm::coefficient);
    p.multiply_scalar(scalars);
    plan.multiply_scalar(out.data(), da.data(), device_scalars, count, s);
    CHECK_WORDS(from_device(out, a.size()), words_of(p), n);
  }
}

TEST_CASE("GPU rescale by 1 or 2 primes gives ring::Rescaler's words", "[gpu][primitives]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(12, 16);
  const std::size_t count = GENERATE(std::size_t{3}, std::size_t{5}, std::size_t{40});
  const std::size_t dropped = GENERATE(std::size_t{1}, std::size_t{2});
  const auto rounding = GENERATE(cerium::ring::Rounding::nearest, cerium::ring::Rounding::floor);
  const std::size_t n = std::size_t{1} << log_n;
  INFO("N = " << n << ", limbs = " << count << ", dropped = " << dropped << ", nearest = "
              << (rounding == cerium::ring::Rounding::nearest));
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) * 1000 + count * 10 + dropped);
  const auto basis = basis_of(n, primes(n, count));
  const Stream s = Stream::create();
  const cerium::cuda::RescalePlan plan(*basis, {.dropped = dropped, .rounding = rounding}, s);
  const cerium::ring::Rescaler cpu(basis, dropped, rounding);
  const Words x = random_words(rng, *basis);
  const std::size_t kept = count - dropped;
  const auto dx = to_device(x, s);

  SECTION("coefficient form") {
    Words expected(kept * n);
    cpu.apply(const_limbs(x, n), limbs(expected, n));
    auto out = poisoned(kept * n, s);
    plan.apply(dx.data(), out.data(), s);
    CHECK_WORDS(from_device(out, kept * n), expected, n);
  }
  SECTION("coefficient form, in place") {
    Words expected(kept * n);
    cpu.apply(const_limbs(x, n), limbs(expected, n));
    auto inout = to_device(x, s);
    plan.apply(inout.data(), inout.data(), s);
    CHECK_WORDS(from_device(inout, kept * n), expected, n);
  }
  SECTION("NTT form") {
    const auto expected = words_of(cpu.apply(to_poly(basis, x, cerium::ring::PolyForm::ntt)));
    auto out = poisoned(kept * n, s);
    plan.apply_ntt(dx.data(), out.data(), s);
    CHECK_WORDS(from_device(out, kept * n), expected, n);
  }
}

TEST_CASE("GPU fast basis conversion gives ring::BasisConverter's words", "[gpu][primitives]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(12, 16);
  const std::size_t from_count = GENERATE(std::size_t{1}, std::size_t{4}, std::size_t{5}, std::size_t{40});
  const std::size_t to_count = GENERATE(std::size_t{1}, std::size_t{5}, std::size_t{40});
  const std::size_t n = std::size_t{1} << log_n;
  INFO("N = " << n << ", from " << from_count << " to " << to_count << " primes");
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) * 10000 + from_count * 100 + to_count);
  const auto from = basis_of(n, primes(n, from_count));
  const auto to = basis_of(n, primes(n, to_count, from_count));
  const Stream s = Stream::create();
  const cerium::cuda::BasisConversionPlan plan(*from, *to, s);
  const Words x = random_words(rng, *from);
  Words expected(to_count * n);
  cerium::ring::BasisConverter(from, to).convert(const_limbs(x, n), limbs(expected, n));
  const auto dx = to_device(x, s);
  auto out = poisoned(to_count * n, s);
  plan.convert(dx.data(), out.data(), s);
  CHECK_WORDS(from_device(out, to_count * n), expected, n);
}

TEST_CASE("GPU ModUp gives ring::ModUp's words for alpha = 1 .. 4", "[gpu][primitives]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(12, 16);
  const std::size_t alpha = GENERATE(std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{4});
  const std::size_t q_count = GENERATE(std::size_t{8}, std::size_t{40});
  const std::size_t n = std::size_t{1} << log_n;
  INFO("N = " << n << ", alpha = " << alpha << ", Q limbs = " << q_count);
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) * 1000 + alpha * 100 + q_count);
  const auto all = primes(n, q_count + alpha);  // Q_l then P
  const auto target = basis_of(n, all);
  // The second digit of Q_l (primes alpha .. 2 alpha - 1): its limbs sit in the middle of the target.
  const auto digit = basis_of(n, std::vector<std::uint32_t>(all.begin() + alpha, all.begin() + 2 * alpha));
  const Stream s = Stream::create();
  const cerium::cuda::ModUpPlan plan(*digit, *target, s);
  const Words x = random_words(rng, *digit);
  Words expected(target->size() * n);
  cerium::ring::ModUp(digit, target).apply(const_limbs(x, n), limbs(expected, n));
  const auto dx = to_device(x, s);
  auto out = poisoned(target->size() * n, s);
  plan.apply(dx.data(), out.data(), s);
  CHECK_WORDS(from_device(out, target->size() * n), expected, n);
}

TEST_CASE("GPU ModDown gives ring::ModDown's words for |P| = 1 .. 4", "[gpu][primitives]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(12, 16);
  const std::size_t p_count = GENERATE(std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{4});
  const std::size_t q_count = GENERATE(std::size_t{1}, std::size_t{5}, std::size_t{40});
  const auto rounding = GENERATE(cerium::ring::Rounding::nearest, cerium::ring::Rounding::floor);
  const std::size_t n = std::size_t{1} << log_n;
  INFO("N = " << n << ", |P| = " << p_count << ", Q limbs = " << q_count);
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) * 1000 + p_count * 100 + q_count);
  const auto all = primes(n, q_count + p_count);
  const auto full = basis_of(n, all);
  const auto kept = basis_of(n, std::vector<std::uint32_t>(all.begin(), all.begin() + q_count));
  const Stream s = Stream::create();
  const cerium::cuda::ModDownPlan plan(*full, *kept, rounding, s);
  const Words x = random_words(rng, *full);
  Words expected(q_count * n);
  cerium::ring::ModDown(full, kept, rounding).apply(const_limbs(x, n), limbs(expected, n));
  SECTION("separate output") {
    const auto dx = to_device(x, s);
    auto out = poisoned(q_count * n, s);
    plan.apply(dx.data(), out.data(), s);
    CHECK_WORDS(from_device(out, q_count * n), expected, n);
  }
  SECTION("in place") {
    auto inout = to_device(x, s);
    plan.apply(inout.data(), inout.data(), s);
    CHECK_WORDS(from_device(inout, q_count * n), expected, n);
  }
}

TEST_CASE("GPU automorphism in NTT form gives ring::Automorphism::apply_ntt's words", "[gpu][primitives]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(12, 14, 16);
  const std::size_t count = GENERATE(std::size_t{1}, std::size_t{5}, std::size_t{40});
  const std::int64_t steps = GENERATE(1, -3, 0);  // 0: conjugation
  const std::size_t n = std::size_t{1} << log_n;
  INFO("N = " << n << ", limbs = " << count << ", steps = " << steps);
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) * 100 + count);
  const auto basis = basis_of(n, primes(n, count));
  const std::uint32_t k = steps == 0 ? cerium::ring::conjugation_galois_element(n)
                                     : cerium::ring::rotation_galois_element(steps, n);
  const cerium::ring::Automorphism cpu(n, k);
  const Stream s = Stream::create();
  const cerium::cuda::AutomorphismPlan plan(cpu, s);
  const Words x = random_words(rng, *basis);
  Words expected(x.size());
  for (std::size_t i = 0; i < count; ++i)
    cpu.apply_ntt(std::span(x).subspan(i * n, n), std::span(expected).subspan(i * n, n));
  const auto dx = to_device(x, s);
  auto out = poisoned(x.size(), s);
  plan.apply(dx.data(), out.data(), count, s);
  CHECK_WORDS(from_device(out, x.size()), expected, n);
}

TEST_CASE("GPU key-switch inner product gives the CPU's 128-bit lazy sums", "[gpu][primitives]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const int log_n = GENERATE(12, 16);
  const std::size_t digits = GENERATE(std::size_t{1}, std::size_t{3}, std::size_t{10});
  const bool rotate = GENERATE(false, true);
  const std::size_t n = std::size_t{1} << log_n;
  const std::size_t q_top = 12, q_limbs = 9, alpha = 2;  // level below the top: key limbs are shifted for P
  INFO("N = " << n << ", digits = " << digits << ", rotate = " << rotate);
  auto rng = cerium_test::make_rng(static_cast<std::uint64_t>(log_n) * 100 + digits * 2 + rotate);
  const auto all = primes(n, q_top + alpha);
  std::vector<std::uint32_t> qp_primes(all.begin(), all.begin() + q_limbs);
  qp_primes.insert(qp_primes.end(), all.begin() + q_top, all.end());
  const auto qp = basis_of(n, qp_primes);
  const auto key_basis = basis_of(n, all);
  Words dig, kb, ka;
  for (std::size_t d = 0; d < digits; ++d) {
    const auto x = random_words(rng, *qp), b = random_words(rng, *key_basis), a = random_words(rng, *key_basis);
    dig.insert(dig.end(), x.begin(), x.end());
    kb.insert(kb.end(), b.begin(), b.end());
    ka.insert(ka.end(), a.begin(), a.end());
  }
  const cerium::ring::Automorphism automorphism(n, cerium::ring::rotation_galois_element(5, n));
  const auto perm = automorphism.ntt_permutation();
  // The CPU reference, as ckks::key_switch_apply sums before its ModDown.
  const std::size_t limbs_qp = qp->size(), key_limbs = key_basis->size();
  Words e0(limbs_qp * n), e1(limbs_qp * n);
  for (std::size_t j = 0; j < limbs_qp; ++j) {
    const std::size_t key_limb = j < q_limbs ? j : q_top + (j - q_limbs);
    for (std::size_t k = 0; k < n; ++k) {
      cerium::math::WideAccumulator acc0, acc1;
      for (std::size_t d = 0; d < digits; ++d) {
        const std::uint32_t v = dig[(d * limbs_qp + j) * n + (rotate ? perm[k] : k)];
        acc0.add_product(v, kb[(d * key_limbs + key_limb) * n + k]);
        acc1.add_product(v, ka[(d * key_limbs + key_limb) * n + k]);
      }
      e0[j * n + k] = acc0.reduce(qp->modulus(j));
      e1[j * n + k] = acc1.reduce(qp->modulus(j));
    }
  }
  const Stream s = Stream::create();
  const cerium::cuda::KeySwitchInnerProductPlan plan(*qp, {.q_limbs = q_limbs, .key_q_limbs = q_top}, s);
  const cerium::cuda::AutomorphismPlan device_automorphism(automorphism, s);
  const auto ddig = to_device(dig, s), dkb = to_device(kb, s), dka = to_device(ka, s);
  auto out0 = poisoned(limbs_qp * n, s), out1 = poisoned(limbs_qp * n, s);
  plan.apply(ddig.data(), digits, dkb.data(), dka.data(), out0.data(), out1.data(), s,
             rotate ? &device_automorphism : nullptr);
  CHECK_WORDS(from_device(out0, limbs_qp * n), e0, n);
  CHECK_WORDS(from_device(out1, limbs_qp * n), e1, n);
}

TEST_CASE("GPU primitives on one small size (the sanitizers' subset)", "[gpu][primitives][quick]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  const std::size_t n = 1 << 12;
  auto rng = cerium_test::make_rng(7);
  const auto all = primes(n, 7);
  const auto full = basis_of(n, all);
  const auto kept = basis_of(n, std::vector<std::uint32_t>(all.begin(), all.begin() + 5));
  const Stream s = Stream::create();
  const Words x = random_words(rng, *full);
  const auto dx = to_device(x, s);
  {
    const cerium::cuda::RescalePlan plan(*full, {.dropped = 2}, s);
    Words expected(5 * n);
    cerium::ring::Rescaler(full, 2).apply(const_limbs(x, n), limbs(expected, n));
    auto out = poisoned(5 * n, s);
    plan.apply(dx.data(), out.data(), s);
    CHECK_WORDS(from_device(out, 5 * n), expected, n);
    const auto expected_ntt = words_of(cerium::ring::Rescaler(full, 2).apply(to_poly(full, x, cerium::ring::PolyForm::ntt)));
    plan.apply_ntt(dx.data(), out.data(), s);
    CHECK_WORDS(from_device(out, 5 * n), expected_ntt, n);
  }
  {
    const cerium::cuda::ModDownPlan plan(*full, *kept, cerium::ring::Rounding::nearest, s);
    Words expected(5 * n);
    cerium::ring::ModDown(full, kept).apply(const_limbs(x, n), limbs(expected, n));
    auto out = poisoned(5 * n, s);
    plan.apply(dx.data(), out.data(), s);
    CHECK_WORDS(from_device(out, 5 * n), expected, n);
  }
}
