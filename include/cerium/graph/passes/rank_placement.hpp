#pragma once
// Placement over the ranks of a device mesh: which rank computes each value of a planned program when whole
// ciphertexts are spread over ranks (ciphertext-parallel, the couplings of the application: heads, row blocks,
// column blocks go where their operands are), and what it costs next to the same program limb-parallel (every
// ciphertext's limbs over every rank, dist::ShardedBackend, whose bytes dist::LimbTraffic predicts).
//
// The placement is a list schedule over the program's nodes in order (HEFT: each node on the rank where it would
// finish first, counting the transfer of operands held elsewhere at the link's bandwidth), so chains stay on one
// rank and independent branches spread; a value is sent to a rank at most once. Moving a ciphertext over NVLink
// costs far less time than a key switch, so the fastest schedule moves data freely; the pass also tries schedules
// that charge each byte moved (from a hundredth to 64 key switches' time per ciphertext) and keeps the one that
// moves the fewest bytes within MeshModel::time_slack of the fastest time. The cost model is the mesh's:
// per-operation times at the top level scaled by the limbs at the node's level, and the link's bandwidth and
// latency. Everything is known before running; explain_placement() prints it.
//
// Compared figures: bytes received by all ranks together (the same measure for both placements) and predicted
// times, hence the scaling efficiency T1 / (R T_R). The limb-parallel side counts ModUp's, ModDown's and the
// rescales' gathers of every key switch and rescale (hoisted groups share their ModUp), computes 1/R of every
// node, and leaves out its bootstraps' gathers (not modelled yet): its bytes and time are lower bounds, so the
// savings reported are too.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cerium/graph/planner.hpp"

namespace cerium::graph {

// Per-operation times at the top level on one device, and the links between devices (defaults: an H200 at
// N = 2^16, bench/RESULTS.md, and NVLink 4 at 450 GB/s a direction).
struct MeshModel {
  int ranks = 1;                              // R, the devices of the mesh
  double link_bytes_per_second = 450e9;       // one link, one direction
  double link_latency_seconds = 10e-6;        // a transfer's fixed cost
  double key_switch_seconds = 2.45e-4;        // a relinearization or rotation with its rescale
  double plaintext_product_seconds = 3.0e-5;  // a product by a plaintext or constant, with its rescale
  double addition_seconds = 1.0e-5;           // a ciphertext addition
  double bootstrap_seconds = 3.4e-2;          // one bootstrap
  // The placement moves the fewest bytes among schedules within this fraction of the fastest one's time.
  double time_slack = 0.1;
};

// A node that closes a segment (attention, FFN, ...) when it carries `label`: the nodes since the previous closing
// node belong to the segment `segment`.
struct SegmentBoundary {
  std::string label;    // the closing node's label
  std::string segment;  // the segment it closes
};

// Where each node of a plan runs on a mesh, ciphertext-parallel, and what that costs next to the limb-parallel
// backend (see the file comment).
struct RankPlacement {
  int ranks = 1;                             // R
  std::vector<int> rank;                     // per node: where it is computed (ciphertext-parallel)
  std::uint64_t moved_bytes = 0;             // ciphertexts sent between ranks, all ranks together
  std::size_t transfers = 0;                 // how many (value, receiving rank) pairs those are
  double makespan_seconds = 0;               // ciphertext-parallel, predicted
  double serial_seconds = 0;                 // the program on one rank
  std::uint64_t limb_parallel_bytes = 0;     // the same program limb-parallel (bootstraps' gathers left out)
  double limb_parallel_seconds = 0;          // the same program limb-parallel, predicted
  std::vector<double> busy_seconds;          // per rank, ciphertext-parallel
  // The figures of one segment (see SegmentBoundary).
  struct Segment {
    std::string name;                       // the boundary's segment name, or "rest"
    std::size_t nodes = 0;                  // nodes in the segment
    std::uint64_t moved_bytes = 0;          // ciphertexts it sends between ranks
    std::uint64_t limb_parallel_bytes = 0;  // the same segment limb-parallel
  };
  std::vector<Segment> segments;  // by name, in order of first appearance; "rest" for nodes after the last boundary

  // Scaling efficiency T1 / (R T_R): ciphertext-parallel, and limb-parallel.
  double efficiency() const { return serial_seconds / (ranks * makespan_seconds); }
  double limb_parallel_efficiency() const { return serial_seconds / (ranks * limb_parallel_seconds); }
  // 1 - moved / limb-parallel: the fraction of the limb-parallel bytes the placement saves.
  double savings() const;
};

// The list schedule of the file comment for a plan on a mesh; `boundaries` split the figures by segment.
RankPlacement place_on_ranks(const Plan& plan, const MeshModel& mesh,
                             const std::vector<SegmentBoundary>& boundaries = {});

// A summary: ranks, bytes and times of both placements, efficiency, per segment, per rank.
std::string explain_placement(const RankPlacement& placement);

}  // namespace cerium::graph
