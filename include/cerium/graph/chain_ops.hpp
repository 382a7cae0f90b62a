#pragma once
// How each operation of a program runs on ciphertexts that live on one scale chain: the lowering the executor
// (graph/executor.hpp) and the eager adapter (graph/eager.hpp) share, so that a planned run and an eager run of
// the same code produce the same words.
//
// Every ciphertext at level l carries the chain's scale Delta_l. Operands meet at the lower of their levels by
// dropping limbs (their scales there are the chain's: no adjust_scale); products are rescaled at once and land on
// Delta_(l-1) = Delta_l^2 / P_l: ciphertext products by multiply_rescale, plaintexts encoded at (l, Delta_l),
// constants encoded at Delta_l. Each result's tracked scale is snapped onto the chain (ScaleChain::bring_to at its
// own level), so the scale a plan predicts is the scale the ciphertext carries, to the last bit.

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/circuits/scale_chain.hpp"
#include "cerium/circuits/scaled_constant.hpp"
#include "cerium/core/check.hpp"
#include "cerium/graph/node.hpp"

namespace cerium::graph {

// A program's operations on ciphertexts of one scale chain, over backend B (see the file comment): what
// graph::Executor lowers each node to and what graph::Eager calls.
template <backend::PolyBackend B>
class ChainOps {
 public:
  // The evaluator and the bootstrapper are referenced, not copied: they must outlive this object. Without a
  // bootstrapper, bootstrap throws LevelError.
  ChainOps(const ckks::BasicEvaluator<B>& evaluator, circuits::ScaleChain chain,
           const boot::BasicBootstrapper<B>* bootstrapper = nullptr)
      : ev_(evaluator), chain_(std::move(chain)), encoder_(evaluator.context()), bootstrapper_(bootstrapper) {}

  const circuits::ScaleChain& chain() const { return chain_; }      // Delta_l for every level l
  const ckks::BasicEvaluator<B>& evaluator() const { return ev_; }  // the one given

  // Waits until the device has finished what the evaluator and the bootstrapper queued (nothing to wait for on a
  // backend that computes synchronously): for timing.
  void wait() const {
    if constexpr (requires(const B& b) { b.synchronize(); }) {
      ev_.backend().synchronize();
      if (bootstrapper_ != nullptr) bootstrapper_->evaluator().backend().synchronize();
    }
  }

  // A ciphertext onto the chain at its own level (LevelError when its scale is not the chain's there).
  ckks::Ciphertext on_chain(ckks::Ciphertext a) const {
    chain_.bring_to(ev_, a, a.level());
    return a;
  }

  // a (on the chain) down to `level` on it (LevelError for a level above a's).
  ckks::Ciphertext to_level(ckks::Ciphertext a, int level) const {
    chain_.bring_to(ev_, a, level);
    return a;
  }

