#pragma once
// The CPU backend: the reference implementation of PolyBackend, on host limbs, delegating to the ring layer
// (RnsPoly arithmetic, Rescaler, Automorphism) and to the rlwe key-switching entry points.
//
// Its loops over limbs run on the ring layer's OpenMP teams (core/parallel.hpp), with the same words for any
// thread count. Stateless, so copying it is free and one instance serves any number of threads.

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "cerium/backend/backend.hpp"
#include "cerium/core/check.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/ring/limb_arithmetic.hpp"

namespace cerium::backend {

// PolyBackend on host limbs (see the file comment): the words every other backend must reproduce.
struct CpuBackend {
  // The eDSL folds rescale(sum) into the sum's pass by default here (plan::PlanOptions::fold_rescale).
  static constexpr bool fold_rescale_into_sums = true;
  // Storage in host memory: a polynomial over basis as options says, and a deep copy.
  ring::RnsPoly allocate(const ring::RnsBasisPtr& basis, ring::PolyOptions options) const {
    return ring::RnsPoly(basis, std::move(options));
  }
  ring::RnsPoly clone(const ring::RnsPoly& y) const { return y.clone(); }

  // Host memory is where this backend computes: placement keeps what it is given.
  ring::RnsPoly place(ring::RnsPoly&& x) const { return std::move(x); }
  ring::RnsPoly download(const ring::RnsPoly& y) const { return y.clone(); }
  std::shared_ptr<const rlwe::SwitchingKey> resident(std::shared_ptr<const rlwe::SwitchingKey> key) const {
    return key;
  }

  // Elementwise x op= y through RnsPoly's operators (the product in NTT form).
  void add(ring::RnsPoly& x, const ring::RnsPoly& y) const { x += y; }
  void sub(ring::RnsPoly& x, const ring::RnsPoly& y) const { x -= y; }
  void negate(ring::RnsPoly& x) const { x.negate(); }
  void multiply(ring::RnsPoly& x, const ring::RnsPoly& y) const { x *= y; }

  // x + y z, each word the canonical residue (ring/limb_arithmetic.hpp: vectorized).
  void multiply_accumulate(ring::RnsPoly& x, const ring::RnsPoly& y, const ring::RnsPoly& z) const {
    ring::require_compatible(x, y, "multiply-accumulate");
    ring::require_compatible(x, z, "multiply-accumulate");
    require<MismatchError>(x.form() == ring::PolyForm::ntt,
                           "multiply-accumulate: operands are in {} form; products are pointwise only in NTT form",
                           ring::to_string(x.form()));
    for (std::size_t i = 0; i < x.limb_count(); ++i) {
      ring::multiply_accumulate_limb(x.limb(i), std::as_const(y).limb(i), std::as_const(z).limb(i),
                                     x.basis().modulus(i));
    }
  }

  // out = sum_i a_i b_i (+ out): per word one running residue, each term added as in multiply_accumulate, so the
  // words are those of the eager multiply + add sequence.
  void multiply_accumulate_many(ring::RnsPoly& out, std::span<const ring::RnsPoly* const> a,
                                std::span<const ring::RnsPoly* const> b, bool accumulate) const {
    require(a.size() == b.size() && !a.empty(), "multiply-accumulate-many: {} left and {} right factors", a.size(),
            b.size());
    for (std::size_t t = 0; t < a.size(); ++t) {
      require(a[t] != nullptr && b[t] != nullptr, "multiply-accumulate-many: term {} has a null factor", t);
      require(a[t] != &out && b[t] != &out, "multiply-accumulate-many: term {} reads the output", t);
      ring::require_compatible(out, *a[t], "multiply-accumulate-many");
      ring::require_compatible(out, *b[t], "multiply-accumulate-many");
    }
    require<MismatchError>(out.form() == ring::PolyForm::ntt,
                           "multiply-accumulate-many: operands are in {} form; products are pointwise only in NTT "
                           "form",
                           ring::to_string(out.form()));
    for (std::size_t i = 0; i < out.limb_count(); ++i) {
      const auto& m = out.basis().modulus(i);
      auto acc = out.limb(i);
      if (!accumulate) std::fill(acc.begin(), acc.end(), 0u);
      for (std::size_t t = 0; t < a.size(); ++t) {  // term-major: each factor limb streamed once
        ring::multiply_accumulate_limb(acc, std::as_const(*a[t]).limb(i), std::as_const(*b[t]).limb(i), m);
      }
    }
  }

