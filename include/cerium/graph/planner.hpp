#pragma once
// Planning a traced program: the passes run in this fixed order, each in its own file under graph/passes/:
//  1. levels and bootstrap placement (passes/levels.hpp, passes/bootstrap_placement.hpp): the level of every
//     node, and the fewest bootstraps such that none runs out of levels (pinned bootstraps kept); with
//     PlanOptions::pair_bootstraps, the nodes reordered by bootstrap epoch (passes/bootstrap_pairs.hpp) so that
//     the bootstraps of independent values can run two at a time, and paired after step 2;
//  2. scales: every ciphertext lives on one scale chain (circuits::ScaleChain) anchored at the bootstrapper's
//     output, or at level 0 with the default scale without one, so a node's scale is the chain's at its level,
//     exactly what the executor's ciphertexts carry; products are rescaled at once, operands meet by dropping
//     limbs (automatic rescale and level alignment);
//  3. rotation keys (passes/rotation_keys.hpp): exactly the Galois elements needed, their bytes, and a
//     MissingKeyError for a rotation the user will not make a key for;
//  4. fusion (passes/hoisting.hpp): the rotations of one value share one ModUp;
//  5. memory (passes/memory.hpp): each value's last use and the peak of live ciphertext bytes; the bytes of the
//     plaintexts as stored (their values: a periodic vector once) and as they would be fully encoded.
// Every error is typed and names the node and the numbers, before anything runs.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/keys.hpp"
#include "cerium/circuits/scale_chain.hpp"
#include "cerium/graph/passes/bootstrap_placement.hpp"
#include "cerium/graph/passes/hoisting.hpp"
#include "cerium/graph/passes/memory.hpp"
#include "cerium/graph/passes/rotation_keys.hpp"
#include "cerium/graph/program.hpp"

