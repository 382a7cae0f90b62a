#pragma once
// Rotations whose key switches stop before the ModDown, so that sums of them share one ModDown: the building
// block of double hoisting (Bossuat, Mouchet, Troncoso-Pastoriza, Hubaux, Eurocrypt 2021), in a form that needs
// no multiplication by P.
//
// A RaisedCiphertext stands for the ciphertext (q0 + ModDown(u0), q1 + ModDown(u1)) over Q_l: q over Q_l, u over
// Q_l u P (the key switch's inner product, rlwe::key_switch_inner_product). Since u0 + u1 s = P sigma(c1) s + E
// over Q_l u P, any combination sum_i d_i u_i with integer polynomials d_i (reduced over Q_l u P with the same
// integers as over Q_l: ckks::Encoder::encode_extended) still divides by P into sum_i d_i sigma_i(c1) s + small,
// so a weighted sum of rotations costs one ModDown instead of one per rotation, and rounds once.
//
//   rotate_raised: one ModUp of c1 shared by every step (hoisting); per step sigma(c0) over Q_l and the inner
//                  product over Q_l u P; a step that is 0 mod slots is the ciphertext itself (its c1 goes to q1:
//                  exact, no lift by P).
//   weighted_sum:  sum_i d_i * x_i, the Q parts with the diagonals over Q_l and the u parts with them over
//                  Q_l u P, each part one fused pass (backend multiply_accumulate_many).
//   add_raised:    x += y, part by part.
//   lower:         the ModDown of the u parts, added to the q parts: an ordinary ciphertext.
//
// Not word-equal to rotating and summing ciphertexts (ModDown of a sum rounds once, not per term); it decrypts to
// the same values within the key-switching noise.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/core/check.hpp"
#include "cerium/ring/automorphism.hpp"
#include "cerium/ring/rns_poly.hpp"

namespace cerium::circuits {

// A ciphertext whose key switches await their ModDown: q + ModDown(u), over Q_l (see the file comment).
struct RaisedCiphertext {
  std::array<ring::RnsPoly, 2> q;  // over Q_l; q[1] may be empty (no Q part in c1)
  std::array<ring::RnsPoly, 2> u;  // over Q_l u P; both empty when nothing awaits a ModDown
  int level = 0;                   // l
  double scale = 1;                // the scale of q + ModDown(u)
  std::size_t slots = 0;           // n

