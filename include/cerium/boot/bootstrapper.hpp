#pragma once
// CKKS bootstrapping: a ciphertext at a low level in, the same message at a high level out.
//
// Pipeline (levels from the top level T down; c, e, s the stages' level counts):
//  1. Scale-down (input level >= 1 -> level 0): multiply by 1 encoded so that after the rescale the scale is
//     q0 / 2^message_ratio_bits (q0 = the base modulus): the message sits far below q0.
//  2. Encapsulation (optional): key switch at level 0 from s to an ephemeral secret s' of Hamming weight h.
//  3. ModRaise (level 0 -> T): the centered lift of c0, c1 modulo q0 into Q_T: the plaintext becomes
//     t = m + q0 I with |I| <= (1 + h) / 2 (under s'), then a key switch from s' back to s.
//  4. SubSum (sparse slots only): log2(N / 2n) rotations by multiples of n project t onto the subring of the slots.
//  5. CoeffToSlot (c levels): the inverse special FFT as c grouped BSGS linear transforms; then conjugation splits
//     the real and imaginary coefficient halves into two ciphertexts whose slots hold x = t_k / (K q0).
//  6. EvalMod (e = ceil(log2(degree + 1)) + 1 + r levels, on both halves): a Chebyshev series of
//     cos(2 pi (K x - 1/4) / 2^r), then r double-angle steps: sin(2 pi K x) ~ 2 pi m / q0.
//  7. SlotToCoeff (s levels): the halves recombined (times i by the monomial X^(N/2), exact) and the special FFT as
//     s grouped BSGS transforms, the constant q0 / (2 pi scale) folded into the diagonals.
// The result is at level T - c - e - s with scale config.output_scale. Within EvalMod every ciphertext at level l
// carries a fixed scale Delta_l (Delta_(l-1) = Delta_l^2 / P_l, anchored at the output), so products and sums
// always meet at equal scales.
//
// Failure probability (failure_probability.hpp: P(|I| > K), I = round(Irwin-Hall sum of h uniforms)):
// bootstrappable_n16, default config: K = 17, encapsulation to h = 32, so |I| <= h / 2 = 16 always: probability 0
// per coefficient and per bootstrap (the Gaussian approximation gives 2^-86.6 and 2^-70.6 over N = 2^16
// coefficients). A smaller K would do: K = 12 fails with 2^-58.8 per coefficient, 2^-42.8 per bootstrap. Without
// encapsulation the dense ternary key (h ~ 2N/3) exceeds K = 17 in 77% of the coefficients: every bootstrap
// fails. The degree-31 series with 4 double angles also extrapolates beyond K (|I| = 22 still errs below 2^-24),
// so these are upper bounds.
//
// BasicBootstrapper is a template over the polynomial backend like BasicEvaluator and is composed of circuits:
// CoeffToSlot and SlotToCoeff are circuits::LinearTransforms, EvalMod's series a circuits::PolynomialEvaluator on
// a circuits::ScaleChain; beyond them it uses the evaluator's public operations, the Encoder, and the backend's
// key switch (for the encapsulation keys). Its member definitions live in src/boot/*.hpp, instantiated for the
// CPU backend in bootstrapper.cpp and for the CUDA backend in src/boot/cuda/.
// Plaintexts (the DFT diagonals, constants) and keys are placed where the backend computes, so that the CUDA
// instantiation (backend/cuda_bootstrapper.hpp) runs the whole bootstrap on the device; ModRaise is the backend's.

#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/backend/cpu_backend.hpp"
#include "cerium/boot/bootstrap_config.hpp"
#include "cerium/boot/bootstrap_keys.hpp"
#include "cerium/circuits/linear_transform.hpp"
#include "cerium/circuits/polynomial_evaluator.hpp"
#include "cerium/circuits/scale_chain.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/plaintext.hpp"