namespace cerium::graph {

// What the planner needs to know of a bootstrapper.
struct BootstrapSpec {
  int output_level = 0;     // the level of its results
  double output_scale = 0;  // their scale
  int min_input_level = 1;  // the lowest level it accepts
  std::size_t slots = 0;    // n, the slots it bootstraps
};

// A bootstrapper's levels, output scale and slots, as the planner needs them.
template <backend::PolyBackend B>
BootstrapSpec bootstrap_spec(const boot::BasicBootstrapper<B>& bootstrapper) {
  const double scale = bootstrapper.config().output_scale > 0
                           ? bootstrapper.config().output_scale
                           : bootstrapper.context()->parameters().default_scale_at(bootstrapper.levels().output);
  return {.output_level = bootstrapper.levels().output, .output_scale = scale, .min_input_level = 1,
          .slots = bootstrapper.slots()};
}

// What the planner may use and must respect: bootstrapping, levels, keys, memory and calibration.
struct PlanOptions {
  std::optional<BootstrapSpec> bootstrap = std::nullopt;  // none: the program must fit in the parameters' levels
  int output_level = 0;                    // the level every output keeps at least
  // The rotation steps the user will generate keys for (none: any); a rotation outside them is an error.
  std::optional<std::vector<std::int64_t>> available_rotations = std::nullopt;
  bool conjugation_available = true;  // false: a conjugation is a MissingKeyError (whatever available_rotations says)
  ckks::KeyStorage key_storage = ckks::KeyStorage::expanded;  // for the key-byte figure
  PlacementOptions placement = {};  // how bootstraps are placed (passes/bootstrap_placement.hpp)
  // Rotations of one value share a ModUp. Off: every rotation key-switches alone, the words of graph::Eager.
  bool hoist_rotations = true;
  // Device memory the run may use (0: no limit): a plan that needs more (one operation alone, or the live
  // ciphertexts at the peak plus the resident relinearization and rotation keys) is an OutOfMemoryError.
  std::size_t memory_budget_bytes = 0;
  // Sample inputs (per sample, one slot vector per program input) the program is simulated on
  // (graph/simulate.hpp): a value larger than bootstrap_magnitude_limit in any slot is not bootstrapped, since a
  // bootstrap's error grows with the magnitude; where no placement is then possible the limit doubles until one
  // is. None: any value may be bootstrapped (the program must keep its bootstrapped values small itself).
  std::vector<std::vector<SlotValues>> calibration = {};
  double bootstrap_magnitude_limit = 2;
  // OpenMP threads that simulate the calibration samples (each node's slots split among them; one without
  // OpenMP). More than one pays off only on otherwise idle cores: a node is about 20 us at 2^15 slots, and a
  // thread that waits for a busy core holds up every node.
  std::size_t simulation_threads = 1;
  // Every bootstrap, placed or pinned, is precise (two bootstraps: NodePlan::precise); off: only those of values
  // marked so (graph::bootstrap_precisely).
  bool precise_bootstraps = false;
  // Bootstraps two at a time (passes/bootstrap_pairs.hpp, boot::BasicBootstrapper::bootstrap_pair): the program's
  // nodes reordered by bootstrap epoch (Plan::order) and each bootstrap paired with an independent one of the same
  // level, shift and slots (NodePlan::pair), so a run refreshes two values for one bootstrap and a conjugation. For
  // real values only: an imaginary part of one value shows up in its partner. Precise bootstraps pair with precise
  // ones (both steps run as pairs).
  bool pair_bootstraps = false;
};

struct Plan;
// The BootstrapConfig::message_bound a planned program needs: the largest value it bootstraps on its calibration inputs
// (after bootstrap_shift) times 2^(10 - ratio), up to a power of two, where ratio is the bootstrapper's
// message_ratio_bits (0: the automatic one at the plan's bootstrap slots). The sine's cubic error falls with the bound
// and EvalMod's noise grows with it; this factor balances them (4 at ratio 8, 16 at ratio 6: 15.5 and 12.9 bits on
// values up to 8 and 14.6). 1 without calibration: the program must then keep its bootstrapped values within [-1, 1]
// itself.
double required_message_bound(const Plan& plan, int message_ratio_bits = 0);

// What the plan decides for one node.
struct NodePlan {
  int level = 0;           // the level of the value the node computes (before its bootstrap)
  double scale = 0;        // the chain's scale there
  bool bootstrap = false;  // refreshed after it (placed by the planner, or the node is a pinned bootstrap)
  // A bootstrap made precise (Node::precise_bootstrap, PlanOptions::precise_bootstraps): the executor runs
  // graph::ChainOps::bootstrap_precise, about 2^-precise_bootstrap_bits of one bootstrap's error for twice its
  // time.
  bool precise = false;
  int held_level = 0;      // the level its consumers read (the bootstrap's output level when refreshed)
  double magnitude = 0;    // the largest |slot| it holds on the calibration inputs (0: not calibrated)
  // PlanOptions::pair_bootstraps: the node whose bootstrap runs with this one's (the later of the two refreshes
  // both); none: refreshed alone.
  std::optional<NodeId> pair;
};

// The power of two the executor divides a bootstrapped value by first (for free: the same words read at a
// scale 2^shift larger) and multiplies the result by after (graph::ChainOps::bootstrap: free), so that the
// bootstrapper sees 0.4 < |x| <= 0.8: 0 when not calibrated. A bootstrap's error is absolute, about its message
// bound times 2^-precision; this way each value pays it relative to its own magnitude: one large value does not
// cost every bootstrap precision (a bootstrapper made for the largest value), and a small one (a softmax total,
// a weight of 1 / 128) is not left with a large relative error. Values below 0.8 / 2^max_bootstrap_upscale_bits
// are raised by that much only: a value that is zero up to earlier noise must not bring the noise to the bound.
inline constexpr int max_bootstrap_upscale_bits = 10;
int bootstrap_shift(double magnitude);

// Where a plan's time went, in seconds of wall time (what a user waits for before a run; the calibration's
// simulation runs on PlanOptions::simulation_threads).
struct PlanTimings {
  double simulation = 0;  // the program run on the calibration samples in doubles (every node's magnitude)
  double placement = 0;   // levels and bootstrap placement (the seeds, fan-out refreshes, the search)
  double ordering = 0;    // PlanOptions::pair_bootstraps: the bootstrap-epoch order and the pairs
  double rest = 0;        // scales, rotation keys, hoisting, memory, plaintext bytes
  // The plan's whole time (its passes; the tracing before it apart).
  double total() const { return simulation + placement + ordering + rest; }
};

// A planned program (see the file comment): every node's level, scale and bootstraps, with the keys, fusion and
// memory the run needs.
struct Plan {
  Program program;                 // the program as traced (in Plan::order when that is not empty)
  // PlanOptions::pair_bootstraps: node i of `program` is node order[i] of the traced program (empty: the trace's
  // order, unchanged).
  std::vector<NodeId> order;
  PlanOptions options;             // the options it was planned with
  circuits::ScaleChain chain;      // every ciphertext's scale chain
  std::vector<NodePlan> nodes;     // one per node; index: NodeId
  int placed_bootstraps = 0;       // chosen by the planner
  int pinned_bootstraps = 0;       // written by the user
  bool placement_optimal = false;  // the placement is proven to need the fewest bootstraps
  double bootstrap_magnitude = 0;  // the largest |value| bootstrapped on the calibration inputs (0: none given)
  // The same after each value's bootstrap_shift: what the bootstrapper sees (at most 0.8 when calibrated).
  double bootstrap_scaled_magnitude = 0;
  RotationKeys keys;                        // the rotation keys a run needs
  Hoisting hoisting;                        // rotations that share a ModUp
  MemoryPlan memory;                        // last uses and peak bytes
  std::size_t plaintext_bytes = 0;          // the plaintext vectors as stored (values, each vector once)
  std::size_t plaintext_encoded_bytes = 0;  // the same, encoded at the levels they are used (what a full
                                            // encoding would hold on the device)
  // With calibration and a bootstrapper: the program's outputs on each calibration sample, in double precision
  // (what the ciphertexts should decrypt to; the next stage's samples in graph::StagedPlanner).
  std::vector<std::vector<SlotValues>> calibration_outputs;
  // With calibration: the fewest bits by which a node's largest value times its scale stays below Q_level / 2
  // (below 0 it wraps when decrypted), and that node.
  double smallest_headroom_bits = std::numeric_limits<double>::infinity();
  NodeId smallest_headroom_node = 0;
  PlanTimings timings;  // how long each pass took

  int bootstraps() const { return placed_bootstraps + pinned_bootstraps; }  // placed and pinned
  // Of those, the ones made precise (each two bootstraps when run).
  std::size_t precise_bootstraps() const;
  // The pairs of bootstraps run as one (NodePlan::pair).
  std::size_t bootstrap_pairs() const;
  // The bootstraps a run executes: one per bootstrapped value, two per precise one, a pair's counted once.
  std::size_t bootstrap_runs() const;
  // How the client must encode input i (its level, the chain's scale there, its slots) before encrypting.
  ckks::EncodeOptions input_encoding(std::size_t input) const;
  // The key switches a run performs (relinearizations and rotations; bootstraps apart).
  std::size_t key_switches() const;
};

// Runs the passes on a traced program (see the file comment).
Plan plan(Program program, const PlanOptions& options = {});

// The scale chain of a program's ciphertexts: through the bootstrapper's output (level, scale), or through level 0
// at the parameters' default scale without one.
circuits::ScaleChain program_chain(const ckks::Context& context, const std::optional<BootstrapSpec>& bootstrap);

// The product of the primes a rescale at `level` divides by (index: level; [0] unused), from the parameters.
std::vector<double> level_prime_products(const ckks::Context& context);

}  // namespace cerium::graph