  // out (over rescaler.kept()) = sum_t rescale(a_t b_t) (backend::RescaledProductSum): here literally the product,
  // rescale and add of each term, which defines the words the CUDA backend's fused form must give.
  void sum_of_rescaled_products(const ring::Rescaler& rescaler, ring::RnsPoly& out,
                                std::span<const ring::RnsPoly* const> a, std::span<const ring::RnsPoly* const> b) const {
    require(a.size() == b.size() && !a.empty(), "sum of rescaled products: {} left and {} right factors", a.size(),
            b.size());
    require<MismatchError>(out.basis() == rescaler.kept() && out.form() == ring::PolyForm::ntt,
                           "sum of rescaled products: the output must be over {} in NTT form, not {} in {} form",
                           ring::describe(rescaler.kept()), ring::describe(out.basis()), ring::to_string(out.form()));
    for (std::size_t t = 0; t < a.size(); ++t) {
      require(a[t] != nullptr && b[t] != nullptr, "sum of rescaled products: term {} has a null factor", t);
      require<MismatchError>(a[t]->basis() == rescaler.basis() && a[t]->form() == ring::PolyForm::ntt,
                             "sum of rescaled products: term {} is over {} in {} form; the rescaler divides {} (NTT "
                             "form)",
                             t, ring::describe(a[t]->basis()), ring::to_string(a[t]->form()),
                             ring::describe(rescaler.basis()));
      ring::RnsPoly term = product(*a[t], *b[t]);  // checks b_t against a_t
      rescaler.apply_in_place(term);
      if (t == 0) {
        for (std::size_t i = 0; i < out.limb_count(); ++i) {
          std::ranges::copy(std::as_const(term).limb(i), out.limb(i).begin());
        }
      } else {
        add(out, term);
      }
    }
  }

  // out = sum_t a_t b_t + sum_u c_u s_u (+ out), s_u = scalars[u * limbs + i] on limb i: per word one running
  // residue, each term added as in multiply_accumulate, so the words are those of multiply (or multiply_scalar)
  // then add.
  void linear_combination(ring::RnsPoly& out, std::span<const ring::RnsPoly* const> a,
                          std::span<const ring::RnsPoly* const> b, std::span<const ring::RnsPoly* const> c,
                          std::span<const std::uint32_t> scalars, bool accumulate) const {
    const std::size_t limbs = out.limb_count();
    require(a.size() == b.size() && scalars.size() == c.size() * limbs,
            "linear combination: {} left and {} right factors, {} scalars for {} scaled terms of {} limbs", a.size(),
            b.size(), scalars.size(), c.size(), limbs);
    for (const auto* factors : {&a, &b, &c}) {
      for (const ring::RnsPoly* f : *factors) {
        require(f != nullptr && f != &out, "linear combination: a factor is null or the output itself");
        ring::require_compatible(out, *f, "linear combination");
      }
    }
    require<MismatchError>(out.form() == ring::PolyForm::ntt,
                           "linear combination: operands are in {} form; products are pointwise only in NTT form",
                           ring::to_string(out.form()));
    for (std::size_t i = 0; i < limbs; ++i) {
      const auto& m = out.basis().modulus(i);
      auto acc = out.limb(i);
      if (!accumulate) std::fill(acc.begin(), acc.end(), 0u);
      for (std::size_t t = 0; t < a.size(); ++t) {
        ring::multiply_accumulate_limb(acc, std::as_const(*a[t]).limb(i), std::as_const(*b[t]).limb(i), m);
      }
      for (std::size_t u = 0; u < c.size(); ++u) {
        const std::uint32_t s = scalars[u * limbs + i];
        require(s < m.value, "linear combination: scalar {} for limb {} is not reduced modulo {}", s, i, m.value);
        ring::multiply_accumulate_limb(acc, std::as_const(*c[u]).limb(i), s, m);
      }
    }
  }

  // out = rescale(sum), as loops: the sum over the whole basis, then the rescale (the reference words).
  void linear_combination_rescaled(const ring::Rescaler& rescaler, ring::RnsPoly& out,
                                   std::span<const ring::RnsPoly* const> a, std::span<const ring::RnsPoly* const> b,
                                   std::span<const ring::RnsPoly* const> c,
                                   std::span<const std::uint32_t> scalars) const {
    require(!a.empty() || !c.empty(), "rescaled linear combination: no terms");
    ring::RnsPoly sum((a.empty() ? c[0] : a[0])->basis_ptr(), ring::PolyOptions{.form = ring::PolyForm::ntt});
    linear_combination(sum, a, b, c, scalars, false);
    rescaler.apply_in_place(sum);
    out = std::move(sum);
  }

