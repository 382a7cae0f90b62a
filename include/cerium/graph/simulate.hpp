#pragma once
// A traced program run on slot vectors of doubles, node by node: the exact values every ciphertext of the
// program should hold. Where a decryption is off, this says which node's value was large or went wrong; with a
// plan, which values its bootstraps refresh and how large they are (a bootstrap wants |value| near 1 or below:
// its error grows with the magnitude).

#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cerium/ckks/parameters.hpp"
#include "cerium/graph/node.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/program.hpp"

namespace cerium::graph {

// Every node's slot values from the inputs' (one vector per program input, in order, of the input's slots).
// MismatchError for another count or size of inputs.
std::vector<SlotValues> simulate(const Program& program, const std::vector<SlotValues>& inputs);
// The largest |slot| of every node over several samples of inputs, each node's values dropped after its last
// reader (a large model's values do not all fit in memory at once); with `outputs`, each sample's output values
// too (one simulation for both). threads > 1 splits each node's slots among that many host threads (see
// PlanOptions::simulation_threads); the results do not depend on it.
std::vector<double> simulate_magnitudes(const Program& program, const std::vector<std::vector<SlotValues>>& samples,
                                        std::vector<std::vector<SlotValues>>* outputs = nullptr,
                                        std::size_t threads = 1);
// The outputs' slot values only (in order), each node's values dropped after its last reader.
std::vector<SlotValues> simulate_outputs(const Program& program, const std::vector<SlotValues>& inputs);

// The rounding a run adds at each node, as independent Gaussian noise of these standard deviations in each slot's
// real and imaginary parts, in the encoding's units (divided by the node's scale): a rescale's after every product
// (a ciphertext product's relinearization rounds at the product's scale, which the rescale divides by the level's
// prime), a key switch's after rotations and conjugations. At a scale of 2^56 it is invisible; at 2^30
// (CkksConfig::narrow_levels) it is about 2^-16 at N = 2^16 for a rescale and 2^-15 for a key switch, which a
// model's polynomials and iterations may amplify: the simulation shows by how much before an encrypted run does.
struct RoundingNoise {
  double rescale = 0;     // a rescale's rounding (every product)
  double key_switch = 0;  // a key switch's rounding (rotations, conjugations)
};
// The rounding noise of `parameters`. A rescale rounds to the nearest: words r0 + r1 s with coefficients of
// variance (1 + h) / 12 for a secret of h nonzeros, and a slot sums N of them: sqrt(N (1 + h) / 24) in each
// part. A key switch's ModDown converts from the alpha special primes with the fast conversion, off by u P with
// u of mean (alpha - 1) / 2 and variance alpha / 12, less the constant ring::ModDown subtracts: (u - k) s adds
// h E[(u - k)^2] to each coefficient's variance.
RoundingNoise rounding_noise(const ckks::Parameters& parameters);

// The outputs as a run with noisy bootstraps would give them: every value the plan bootstraps gets independent
// uniform noise of up to `absolute` in each slot's real and imaginary parts (a bootstrap's error is about its
// message bound times 2^-precision, whatever the value), everything else exact. Where a model's polynomial
// approximations leave their ranges under that noise (a Newton iteration that diverges, a softmax that
// overflows), this shows it on the host in seconds rather than after an encrypted run.
struct BootstrapNoise {
  double absolute = 0;  // at most this much in each slot's real and imaginary parts
  // Scale each value's noise by 2^bootstrap_shift(its calibrated magnitude): what bootstrapping value / 2^shift
  // with a bootstrapper made for |x| <= 1 and multiplying by 2^shift gives (graph::Executor does that).
  bool scaled_by_magnitude = false;
  std::uint64_t seed = 1;  // of the noise's generator
  // Only the bootstraps of nodes first .. last - 1 get noise: which part of a program turns bootstrap errors
  // into large output errors (a program is traced in order, so a range of nodes is a stretch of the model).
  NodeId first = 0;
  NodeId last = std::numeric_limits<NodeId>::max();
  // The rounding of every rescale and key switch (see RoundingNoise; zero: none).
  RoundingNoise rounding{};
};
// The plan's outputs on inputs with noise on every value it bootstraps (see BootstrapNoise).
std::vector<SlotValues> simulate_outputs_noisy(const Plan& plan, const std::vector<SlotValues>& inputs,
                                               const BootstrapNoise& noise);

// One value the plan bootstraps, and how large it is.
struct BootstrapMagnitude {
  NodeId node = 0;        // the node whose value it is
  std::string label;      // the node's name, if it has one
  double magnitude = 0;   // the largest |slot| it holds
};
// The values the plan bootstraps, largest first.
std::vector<BootstrapMagnitude> bootstrap_magnitudes(const Plan& plan, const std::vector<SlotValues>& values);

}  // namespace cerium::graph