  bool raised() const { return !u[0].empty(); }  // some parts await a ModDown
  // No parts yet, at this level, scale and slot count.
  static RaisedCiphertext at(int level, double scale, std::size_t slots) {
    RaisedCiphertext out;
    out.level = level;
    out.scale = scale;
    out.slots = slots;
    return out;
  }
};

namespace raised_detail {

inline bool is_identity(std::int64_t steps, std::size_t slots) {
  return steps % static_cast<std::int64_t>(slots) == 0;
}

template <backend::PolyBackend B>
ring::RnsPoly fresh(const B& backend, const ring::RnsBasisPtr& basis) {
  return backend.allocate(basis, ring::PolyOptions{.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
}

// x += y where x may be empty (then it becomes y).
template <backend::PolyBackend B>
void accumulate(const B& backend, ring::RnsPoly& x, ring::RnsPoly&& y) {
  if (x.empty()) {
    x = std::move(y);
  } else {
    backend.add(x, y);
  }
}

}  // namespace raised_detail

// The ciphertext itself, nothing raised (its parts moved).
inline RaisedCiphertext raise(ckks::Ciphertext&& ct) {
  require(ct.size() == 2, "raise: the ciphertext has {} parts; relinearize it first", ct.size());
  auto out = RaisedCiphertext::at(ct.level(), ct.scale(), ct.slots());
  out.q[0] = std::move(ct.part(0));
  out.q[1] = std::move(ct.part(1));
  return out;
}

// ct rotated by each step, with one ModUp of c1 for all of them and no ModDown. Every key is looked up before
// any work (the evaluator's MissingKeyError, naming the step).
template <backend::PolyBackend B>
std::vector<RaisedCiphertext> rotate_raised(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& ct,
                                            std::span<const std::int64_t> steps) {
  require(ct.size() == 2, "rotate_raised: the ciphertext has {} parts; relinearize it first", ct.size());
  const B& backend = ev.backend();
  const auto& context = *ev.context();
  using RotationKey = typename ckks::BasicEvaluator<B>::RotationKey;
  std::vector<std::optional<RotationKey>> keys(steps.size());  // none: the identity
  bool any = false;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (raised_detail::is_identity(steps[i], ct.slots())) continue;
    keys[i] = ev.rotation_key(steps[i], ct.slots());
    any = true;
  }
  std::optional<rlwe::DecomposedPoly> digits;
  if (any) digits = backend.mod_up(context, ct.part(1), ct.level());
  std::vector<RaisedCiphertext> out;
  out.reserve(steps.size());
  for (const auto& key : keys) {
    if (!key) {
      out.push_back(raise(ct.clone()));
      continue;
    }
    const ring::Automorphism& automorphism = context.automorphism(key->element);
    auto r = RaisedCiphertext::at(ct.level(), ct.scale(), ct.slots());
    r.q[0] = backend.automorphism(automorphism, ct.part(0));
    r.u = backend.key_switch_inner_product(context, *digits, *key->key, &automorphism);
    out.push_back(std::move(r));
  }
  return out;
}

// sum_i weights[i] * terms[i]: the Q parts times q_weights[i] (over Q_l), the u parts times u_weights[i] (the same
// integers over Q_l u P; read only for raised terms). scale: the result's (the terms' times the weights'). Every
// term at one level.
template <backend::PolyBackend B>
RaisedCiphertext weighted_sum(const ckks::BasicEvaluator<B>& ev, std::span<const RaisedCiphertext* const> terms,
                              std::span<const ring::RnsPoly* const> q_weights,
                              std::span<const ring::RnsPoly* const> u_weights, double scale) {
  require(!terms.empty() && terms.size() == q_weights.size() && terms.size() == u_weights.size(),
          "weighted_sum: {} terms, {} Q weights and {} Q u P weights; one of each per term", terms.size(),
          q_weights.size(), u_weights.size());
  const B& backend = ev.backend();
  const int level = terms[0]->level;
  std::array<std::vector<const ring::RnsPoly*>, 2> q_left, q_right, u_left, u_right;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const RaisedCiphertext& t = *terms[i];
    require<LevelError>(t.level == level, "weighted_sum: term {} is at level {} and term 0 at {}", i, t.level, level);
    for (std::size_t p = 0; p < 2; ++p) {
      if (!t.q[p].empty()) {
        q_left[p].push_back(&t.q[p]);
        q_right[p].push_back(q_weights[i]);
      }
      if (t.raised()) {
        require(u_weights[i] != nullptr, "weighted_sum: term {} is raised and has no weight over Q_l u P", i);
        u_left[p].push_back(&t.u[p]);
        u_right[p].push_back(u_weights[i]);
      }
    }
  }
  const auto& context = *ev.context();
  auto out = RaisedCiphertext::at(level, scale, terms[0]->slots);
  for (std::size_t p = 0; p < 2; ++p) {
    if (!q_left[p].empty()) {
      out.q[p] = raised_detail::fresh(backend, context.q_basis(level));
      backend.multiply_accumulate_many(out.q[p], q_left[p], q_right[p], false);
    }
    if (!u_left[p].empty()) {
      out.u[p] = raised_detail::fresh(backend, context.qp_basis(level));
      backend.multiply_accumulate_many(out.u[p], u_left[p], u_right[p], false);
    }
  }
  return out;
}

// x += y (x may be default-constructed: it becomes y). Same level and scale.
template <backend::PolyBackend B>
void add_raised(const ckks::BasicEvaluator<B>& ev, RaisedCiphertext& x, RaisedCiphertext&& y) {
  const bool first = x.q[0].empty() && !x.raised();
  if (first) {
    x = std::move(y);
    return;
  }
  require<LevelError>(x.level == y.level && x.scale == y.scale,
                      "add_raised: level {} scale {} and level {} scale {}; they must agree", x.level, x.scale,
                      y.level, y.scale);
  const B& backend = ev.backend();
  for (std::size_t p = 0; p < 2; ++p) {
    if (!y.q[p].empty()) raised_detail::accumulate(backend, x.q[p], std::move(y.q[p]));
    if (!y.u[p].empty()) raised_detail::accumulate(backend, x.u[p], std::move(y.u[p]));
  }
}

// (q0 + ModDown(u0), q1 + ModDown(u1)) as a ciphertext over Q_l.
template <backend::PolyBackend B>
ckks::Ciphertext lower(const ckks::BasicEvaluator<B>& ev, RaisedCiphertext&& x) {
  const B& backend = ev.backend();
  const auto& context = *ev.context();
  std::vector<ring::RnsPoly> parts(2);
  for (std::size_t p = 0; p < 2; ++p) {
    if (!x.u[p].empty()) parts[p] = backend.mod_down(context.mod_down(x.level), x.u[p]);
    if (!x.q[p].empty()) raised_detail::accumulate(backend, parts[p], std::move(x.q[p]));
    require(!parts[p].empty(), "lower: part {} of the raised ciphertext is empty", p);
  }
  return ckks::Ciphertext(ev.context(), std::move(parts), x.level, x.scale, x.slots);
}

}  // namespace cerium::circuits