namespace cerium::boot {

using ckks::Ciphertext;
using ckks::ContextPtr;
using ckks::Plaintext;

// Levels each stage uses, derived from a config (ParameterError when the parameters have too few).
struct BootstrapLevels {
  int top = 0;                  // ModRaise lands here
  int after_coeff_to_slot = 0;  // EvalMod's input
  int after_eval_mod = 0;       // SlotToCoeff's input
  int output = 0;               // the bootstrapped ciphertext's level
  int eval_mod = 0;             // levels EvalMod spends
};
// The stages' levels of `config` on these parameters; ParameterError when they have too few.
BootstrapLevels bootstrap_levels(const ckks::Parameters& parameters, const BootstrapConfig& config);

// The bootstrapper of the header comment over backend B: built once per context and config (the transforms
// planned), then given its keys (set_keys) and run on any number of ciphertexts.
template <backend::PolyBackend B = backend::CpuBackend>
class BasicBootstrapper {
 public:
  // Plans the transforms and (with cache_plaintexts) encodes their diagonals; no keys yet.
  BasicBootstrapper(ContextPtr context, BootstrapConfig config = {}, B backend = B{});

  // The context, the config, the slot count (config.slots, 0 resolved to N/2) and the stages' levels.
  const ContextPtr& context() const { return context_; }
  const BootstrapConfig& config() const { return config_; }
  std::size_t slots() const { return slots_; }
  const BootstrapLevels& levels() const { return levels_; }
  // Every rotation step the bootstrap performs (conjugation comes on top).
  const std::vector<std::int64_t>& rotation_steps() const { return rotation_steps_; }
  // Exactly the keys this bootstrapper needs, from the user's key generator. On a backend that computes away
  // from the host (backend::UniformExpansion: the CUDA backend) the relinearization and Galois keys are made
  // there, expanded whatever `storage` says (ckks/backend_keys.hpp: the host's words); the encapsulation keys on
  // a host thread meanwhile.
  BootstrapKeys generate_keys(const ckks::KeyGenerator& keygen, ProgressCallback progress = {},
                              ckks::KeyStorage storage = ckks::KeyStorage::expanded) const;
  // MissingKeyError later, in bootstrap(), names what is absent.
  void set_keys(std::shared_ptr<const BootstrapKeys> keys);
  // The evaluator the stages run on, over the bootstrapper's backend.
  const ckks::BasicEvaluator<B>& evaluator() const { return evaluator_; }

  // The input needs level >= 1, slots() slots and |message| <= 1 (a little more is fine, up to the sine's range).
  Ciphertext bootstrap(const Ciphertext& input) const;
  // The same with the result times 2^log2_factor, -max_shrink_bits <= log2_factor <= 0, for free: the factor is
  // folded into EvalMod (its series and its double-angle constants), so the bootstrap's error shrinks with it. A
  // small value read at a scale 2^-log2_factor smaller (also free) and bootstrapped so keeps its precision
  // relative to its magnitude instead of to 1 (graph::bootstrap_shift). InvalidArgument for another factor.
  Ciphertext bootstrap(const Ciphertext& input, int log2_factor) const;
  static constexpr int max_shrink_bits = 16;
  // The real parts of two ciphertexts bootstrapped for one bootstrap and two conjugations: Re a + i Re b is made
  // exactly at the inputs' level ((a + i b + conj(a - i b)) / 2, the monomial X^(N/2) for i, the halving a scale
  // read twice as large), bootstrapped with its result halved inside EvalMod, and w + conj(w), -i (w - conj(w))
  // give Re a and Re b back. Only real parts travel: the imaginary noise that real computations carry along (and
  // that polynomials such as exp amplify) would otherwise land in the other value's result. The inputs share a
  // level, a scale and the slot count, with |Re a + i Re b| <= 1 (|a|, |b| <= 0.7 always fits); the results are
  // real and carry one bootstrap's error each, times 2^log2_factor as bootstrap(input, log2_factor) with
  // 1 - max_shrink_bits <= log2_factor <= 0. MismatchError for inputs that differ.
  std::array<Ciphertext, 2> bootstrap_pair(const Ciphertext& a, const Ciphertext& b, int log2_factor = 0) const;