  // The tensor product of (x0, x1) and (y0, y1): x0 becomes x0 y0; returns {x0 y1 + x1 y0, x1 y1}. y0 may be x0
  // itself (squaring).
  std::array<ring::RnsPoly, 2> tensor(ring::RnsPoly& x0, const ring::RnsPoly& x1, const ring::RnsPoly& y0,
                                      const ring::RnsPoly& y1) const {
    ring::RnsPoly d2 = x1.clone();
    multiply(d2, y1);
    ring::RnsPoly d1 = x1.clone();
    multiply(d1, y0);
    multiply_accumulate(d1, x0, y1);
    multiply(x0, y0);  // last: y0 may be x0 itself
    return {std::move(d1), std::move(d2)};
  }

  // Limb i times per_limb[i] (reduced mod q_i).
  void multiply_scalar(ring::RnsPoly& x, std::span<const std::uint32_t> per_limb) const { x.multiply_scalar(per_limb); }

  // Out of place (on the host a copy costs what the pass does, so these are the copy and the in-place form).
  ring::RnsPoly sum(const ring::RnsPoly& y, const ring::RnsPoly& z) const { return y + z; }
  ring::RnsPoly difference(const ring::RnsPoly& y, const ring::RnsPoly& z) const { return y - z; }
  ring::RnsPoly product(const ring::RnsPoly& y, const ring::RnsPoly& z) const { return y * z; }
  ring::RnsPoly negation(const ring::RnsPoly& y) const { return -y; }
  ring::RnsPoly scalar_product(const ring::RnsPoly& y, std::span<const std::uint32_t> per_limb) const {
    ring::RnsPoly out = y.clone();
    out.multiply_scalar(per_limb);
    return out;
  }
  std::array<ring::RnsPoly, 3> tensor_product(const ring::RnsPoly& x0, const ring::RnsPoly& x1,
                                              const ring::RnsPoly& y0, const ring::RnsPoly& y1) const {
    ring::RnsPoly d0 = x0.clone();
    auto [d1, d2] = tensor(d0, x1, y0, y1);
    return {std::move(d0), std::move(d1), std::move(d2)};
  }
  // The first limbs of y, over basis (a prefix of y's basis, else MismatchError): drop_to without the copy of the
  // dropped limbs.
  ring::RnsPoly prefix(const ring::RnsPoly& y, const ring::RnsBasisPtr& basis) const {
    require<MismatchError>(basis != nullptr && basis->size() <= y.limb_count(),
                           "prefix: {} is not a prefix of the polynomial's {}",
                           basis ? ring::describe(*basis) : std::string("no basis"), ring::describe(y.basis()));
    ring::RnsPoly out(basis, ring::PolyOptions{.form = y.form(), .init = BufferInit::uninitialized});
    for (std::size_t i = 0; i < basis->size(); ++i) {
      require<MismatchError>(basis->prime(i) == y.basis().prime(i), "prefix: {} is not a prefix of {}",
                             ring::describe(*basis), ring::describe(y.basis()));
      std::copy(y.limb(i).begin(), y.limb(i).end(), out.limb(i).begin());
    }
    return out;
  }

  // Limb i plus per_limb[i] on every word: a constant polynomial added, in NTT form only. InvalidArgument for a
  // scalar count other than the limbs' or a scalar not reduced mod q_i.
  void add_scalar(ring::RnsPoly& x, std::span<const std::uint32_t> per_limb) const {
    require(per_limb.size() == x.limb_count(), "{} scalars for a polynomial of {} limbs", per_limb.size(),
            x.limb_count());
    require<MismatchError>(x.form() == ring::PolyForm::ntt,
                           "adding a scalar to every word is adding a constant only in NTT form, not {} form",
                           ring::to_string(x.form()));
    for (std::size_t i = 0; i < x.limb_count(); ++i) {
      const std::uint32_t q = x.basis().prime(i);
      const std::uint32_t c = per_limb[i];
      require(c < q, "scalar {} for limb {} is not reduced modulo {}", c, i, q);
      for (auto& w : x.limb(i)) w = math::add_mod(w, c, q);
    }
  }