  // a + b, a - b: at the lower of their levels, on the chain.
  ckks::Ciphertext add(const ckks::Ciphertext& a, const ckks::Ciphertext& b) const {
    ckks::Ciphertext x = a.clone();
    chain_.add(ev_, x, b);
    return x;
  }
  ckks::Ciphertext sub(const ckks::Ciphertext& a, const ckks::Ciphertext& b) const {
    ckks::Ciphertext x = a.clone();
    chain_.sub(ev_, x, b);
    return x;
  }
  // -a: no level, the same scale.
  ckks::Ciphertext negate(const ckks::Ciphertext& a) const { return ev_.negate(a); }
  // a b at the lower of their levels, relinearized and rescaled at once: one level down, on the chain.
  ckks::Ciphertext multiply(const ckks::Ciphertext& a, const ckks::Ciphertext& b) const {
    return on_chain(chain_.multiply(ev_, a, b));
  }
  // sum_i a[i] b[i] at the lowest of their levels: the tensors added, one relinearization and one rescale (one
  // level down, on the chain).
  ckks::Ciphertext product_sum(std::span<const ckks::Ciphertext* const> a,
                               std::span<const ckks::Ciphertext* const> b) const {
    return on_chain(chain_.product_sum(ev_, a, b));
  }
  // a times a plaintext vector encoded at (a.level(), Delta_level) for this call, rescaled: one level down.
  ckks::Ciphertext multiply(const ckks::Ciphertext& a, const PlainVector& p) const {
    return multiply(a, encode(p, a.level(), a.slots()));
  }
  // The same with the plaintext already encoded at (a.level(), Delta_level) (a cache's).
  ckks::Ciphertext multiply(const ckks::Ciphertext& a, const ckks::Plaintext& p) const {
    ckks::Ciphertext x = ev_.multiply(a, p);
    ev_.rescale_inplace(x);
    return on_chain(std::move(x));
  }
  // sum_t multiply(a_t, p_t), each product rescaled on its own as above (the same words), in one evaluator call
  // that pays one rescale's transforms for the whole sum where the backend fuses it (graph/passes/plain_sums.hpp).
  ckks::Ciphertext multiply_sum(std::span<const ckks::Ciphertext* const> a,
                                std::span<const ckks::Plaintext* const> p) const {
    return on_chain(ev_.multiply_plain_rescale_sum(a, p));
  }
  // The same with the plaintexts kept unscaled, encoded at (level, Delta_level) and `slots` for this call (where
  // the evaluator keeps them compact: never written whole).
  ckks::Ciphertext multiply_sum(std::span<const ckks::Ciphertext* const> a,
                                std::span<const ckks::UnscaledPlaintext* const> p, int level, std::size_t slots) const {
    return on_chain(ev_.multiply_plain_rescale_sum(
        a, p, ckks::EncodeOptions{.level = level, .scale = chain_.at(level), .slots = slots}));
  }
  // sum_t a_t p_t with the plaintexts encoded at the terms' (level, Delta_level), not rescaled: a part of a sum
  // rounded once (RunOptions::round_sums_once); parts add up exactly, and rescale_sum rounds their total.
  ckks::Ciphertext multiply_sum_unrescaled(std::span<const ckks::Ciphertext* const> a,
                                           std::span<const ckks::Plaintext* const> p) const {
    return ev_.multiply_plain_sum(a, p);
  }
  ckks::Ciphertext multiply_sum_unrescaled(std::span<const ckks::Ciphertext* const> a,
                                           std::span<const ckks::UnscaledPlaintext* const> p, int level,
                                           std::size_t slots) const {
    return ev_.multiply_plain_sum(a, p, ckks::EncodeOptions{.level = level, .scale = chain_.at(level), .slots = slots});
  }
  // Such a sum rescaled once: one level down, on the chain (the scale of its terms rescaled one by one).
  ckks::Ciphertext rescale_sum(ckks::Ciphertext sum) const {
    ev_.rescale_inplace(sum);
    return on_chain(std::move(sum));
  }
  // a times a constant encoded at Delta_level, rescaled: one level down, on the chain.
  ckks::Ciphertext multiply(const ckks::Ciphertext& a, double constant) const {
    ckks::Ciphertext x = a.clone();
    circuits::multiply_constant_at_scale(ev_, x, constant, chain_.at(a.level()));
    ev_.rescale_inplace(x);
    return on_chain(std::move(x));
  }
  // a plus a plaintext vector (encoded at (a.level(), Delta_level) for this call), a plaintext encoded so, or a
  // constant: no level.
  ckks::Ciphertext add(const ckks::Ciphertext& a, const PlainVector& p) const {
    return add(a, encode(p, a.level(), a.slots()));
  }
  ckks::Ciphertext add(const ckks::Ciphertext& a, const ckks::Plaintext& p) const { return ev_.add(a, p); }
  ckks::Ciphertext add(const ckks::Ciphertext& a, std::complex<double> constant) const { return ev_.add(a, constant); }
  // The evaluator's rotations (rotate_hoisted: several steps sharing one ModUp) and conjugation: no level.
  ckks::Ciphertext rotate(const ckks::Ciphertext& a, std::int64_t steps) const { return ev_.rotate(a, steps); }
  std::vector<ckks::Ciphertext> rotate_hoisted(const ckks::Ciphertext& a, const std::vector<std::int64_t>& steps) const {
    return ev_.rotate_hoisted(a, steps);
  }
  ckks::Ciphertext conjugate(const ckks::Ciphertext& a) const { return ev_.conjugate(a); }
  // With a shift (graph::bootstrap_shift): the message divided by 2^shift for free (the same words read at a
  // scale 2^shift larger), bootstrapped, and the result multiplied by 2^shift: an integer product (no level) for
  // shift > 0, folded into the bootstrap's EvalMod (free) for shift < 0.
  ckks::Ciphertext bootstrap(const ckks::Ciphertext& a, int shift = 0) const {
    require<LevelError>(bootstrapper_ != nullptr, "bootstrap: no bootstrapper was given");
    if (shift == 0) return on_chain(bootstrapper_->bootstrap(a));
    const ckks::Ciphertext scaled = read_shifted(a, shift);
    return shifted_back(shift < 0 ? bootstrapper_->bootstrap(scaled, shift) : bootstrapper_->bootstrap(scaled), shift);
  }

  // Two real values of one level, scale and slots refreshed by one bootstrap (boot::BasicBootstrapper::
  // bootstrap_pair), each with the shift as in bootstrap(a, shift): about bootstrap(a, shift)'s and
  // bootstrap(b, shift)'s values and errors for one bootstrap's time. A shift below the pair's lowest (one bit
  // above the bootstrapper's max_shrink_bits: the pair halves its result inside EvalMod) is raised to it.
  std::array<ckks::Ciphertext, 2> bootstrap_pair(const ckks::Ciphertext& a, const ckks::Ciphertext& b,
                                                 int shift = 0) const {
    require<LevelError>(bootstrapper_ != nullptr, "bootstrap_pair: no bootstrapper was given");
    shift = std::max(shift, 1 - boot::BasicBootstrapper<B>::max_shrink_bits);
    auto [x, y] = shift == 0 ? bootstrapper_->bootstrap_pair(a, b)
                             : bootstrapper_->bootstrap_pair(read_shifted(a, shift), read_shifted(b, shift),
                                                             std::min(shift, 0));
    return {shifted_back(std::move(x), shift), shifted_back(std::move(y), shift)};
  }