  // The stages, public for tests and for callers who fuse them into their own pipelines.
  Ciphertext scale_down(const Ciphertext& input) const;        // -> level 0, scale q0 / 2^ratio
  Ciphertext mod_raise(const Ciphertext& level_zero) const;    // encapsulation included -> top, under s
  Ciphertext sub_sum(const Ciphertext& raised) const;          // identity for full slots
  std::array<Ciphertext, 2> coeff_to_slot(const Ciphertext& raised) const;  // real and imaginary halves
  // log2_factor as in bootstrap(input, log2_factor): the result times 2^log2_factor.
  Ciphertext eval_mod(const Ciphertext& half, int log2_factor = 0) const;
  Ciphertext slot_to_coeff(const Ciphertext& real_half, const Ciphertext& imaginary_half) const;
  // With joined halves (joins_halves(): BootstrapConfig::join_halves at N/4 slots or fewer): the halves, each in
  // the lower half of 2 slots() values, joined by one rotation into [real, imaginary]; EvalMod runs on that once
  // and slot_to_coeff(joined) finishes. InvalidArgument without joined halves.
  bool joins_halves() const { return joined_; }
  Ciphertext join_halves(const std::array<Ciphertext, 2>& halves) const;
  Ciphertext slot_to_coeff(const Ciphertext& joined) const;

  // Bytes of the cached diagonal plaintexts.
  std::size_t plaintext_bytes() const;
  // What they take with cache_plaintexts, known without encoding them: plan with cache_plaintexts = false first
  // to decide whether the host or device has the room.
  std::size_t cached_plaintext_bytes() const;

 private:
  using Transform = circuits::LinearTransform<B>;
  void plan_transforms();
  Ciphertext key_switch(const Ciphertext& input, const ckks::SwitchingKey& key) const;
  // InvalidArgument unless -max_shrink_bits <= log2_factor <= 0 (`what` names the caller).
  static void require_output_factor(const char* what, int log2_factor);
  // EvalMod's factor c_k = 2^(-shrink / 2^steps_left) for an output factor 2^-shrink, `steps_left` double angles
  // before the output: the series' with steps_left = double_angle_steps, each double angle's constant after it.
  static double double_angle_factor(int shrink, int steps_left) {
    return std::exp2(-shrink / std::ldexp(1.0, steps_left));
  }
  // A constant plaintext where the evaluator computes.
  Plaintext constant(std::complex<double> value, const ckks::EncodeOptions& options) const;
  // The monomial X^(N/2) (i in every slot) or its negative at a level for `slots` slots: made at set-up for the
  // levels and slots the stages use, at others (bootstrap_pair's) on first use and kept (thread-safe), so a later
  // call uploads nothing (a CUDA graph capture after a first run may not).
  const Plaintext& monomial_i(bool negative, int level, std::size_t slots) const;
  Plaintext monomial_plaintext(bool negative, int level, std::size_t slots) const;

  ContextPtr context_;
  BootstrapConfig config_;
  ckks::BasicEvaluator<B> evaluator_;
  ckks::Encoder encoder_;
  std::size_t slots_ = 0;
  bool joined_ = false;  // BootstrapConfig::join_halves, where the slots allow it
  BootstrapLevels levels_;
  double raise_scale_ = 0;                   // scale at ModRaise: q0 / 2^ratio
  double output_scale_ = 0;                  // the result's (config.output_scale, 0 resolved)
  // EvalMod's: Delta_l from its output (the output scale, or at a narrow output level the wide default, which the
  // last SlotToCoeff group then brings down to the output scale) up to after CoeffToSlot.
  circuits::ScaleChain chain_;
  // The scaled cosine's Chebyshev series, [s] times 2^(-s / 2^double_angle_steps) for s = 0 .. max_shrink_bits.
  std::vector<circuits::PolynomialEvaluator> eval_mod_series_;
  std::vector<std::shared_ptr<const Transform>> coeff_to_slot_, slot_to_coeff_;
  std::vector<std::int64_t> rotation_steps_;
  std::shared_ptr<const BootstrapKeys> keys_;
  // The encapsulation keys where the backend computes (the same objects as keys_'s on the CPU).
  std::shared_ptr<const ckks::SwitchingKey> to_sparse_, from_sparse_;
  Plaintext minus_i_, plus_i_;  // at levels_.after_coeff_to_slot and levels_.after_eval_mod
  struct MonomialCache {         // monomial_i's others, by (negative, level, slots)
    std::mutex mutex;
    std::map<std::tuple<bool, int, std::size_t>, Plaintext> made;
  };
  std::shared_ptr<MonomialCache> monomials_ = std::make_shared<MonomialCache>();
};

// The bootstrapper on the CPU backend.
using Bootstrapper = BasicBootstrapper<backend::CpuBackend>;

extern template class BasicBootstrapper<backend::CpuBackend>;

}  // namespace cerium::boot
