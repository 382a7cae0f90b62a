#pragma once
// The scale chain: one fixed scale Delta_l per level, tied by Delta_(l-1) = Delta_l^2 / P_l (P_l the primes a
// rescale at level l divides by), so that the product of two values on the chain, rescaled once, is on the chain
// again, and sums of values brought to one level always meet at equal scales. Polynomial evaluation and
// bootstrapping's EvalMod keep every intermediate on it.
//
// Two anchors: descending from an input's (level, scale) (Delta_(l-1) = Delta_l^2 / P_l: a polynomial of that
// input), or ascending from an output's (Delta_l = sqrt(Delta_(l-1) P_l): a circuit that must end on a given
// scale; built upwards so that a deviation is damped by the square root instead of doubled at each level).
//
// A tracked scale that matches the chain's (ckks::scales_match) is the chain's up to the doubles' round-off and is
// set to it: squarings double a relative round-off (four double angles multiply it by 16), which would otherwise
// carry the tracked scale past scales_match's tolerance although the message's scale is the chain's.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/scale.hpp"
#include "cerium/core/check.hpp"

namespace cerium::circuits {

// A scale per level, from `bottom` to `top`, tied as the file comment says; ciphertexts are brought onto it.
class ScaleChain {
 public:
  ScaleChain() = default;

  // From (top, scale) down to level 0.
  template <backend::PolyBackend B>
  static ScaleChain descending(const ckks::BasicEvaluator<B>& ev, int top, double scale) {
    return descending(products(ev, top), top, scale);
  }
  // From (bottom, scale) up to top.
  template <backend::PolyBackend B>
  static ScaleChain ascending(const ckks::BasicEvaluator<B>& ev, int bottom, double scale, int top) {
    return ascending(products(ev, top), bottom, scale, top);
  }
  // The same from the level prime products P_1 .. P_top (index: level; [0] unused), for a simulation.
  static ScaleChain descending(const std::vector<double>& level_products, int top, double scale);
  static ScaleChain ascending(const std::vector<double>& level_products, int bottom, double scale, int top);
  // Through (level, scale), over 0..top: ascending above the anchor (a deviation damped going up), descending
  // below it. A program graph anchors its chain at the bootstrapper's output, or at level 0 without one.
  static ScaleChain through(const std::vector<double>& level_products, int level, double scale, int top);

  int top() const { return top_; }                                              // the highest level on the chain
  int bottom() const { return bottom_; }                                        // the lowest level on the chain
  bool contains(int level) const { return level >= bottom_ && level <= top_; }  // level in [bottom(), top()]
  // Delta_level; LevelError outside [bottom, top].
  double at(int level) const;

  // Onto the chain at `level` (at or below a's): dropping limbs when a's scale matches the chain's there, else
  // from one level above with adjust_scale (the level it spends is one the target is below anyway). LevelError
  // when a is at `level` already with another scale.
  template <backend::PolyBackend B>
  void bring_to(const ckks::BasicEvaluator<B>& ev, ckks::Ciphertext& a, int level) const {
    const double target = at(level);
    if (a.level() == level) {
      require<LevelError>(ckks::scales_match(a.scale(), target),
                          "scale chain: a ciphertext at level {} has scale {} off the chain's {}; start from a "
                          "ciphertext whose scale is the chain's at its level",
                          level, ckks::format_scale(a.scale()), ckks::format_scale(target));
      a.set_scale(target);
      return;
    }
    require<LevelError>(a.level() > level, "scale chain: a ciphertext at level {} cannot be brought up to level {}",
                        a.level(), level);
    if (ckks::scales_match(a.scale(), target)) {
      ev.level_down_inplace(a, level);
      a.set_scale(target);
      return;
    }
    // The integer factor that brings a from one level above onto the target (adjust_scale's k) lands within
    // scales_match only when a's scale there is at most about twice that level's primes P. A wide level's scale
    // (about 2^56 or, where the chain meets narrow levels, 2^43-2^49) brought onto a narrow one's (about 2^30,
    // CkksConfig::narrow_levels) is larger: then start two levels above (when a has them) and reach one level
    // above at a scale near P by a factor k1 and the rescale by that level's primes Q (k1 = 1: a plain rescale).
    // The scale stays near P, at least the target's: a plain rescale that left 2^49 / 2^30 = 2^19 would keep a
    // rescale's rounding (about 2^14 at N = 2^16) at 2^-5 of the message.
    const double p = ev.level_prime_product(level + 1);
    const double k = std::round(target * p / a.scale());
    if ((k < 1 || !ckks::scales_match(a.scale() * k / p, target)) && a.level() >= level + 2) {
      ev.level_down_inplace(a, level + 2);
      const double q = ev.level_prime_product(level + 2);
      const double k1 = std::max(1.0, std::round(p * q / a.scale()));
      if (k1 == 1) {
        ev.rescale_inplace(a);
      } else {
        ev.adjust_scale_inplace(a, a.scale() * k1 / q);  // lands exactly there: k1 is the factor
      }
    } else {
      ev.level_down_inplace(a, level + 1);
    }
    ev.adjust_scale_inplace(a, target);
    // Within scales_match of the target (off by at most 1/2 in absolute terms): snapped now, as the branches above
    // do, because the next use may be a product, which would scale the difference beyond scales_match (a
    // polynomial's constant terms at scale Delta_l P_l failed to add for Delta_l near 2^28).
    a.set_scale(target);
  }