  // a bootstrapped with about 2^-precise_bootstrap_bits of one bootstrap's error, for two bootstraps' time: the
  // first's error e, read off at a's level (a minus the refresh brought down there: -e exactly, but for the
  // rounding of one scale adjustment), is bootstrapped at a shift precise_bootstrap_bits lower (e read
  // 2^10 times larger, the result scaled back inside EvalMod for free) and added: what is left is the second
  // bootstrap's error, at 2^-10 of the first's scale. The output's level is one bootstrap's.
  ckks::Ciphertext bootstrap_precise(const ckks::Ciphertext& a, int shift = 0) const {
    static_assert(precise_correction_shift(-100) == -boot::BasicBootstrapper<B>::max_shrink_bits);
    ckks::Ciphertext fresh = bootstrap(a, shift);
    const ckks::Ciphertext error = sub(a, fresh);  // at the lower of the two levels (a's, as planners place them)
    return add(fresh, bootstrap(error, precise_correction_shift(shift)));
  }

  // bootstrap_precise for two real values of one level, scale and slots, each step run as a pair (bootstrap_pair):
  // two bootstraps' time for both.
  std::array<ckks::Ciphertext, 2> bootstrap_precise_pair(const ckks::Ciphertext& a, const ckks::Ciphertext& b,
                                                         int shift = 0) const {
    auto [fresh_a, fresh_b] = bootstrap_pair(a, b, shift);
    auto [fix_a, fix_b] = bootstrap_pair(sub(a, fresh_a), sub(b, fresh_b), precise_correction_shift(shift));
    return {add(fresh_a, fix_a), add(fresh_b, fix_b)};
  }

  // A plaintext vector at (level, Delta_level) where the evaluator computes.
  ckks::Plaintext encode(const PlainVector& p, int level, std::size_t slots) const {
    return ev_.upload(encode_on_host(p, level, slots));
  }
  // The same on the host only, compressed (thread-safe: the encoder and the chain are read-only); upload it with
  // evaluator(). Encoded at its period: the FFT and the NTT period-sized, and a GPU receives 2 period words a limb
  // (a vector without a shorter period: its slots' worth, the whole plaintext at N/2 slots).
  ckks::PeriodicPlaintext encode_on_host(const PlainVector& p, int level, std::size_t slots) const {
    return encoder_.encode_periodic_compressed(
        p.expanded(p.period()), ckks::EncodeOptions{.level = level, .scale = chain_.at(level), .slots = slots});
  }

  // Encoding's first half on the host (thread-safe): the special IFFT of p's period, for `slots` slots. Upload it
  // with evaluator() and finish it with encode(unscaled, level, slots) at each use: encode(p, level, slots)'s words.
  ckks::UnscaledPlaintext unscaled_on_host(const PlainVector& p, std::size_t slots) const {
    return encoder_.unscaled(p.expanded(p.period()), slots);
  }
  // An unscaled plaintext (unscaled_on_host's, uploaded) encoded at (level, Delta_level) where the evaluator
  // computes.
  ckks::Plaintext encode(const ckks::UnscaledPlaintext& unscaled, int level, std::size_t slots) const {
    return ev_.encode(unscaled, ckks::EncodeOptions{.level = level, .scale = chain_.at(level), .slots = slots});
  }
  // Several at one level and slot count (a sum's): one batch where the evaluator encodes on a device.
  std::vector<ckks::Plaintext> encode(std::span<const ckks::UnscaledPlaintext* const> many, int level,
                                      std::size_t slots) const {
    return ev_.encode(many, ckks::EncodeOptions{.level = level, .scale = chain_.at(level), .slots = slots});
  }

 private:
  // a's words read at a scale 2^shift larger: its message divided by 2^shift, for free.
  static ckks::Ciphertext read_shifted(const ckks::Ciphertext& a, int shift) {
    ckks::Ciphertext scaled = a.clone();
    scaled.set_scale(std::ldexp(a.scale(), shift));
    return scaled;
  }
  // A refresh of a value read shifted, multiplied back by 2^shift (an integer product for shift > 0; a shift < 0 was
  // folded into the bootstrap's EvalMod), onto the chain.
  ckks::Ciphertext shifted_back(ckks::Ciphertext fresh, int shift) const {
    if (shift > 0) ev_.multiply_integer_inplace(fresh, std::int64_t{1} << shift);
    return on_chain(std::move(fresh));
  }

  const ckks::BasicEvaluator<B>& ev_;
  circuits::ScaleChain chain_;
  ckks::Encoder encoder_;
  const boot::BasicBootstrapper<B>* bootstrapper_;
};

}  // namespace cerium::graph
