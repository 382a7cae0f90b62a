#pragma once
// The CKKS context: parameters plus every table derived from them (RNS bases per level, rescalers, the ModUp and
// ModDown of hybrid key switching and automorphism maps, all from rlwe::Context; special-FFT tables). Immutable after creation and safe to
// share between threads; objects (keys, ciphertexts) hold a ContextPtr, and operations check that their operands
// share one context.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cerium/ckks/parameters.hpp"
#include "cerium/math/special_fft.hpp"
#include "cerium/rlwe/context.hpp"

namespace cerium::ckks {

class Context;
// How keys, plaintexts, ciphertexts and evaluators hold their context: shared and immutable.
using ContextPtr = std::shared_ptr<const Context>;

// A CKKS context is an RLWE context (its moduli, levels and key-switching tables: rlwe::Context, which the
// backends and key switching take) plus the CKKS parameters and the encoding tables.
class Context : public rlwe::Context {
 public:
  // A shared context of validated parameters (the config's errors: see Parameters) with every table built.
  static ContextPtr create(const CkksConfig& config) { return create(Parameters(config)); }
  static ContextPtr create(Parameters parameters);

  const Parameters& parameters() const { return params_; }  // the CKKS parameters, primes included

  // Special-FFT tables for a power-of-two slot count in [1, N/2].
  const math::SpecialFftTables& fft(std::size_t slots) const;

  explicit Context(Parameters parameters);  // use create(); public for std::make_shared

 private:
  Parameters params_;
  std::vector<std::unique_ptr<math::SpecialFftTables>> fft_;  // index log2(slots)
};

// The RLWE moduli of a parameter set: Q's primes by level and P.
rlwe::ModulusLadder modulus_ladder(const Parameters& parameters);

// Throws MismatchError naming `what` unless a and b are the same context or have equal parameters.
void require_same_context(const ContextPtr& a, const ContextPtr& b, const char* what);

}  // namespace cerium::ckks