  // a b on the chain at the lower of their levels, relinearized and rescaled in one key switch
  // (Delta_l^2 / P_l = Delta_(l-1)). a and b may be the same object (a square).
  template <backend::PolyBackend B>
  ckks::Ciphertext multiply(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& a,
                            const ckks::Ciphertext& b) const {
    const int level = std::min(a.level(), b.level());
    ckks::Ciphertext x = a.clone();
    bring_to(ev, x, level);
    if (&a == &b) {
      ev.multiply_rescale_inplace(x, x);
    } else {
      ckks::Ciphertext y = b.clone();
      bring_to(ev, y, level);
      ev.multiply_rescale_inplace(x, y);
    }
    return x;
  }

  // sum_i a[i] b[i] on the chain at the lowest of their levels: the tensor products added (3 parts), then one
  // relinearization and one rescale, so the sum pays one key switch (Delta_l^2 / P_l = Delta_(l-1) as a product).
  // A factor may appear several times (the same object: a square).
  template <backend::PolyBackend B>
  ckks::Ciphertext product_sum(const ckks::BasicEvaluator<B>& ev, std::span<const ckks::Ciphertext* const> a,
                               std::span<const ckks::Ciphertext* const> b) const {
    require(!a.empty() && a.size() == b.size(), "scale chain: a product sum of {} and {} factors", a.size(),
            b.size());
    int level = a.front()->level();
    for (std::size_t i = 0; i < a.size(); ++i) level = std::min({level, a[i]->level(), b[i]->level()});
    const auto at_level = [&](const ckks::Ciphertext& c) {
      ckks::Ciphertext x = c.clone();
      bring_to(ev, x, level);
      return x;
    };
    std::optional<ckks::Ciphertext> sum;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ckks::Ciphertext x = at_level(*a[i]);
      if (a[i] == b[i]) {
        ev.multiply_no_relin_inplace(x, x);
      } else {
        ev.multiply_no_relin_inplace(x, at_level(*b[i]));
      }
      if (sum) {
        ev.add_inplace(*sum, x);
      } else {
        sum = std::move(x);
      }
    }
    ev.relinearize_rescale_inplace(*sum);
    return std::move(*sum);
  }

  // a += b (a -= b) on the chain at the lower of their levels.
  template <backend::PolyBackend B>
  void add(const ckks::BasicEvaluator<B>& ev, ckks::Ciphertext& a, const ckks::Ciphertext& b) const {
    ev.add_inplace(a, aligned(ev, a, b));
  }
  // a -= b on the chain at the lower of their levels.
  template <backend::PolyBackend B>
  void sub(const ckks::BasicEvaluator<B>& ev, ckks::Ciphertext& a, const ckks::Ciphertext& b) const {
    ev.sub_inplace(a, aligned(ev, a, b));
  }

 private:
  // a brought onto the chain at the lower of the two levels, and a copy of b brought there.
  template <backend::PolyBackend B>
  ckks::Ciphertext aligned(const ckks::BasicEvaluator<B>& ev, ckks::Ciphertext& a, const ckks::Ciphertext& b) const {
    const int level = std::min(a.level(), b.level());
    bring_to(ev, a, level);
    ckks::Ciphertext y = b.clone();
    bring_to(ev, y, level);
    return y;
  }

  template <backend::PolyBackend B>
  static std::vector<double> products(const ckks::BasicEvaluator<B>& ev, int top) {
    require<LevelError>(top >= 0 && top <= ev.context()->max_level(), "scale chain: level {} is outside 0..{}", top,
                        ev.context()->max_level());
    std::vector<double> p(static_cast<std::size_t>(top) + 1, 1.0);
    for (int l = 1; l <= top; ++l) p[static_cast<std::size_t>(l)] = ev.level_prime_product(l);
    return p;
  }

  int top_ = -1, bottom_ = 0;
  std::vector<double> scales_;  // index: level - bottom
};

}  // namespace cerium::circuits