  // Every limb times the integer, reduced per prime.
  void multiply_integer(ring::RnsPoly& x, std::int64_t integer) const { x.multiply_integer(integer); }

  // In place; a no-op when x is in that form already.
  void to_ntt(ring::RnsPoly& x) const { x.to_ntt(); }
  void to_coeff(ring::RnsPoly& x) const { x.to_coeff(); }

  // x (or each part of a ciphertext) divided by the primes the rescaler drops: over its kept primes.
  void rescale(const ring::Rescaler& rescaler, ring::RnsPoly& x) const { rescaler.apply_in_place(x); }
  void rescale(const ring::Rescaler& rescaler, std::span<ring::RnsPoly> parts) const {
    for (auto& x : parts) rescaler.apply_in_place(x);
  }
  // The limbs of basis (a prefix of x's) kept, the others dropped: exact.
  void drop_to(ring::RnsPoly& x, const ring::RnsBasisPtr& basis) const { x.drop_to(basis); }

  // Bootstrapping's ModRaise: y's centered coefficients (they must fit in int64) over basis, NTT form.
  ring::RnsPoly mod_raise(const ring::RnsPoly& y, const ring::RnsBasisPtr& basis) const {
    ring::RnsPoly coefficients = y.clone();
    coefficients.to_coeff();
    return ring::RnsPoly::from_signed(basis, coefficients.to_signed(), ring::PolyOptions{.form = ring::PolyForm::ntt});
  }

  // X -> X^k applied to y, in y's form, as a new polynomial.
  ring::RnsPoly automorphism(const ring::Automorphism& automorphism, const ring::RnsPoly& y) const {
    return automorphism.apply(y);
  }

  // Hybrid key switching through the rlwe entry points: ModUp of every digit of y at `level`, then the inner
  // product of the digits with the key and ModDown (the automorphism, unless null, applied to the digits as they
  // are read): the two sums over Q_l, NTT form.
  rlwe::DecomposedPoly mod_up(const rlwe::Context& context, const ring::RnsPoly& y, int level) const {
    return rlwe::decompose_and_mod_up(context, y, level);
  }
  std::array<ring::RnsPoly, 2> key_switch_apply(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                                const rlwe::SwitchingKey& key,
                                                const ring::Automorphism* automorphism) const {
    return rlwe::key_switch_apply(context, decomposed, key, automorphism);
  }
  // The same plus addends[i] on sum i (a null entry adds nothing), added here after ModDown.
  std::array<ring::RnsPoly, 2> key_switch_apply(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                                const rlwe::SwitchingKey& key, const ring::Automorphism* automorphism,
                                                std::array<const ring::RnsPoly*, 2> addends) const {
    auto sums = rlwe::key_switch_apply(context, decomposed, key, automorphism);
    for (std::size_t i = 0; i < 2; ++i) {
      if (addends[i] != nullptr) add(sums[i], *addends[i]);
    }
    return sums;
  }
  // The same, then both sums rescaled (over the rescaler's kept primes): rlwe::key_switch_apply_rescaled.
  std::array<ring::RnsPoly, 2> key_switch_apply(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                                const rlwe::SwitchingKey& key, const ring::Automorphism* automorphism,
                                                std::array<const ring::RnsPoly*, 2> addends,
                                                const ring::Rescaler& rescaler) const {
    return rlwe::key_switch_apply_rescaled(context, decomposed, key, automorphism, addends, rescaler);
  }
  // The inner product alone, before ModDown: the two sums over context.qp_basis(level), NTT form.
  std::array<ring::RnsPoly, 2> key_switch_inner_product(const rlwe::Context& context,
                                                        const rlwe::DecomposedPoly& decomposed,
                                                        const rlwe::SwitchingKey& key,
                                                        const ring::Automorphism* automorphism) const {
    return rlwe::key_switch_inner_product(context, decomposed, key, automorphism);
  }
  // ModDown by the dropped primes (P), in y's form: Q_l u P -> Q_l.
  ring::RnsPoly mod_down(const ring::ModDown& mod_down, const ring::RnsPoly& y) const { return mod_down.apply(y); }
};

static_assert(PolyBackend<CpuBackend>, "CpuBackend must provide every operation of the PolyBackend concept");

}  // namespace cerium::backend
