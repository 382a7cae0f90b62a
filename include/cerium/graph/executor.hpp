#pragma once
// Running a planned program (graph/planner.hpp) on ciphertexts, on either backend: each node is lowered by
// graph::ChainOps, refreshed by the bootstrapper where the plan says, and freed after its last reader (the memory
// plan), so the pool reuses its buffers. The words are those of the same operations called eagerly,
// except that a sum of plaintext products is rounded once (RunOptions::round_sums_once; off: eager's words too);
// either way they are the same on every backend.
//
//   graph::Executor<backend::CpuBackend> run(plan, evaluator, &bootstrapper);
//   std::vector<ckks::Ciphertext> outputs = run.run({ct_x}, progress);
//
// Inputs must arrive at their planned level and scale (Plan::input_encoding says how to encode them), or above it
// on the plan's scale chain (brought down on arrival: a run's outputs fed back as the next run's inputs); a wrong
// count, level, scale or slot count is a typed error naming the input.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/core/check.hpp"
#include "cerium/core/log.hpp"
#include "cerium/graph/chain_ops.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/passes/plain_sums.hpp"
#include "cerium/graph/passes/rank_placement.hpp"
#include "cerium/graph/plaintext_stream.hpp"
#include "cerium/dist/communicator.hpp"

namespace cerium::graph {

// Where a run stands, reported after each node (RunProgressCallback).
struct RunProgress {
  // Nodes done so far, in program order.
  std::size_t nodes_done = 0, nodes = 0;  // nodes in the program
  // Values refreshed so far (a bootstrap pair refreshes two at once).
  int bootstraps_done = 0, bootstraps = 0;  // values the plan refreshes
  double elapsed_seconds = 0;               // since the run started
  // The node just finished and, with RunOptions::profile, its time: the whole node (its bootstrap included)
  // and the bootstrap alone. Without profile both are 0: the device may still be working on the node.
  NodeId node = 0;
  double node_seconds = 0, bootstrap_seconds = 0;
};
// Called on the run's thread after each node; empty: no reports.
using RunProgressCallback = std::function<void(const RunProgress&)>;

// How an Executor places nodes and where it keeps the plan's plaintexts, fixed for its lifetime.
struct ExecutorOptions {
  // Ciphertext-parallel (graph/passes/rank_placement.hpp): this rank computes only its nodes of the placement, and
  // each value goes to the other ranks that read it, once, through the communicator, right after it is computed
  // (every rank walks the program in the same order, so the sends and receives meet without deadlock). Inputs are
  // given on every rank (each keeps those placed on it); an output comes back only on the rank that computes it
  // (the others' are empty). Rotations are not hoisted across a placement. Null: every node here.
  const RankPlacement* placement = nullptr;
  dist::Communicator* communicator = nullptr;
  // Keep each plaintext encoded (where the evaluator computes) after its first use, so later runs skip encoding:
  // Plan::plaintext_encoded_bytes of memory for the encoding time. Off: encoded at each use and freed.
  bool cache_plaintexts = false;
  // With the cache: the most bytes it may hold (0: no bound). Plaintexts past it (in run order) are encoded at
  // each use, streamed ahead by host threads as without the cache: a model whose plaintexts outgrow the device
  // keeps what fits (size it from what the device has free after the keys, less room for the run).
  std::size_t plaintext_cache_bytes = 0;
  // With the cache: plaintexts past plaintext_cache_bytes kept unscaled where the evaluator computes
  // (ckks::UnscaledPlaintext: 2p doubles for a period of p slots, N doubles at most, whatever the level) and
  // encoded there at each use, instead of encoded on host threads and copied at each use: on a GPU, a rounding
  // kernel and an NTT per use in place of a host FFT and NTT and a copy over PCIe. Same words either way.
  bool keep_rest_unscaled = true;
  // The most bytes the unscaled plaintexts may hold (0: no bound); those past it are streamed.
  std::size_t unscaled_bytes = 0;
  // With keep_rest_unscaled: plaintexts whose slot period is at most this stay unscaled even while the cache has
  // room (0: none), for evaluators that encode them nearly as fast as they read them encoded (on a GPU,
  // CudaBackend::sparse_encoding_period()): the cache's room then goes to those that cost a full NTT to encode.
  std::size_t unscaled_period_limit = 0;
  // A sum of plaintext products holds the plaintexts it encodes for itself (not cached) until its call: past this
  // many bytes of them, it is computed in parts that are added (the same words: each product is rounded on its
  // own), so that a sum of thousands of products fits a device's memory.
  std::size_t sum_plaintext_bytes = std::size_t{512} << 20;
  // Without the cache: host threads that encode the plaintexts ahead of the run (graph/plaintext_stream.hpp);
  // 0: one per core, 1: each encoded on the run's thread when its node comes.
  unsigned encode_threads = 0;
};

// Per-run choices (Executor::run).
struct RunOptions {
  // Wait for the device after each node and report its time in RunProgress: a per-layer breakdown for the price
  // of the overlap between host and device (on the CPU nothing is lost).
  bool profile = false;
  // Compute each sum of plaintext products (graph/passes/plain_sums.hpp) in one evaluator call at its last
  // addition: the same words, one rescale's transforms per sum instead of one per product. Off: node by node
  // (for comparison). Not with a placement.
  bool fuse_plain_sums = true;
  // With fuse_plain_sums: each such sum rounded once, by one rescale of sum_t a_t p_t, instead of each product
  // rescaled on its own: fewer roundings (more precise), and on a GPU no transform or correction per term (a
  // matrix product's sums cost a pass over their products and one rescale). The words are then not those of
  // the nodes run one by one (off: they are), but still equal across backends and however a sum is split.
  bool round_sums_once = true;
};

// Runs one plan with one evaluator over backend B (see the file comment); keeps the plan's plaintexts between runs
// as ExecutorOptions says.
template <backend::PolyBackend B>
class Executor {
 public:
  // The plan, evaluator and bootstrapper are referenced, not copied: they must outlive the executor.
  Executor(const Plan& plan, const ckks::BasicEvaluator<B>& evaluator,
           const boot::BasicBootstrapper<B>* bootstrapper = nullptr, ExecutorOptions options = {})
      : plan_(plan),
        ops_(evaluator, plan.chain, bootstrapper),
        options_(options),
        sums_(options.placement == nullptr ? find_plain_sums(plan.program, plan.nodes) : PlainSums{}),
        fused_last_use_(fused_last_uses(plan, sums_)) {
    require<MismatchError>(evaluator.context() != nullptr && plan.program.context() != nullptr &&
                               evaluator.context()->parameters() == plan.program.context()->parameters(),
                           "executor: the evaluator's context is not the program's");
    require<MismatchError>(plan.bootstraps() == 0 || bootstrapper != nullptr,
                           "executor: the plan bootstraps {} times and no bootstrapper was given", plan.bootstraps());
    // Values far beyond the bootstrapper's message bound come out of EvalMod's sine as garbage; how far is too far
    // depends on their coefficients, which slot magnitudes do not tell, so this is a warning, not an error.
    const double seen = plan.bootstrap_scaled_magnitude > 0 ? plan.bootstrap_scaled_magnitude : plan.bootstrap_magnitude;
    if (bootstrapper != nullptr && seen > 2 * bootstrapper->config().message_bound) {
      log(LogLevel::warn,
          "executor: the plan bootstraps values up to {:.3g} on its calibration inputs and the bootstrapper is made "
          "for |x| <= {:.3g}: make it with BootstrapConfig::message_bound = {} (graph::required_message_bound) or "
          "expect a loss of precision",
          seen, bootstrapper->config().message_bound, required_message_bound(plan));
    }
  }

  const Plan& plan() const { return plan_; }                                         // the one given
  const ckks::BasicEvaluator<B>& evaluator() const { return ops_.evaluator(); }       // the one given
  const ExecutorOptions& options() const { return options_; }                       // the ones given

  // With cache_plaintexts: encodes every plaintext the plan multiplies or adds, on `threads` host threads (0: one
  // per core), and uploads them, so that the first run does not encode one at a time on one core. Returns how many
  // it encoded (those already cached are skipped). Without the cache it does nothing: runs encode at each use.
  std::size_t encode_plaintexts(unsigned threads = 0) const {
    if (!options_.cache_plaintexts) return 0;
    std::vector<NodeId> to_encode, to_transform;  // the first node of each plaintext
    {
      std::lock_guard lock(cache_mutex_);
      std::size_t bytes = cached_bytes_, unscaled_bytes = unscaled_bytes_;
      std::set<PlainKey> taken;  // queued here: a plaintext several nodes read is made once
      const auto held = [&](const PlainKey& key, const auto& map) { return map.contains(key) || taken.contains(key); };
      for (const NodeId id : plain_nodes(sums_)) {
        const PlainKey encoded = planned_key(id), unscaled = unscaled_key(id);
        if (held(encoded, cache_) || held(unscaled, unscaled_)) continue;
        if (stays_unscaled(id)) {
          if (unscaled_room(unscaled_bytes, id)) {
            unscaled_bytes += unscaled_bytes_of(id);
            taken.insert(unscaled);
            to_transform.push_back(id);
          }
          continue;
        }
        if (!cache_full_ && room_for(bytes, id)) {
          bytes += planned_bytes(id);
          taken.insert(encoded);
          to_encode.push_back(id);
          continue;
        }
        cache_full_ = true;
        if (!options_.keep_rest_unscaled || !unscaled_room(unscaled_bytes, id)) continue;  // streamed at each use
        unscaled_bytes += unscaled_bytes_of(id);
        taken.insert(unscaled);
        to_transform.push_back(id);
      }
    }
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    // The stream's workers encode a window ahead (host memory holds the window, not every plaintext); uploads stay
    // on this thread and overlap the encoding.
    if (!to_encode.empty()) {
      PlaintextStream stream(to_encode, [this](NodeId id) { return encode_at_planned_level(id); }, threads,
                             8 * static_cast<std::size_t>(threads));
      for (const NodeId id : to_encode) {
        ckks::Plaintext uploaded = ops_.evaluator().upload(stream.take(id));  // rethrows a failed encoding
        std::lock_guard lock(cache_mutex_);
        cached_bytes_ += bytes_of(uploaded);
        cache_.emplace(planned_key(id), std::move(uploaded));
        ++encodings_;
      }
    }
    if (!to_transform.empty()) {
      UnscaledStream stream(to_transform, [this](NodeId id) { return unscaled_on_host(id); }, threads,
                            8 * static_cast<std::size_t>(threads));
      for (const NodeId id : to_transform) {
        ckks::UnscaledPlaintext uploaded = ops_.evaluator().upload(stream.take(id));
        std::lock_guard lock(cache_mutex_);
        unscaled_bytes_ += uploaded.bytes();
        unscaled_.emplace(unscaled_key(id), std::move(uploaded));
      }
    }
    return to_encode.size() + to_transform.size();
  }
  // The bytes of plaintexts held encoded and held unscaled (ExecutorOptions::keep_rest_unscaled) so far.
  std::size_t plaintext_cache_bytes() const {
    std::lock_guard lock(cache_mutex_);
    return cached_bytes_;
  }
  std::size_t unscaled_plaintext_bytes() const {
    std::lock_guard lock(cache_mutex_);
    return unscaled_bytes_;
  }
  // How many plaintexts are held unscaled so far.
  std::size_t unscaled_plaintexts() const {
    std::lock_guard lock(cache_mutex_);
    return unscaled_.size();
  }
  // How many plaintexts the cache has encoded so far (ahead or on first use): one per plaintext (nodes that read
  // one vector at one level and slot count share it) when the plan's levels are the run's.
  std::size_t plaintexts_encoded() const {
    std::lock_guard lock(cache_mutex_);
    return encodings_;
  }

  // The program's outputs, in order, for its inputs, in order (see the file comment for their levels and scales);
  // `progress` hears after each node.
  std::vector<ckks::Ciphertext> run(std::vector<ckks::Ciphertext> inputs, const RunProgressCallback& progress = {},
                                    RunOptions run_options = {}) const {
    Walk walk = start(std::move(inputs), run_options);
    advance(walk, plan_.program.size(), progress);
    return finish(std::move(walk));
  }

  // A run taken a segment of nodes at a time: start, advance to a node (any number of times), finish. run() is
  // the three at once; graph::CapturedRun records each segment's device work as a CUDA graph. A Walk holds the
  // run's live values and is bound to this executor.
  class Walk {
   public:
    NodeId next_node() const { return next_; }            // the first node not run yet
    std::size_t nodes() const { return values_.size(); }  // the program's

   private:
    friend class Executor;
    Walk() = default;
    std::vector<ckks::Ciphertext> inputs_;
    RunOptions options_;
    bool profile_ = false;
    std::chrono::steady_clock::time_point start_;
    RunProgress state_;
    std::vector<std::optional<ckks::Ciphertext>> values_;
    std::vector<std::optional<ckks::Ciphertext>> hoisted_;  // rotations computed with their group
    std::vector<ckks::Ciphertext> outputs_;
    std::size_t next_input_ = 0;
    NodeId next_ = 0;
    std::vector<std::vector<int>> readers_;
    std::unique_ptr<PlaintextStream> stream_;
  };

  // A run's beginning: its inputs checked for count (each is checked for level, scale and slots when its node
  // comes), nothing computed yet.
  Walk start(std::vector<ckks::Ciphertext> inputs, RunOptions run_options = {}) const {
    const Program& program = plan_.program;
    require(inputs.size() == program.inputs().size(), "executor: {} inputs given; the program takes {}",
            inputs.size(), program.inputs().size());
    const RankPlacement* placed = options_.placement;
    require(placed == nullptr || (options_.communicator != nullptr && placed->rank.size() == program.size() &&
                                  placed->ranks == options_.communicator->size()),
            "executor: a placement needs a communicator of its {} ranks and one rank per node",
            placed ? placed->ranks : 0);
    Walk walk;
    walk.inputs_ = std::move(inputs);
    walk.options_ = run_options;
    walk.start_ = std::chrono::steady_clock::now();
    walk.state_ = RunProgress{.nodes = program.size(), .bootstraps = plan_.bootstraps()};
    walk.values_.resize(program.size());
    walk.hoisted_.resize(program.size());
    if (placed != nullptr) walk.readers_ = reading_ranks(*placed);
    walk.stream_ = placed ? nullptr : plaintext_stream(run_options.fuse_plain_sums ? sums_ : no_sums_);
    return walk;
  }

  // Runs the walk's nodes up to `end` (exclusive; clamped to the program's size); `progress` hears after each.
  void advance(Walk& walk, NodeId end, const RunProgressCallback& progress = {}) const {
    require(walk.values_.size() == plan_.program.size(), "executor: a walk of another program ({} nodes, not {})",
            walk.values_.size(), plan_.program.size());
    const bool profile = walk.options_.profile && static_cast<bool>(progress);
    const Program& program = plan_.program;
    using clock = std::chrono::steady_clock;
    RunProgress& state = walk.state_;
    auto& values = walk.values_;
    auto& hoisted = walk.hoisted_;
    const RankPlacement* placed = options_.placement;
    const PlainSums& sums = walk.options_.fuse_plain_sums ? sums_ : no_sums_;
    // When each value is read last: a sum's members read theirs at its root.
    const std::vector<NodeId>& last_use = walk.options_.fuse_plain_sums ? fused_last_use_ : plan_.memory.last_use;
    end = std::min<NodeId>(end, program.size());
    for (NodeId id = walk.next_; id < end; ++id) {
      const Node& node = program.node(id);
      const NodePlan& p = plan_.nodes[id];
      const clock::time_point node_start = clock::now();
      double bootstrap_seconds = 0;
      const bool here = placed == nullptr || placed->rank[id] == options_.communicator->rank();
      const int sum = sums.sum_of.empty() ? -1 : sums.sum_of[id];
      if (sum >= 0 && sums.sums[static_cast<std::size_t>(sum)].root != id) {
        // A member of a sum of plaintext products: computed with the sum at its root, its inputs kept until then.
      } else if (!here) {
        if (node.op == Op::input) ++walk.next_input_;
        if (node.op == Op::output) walk.outputs_.emplace_back();
      } else if (node.op == Op::output) {
        walk.outputs_.push_back(take_or_copy(values, node.inputs[0], id, last_use));
      } else {
        ckks::Ciphertext value =
            node.op == Op::input                                   ? receive(std::move(walk.inputs_[walk.next_input_++]), id)
            : hoisted[id].has_value()                              ? std::move(*hoisted[id])
            : plan_.hoisting.group_of[id] >= 0 && placed == nullptr ? rotate_group(id, values, hoisted)
            : sum >= 0 ? compute_sum(sums.sums[static_cast<std::size_t>(sum)], values, walk.stream_.get(),
                                     walk.options_.round_sums_once)
                       : compute(id, values, walk.stream_.get());
        hoisted[id].reset();
        // A pair's first value waits, not refreshed, for its partner (no node reads it before: passes/
        // bootstrap_pairs.hpp); the partner refreshes both. Over ranks each is refreshed alone where it is computed.
        const bool paired = p.pair.has_value() && placed == nullptr;
        if (p.bootstrap && !(paired && *p.pair > id)) {
          if (profile) ops_.wait();
          const clock::time_point bootstrap_start = clock::now();
          const int shift = bootstrap_shift(p.magnitude);
          if (paired) {
            auto [first, second] = p.precise ? ops_.bootstrap_precise_pair(*values[*p.pair], value, shift)
                                             : ops_.bootstrap_pair(*values[*p.pair], value, shift);
            values[*p.pair] = std::move(first);
            value = std::move(second);
            ++state.bootstraps_done;
          } else {
            value = p.precise ? ops_.bootstrap_precise(value, shift) : ops_.bootstrap(value, shift);
          }
          ++state.bootstraps_done;
          if (profile) {
            ops_.wait();
            bootstrap_seconds = std::chrono::duration<double>(clock::now() - bootstrap_start).count();
          }
        }
        values[id] = std::move(value);
      }
      if (placed != nullptr && node.op != Op::output) move_to_readers(*placed, walk.readers_[id], id, values);
      if (sum < 0) {
        for (const NodeId input : node.inputs) {
          if (last_use[input] == id) values[input].reset();
        }
      } else if (sums.sums[static_cast<std::size_t>(sum)].root == id) {
        release_sum_inputs(sums, sum, last_use, values);
      }
      walk.next_ = id + 1;
      if (progress) {
        if (profile) ops_.wait();
        const clock::time_point now = clock::now();
        state.nodes_done = id + 1;
        state.node = id;
        state.elapsed_seconds = std::chrono::duration<double>(now - walk.start_).count();
        state.node_seconds = profile ? std::chrono::duration<double>(now - node_start).count() : 0;
        state.bootstrap_seconds = bootstrap_seconds;
        progress(state);
      }
    }
  }

  // The outputs of a walk run to its end (InvalidArgument before that).
  std::vector<ckks::Ciphertext> finish(Walk&& walk) const {
    require(walk.values_.size() == plan_.program.size() && walk.next_ == plan_.program.size(),
            "executor: the walk has run {} of its {} nodes; advance it to the end before finishing", walk.next_,
            walk.values_.size());
    return std::move(walk.outputs_);
  }

  // Plaintext operands that a run would encode on the host and copy over (not cached, not kept unscaled where
  // the evaluator computes): with the cache, those past its bounds; without it, every one. A run with none
  // queues nothing but device work after its first (graph::CapturedRun needs that).
  std::size_t host_encoded_plaintexts() const {
    const std::vector<NodeId> plain = plain_nodes(sums_);
    if (!options_.cache_plaintexts) return plain.size();
    std::lock_guard lock(cache_mutex_);
    return static_cast<std::size_t>(std::count_if(plain.begin(), plain.end(), [&](NodeId id) {
      return !cache_.contains(planned_key(id)) && !unscaled_.contains(unscaled_key(id));
    }));
  }

 private:
  // Per node: the other ranks that read its value (sorted, each once).
  std::vector<std::vector<int>> reading_ranks(const RankPlacement& placed) const {
    const Program& program = plan_.program;
    std::vector<std::vector<int>> readers(program.size());
    for (NodeId id = 0; id < program.size(); ++id) {
      for (const NodeId v : program.node(id).inputs) {
        const int r = placed.rank[id];
        if (r != placed.rank[v] && std::find(readers[v].begin(), readers[v].end(), r) == readers[v].end()) {
          readers[v].push_back(r);
        }
      }
    }
    for (auto& r : readers) std::sort(r.begin(), r.end());
    return readers;
  }

  // Node id's value from its rank to each rank in `to`: a header (parts, level, slots, the scale's 64 bits) then
  // the parts' limbs, from the host copy of the value.
  void move_to_readers(const RankPlacement& placed, const std::vector<int>& to, NodeId id,
                       std::vector<std::optional<ckks::Ciphertext>>& values) const {
    if (to.empty()) return;
    dist::Communicator& comm = *options_.communicator;
    const int owner = placed.rank[id];
    const int me = comm.rank();
    if (me != owner && std::find(to.begin(), to.end(), me) == to.end()) return;
    if (me == owner) {
      const ckks::Ciphertext host = ops_.evaluator().download(*values[id]);
      std::uint64_t scale_bits = 0;
      const double scale = host.scale();
      std::memcpy(&scale_bits, &scale, sizeof(scale));
      const std::array<std::uint32_t, 5> header = {static_cast<std::uint32_t>(host.size()),
                                                   static_cast<std::uint32_t>(host.level()),
                                                   static_cast<std::uint32_t>(host.slots()),
                                                   static_cast<std::uint32_t>(scale_bits),
                                                   static_cast<std::uint32_t>(scale_bits >> 32)};
      std::vector<std::uint32_t> words;
      for (const auto& part : host.parts()) {
        for (std::size_t i = 0; i < part.limb_count(); ++i) words.insert(words.end(), part.limb(i).begin(), part.limb(i).end());
      }
      for (const int r : to) {
        comm.send(header, r);
        comm.send(words, r);
      }
      return;
    }
    std::array<std::uint32_t, 5> header{};
    comm.receive(header, owner);
    const auto& context = plan_.program.context();
    const int level = static_cast<int>(header[1]);
    require<CommunicationError>(header[0] >= 2 && header[0] <= 3 && level <= context->max_level(),
                                "executor: rank {} received a malformed value for {} from rank {}", me,
                                plan_.program.describe(id), owner);
    const std::uint64_t scale_bits = header[3] | (static_cast<std::uint64_t>(header[4]) << 32);
    double scale = 0;
    std::memcpy(&scale, &scale_bits, sizeof(scale));
    const auto& basis = context->q_basis(level);
    const std::size_t n = context->ring_degree();
    std::vector<std::uint32_t> words(header[0] * basis->size() * n);
    comm.receive(words, owner);
    std::vector<ring::RnsPoly> parts;
    const std::uint32_t* from = words.data();
    for (std::uint32_t k = 0; k < header[0]; ++k) {
      ring::RnsPoly part(basis, ring::PolyOptions{.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
      for (std::size_t i = 0; i < basis->size(); ++i, from += n) std::copy(from, from + n, part.limb(i).begin());
      parts.push_back(std::move(part));
    }
    values[id] = ops_.evaluator().upload(ckks::Ciphertext(context, std::move(parts), level, scale, header[2]));
  }

  const ckks::Ciphertext& operand(const std::vector<std::optional<ckks::Ciphertext>>& values, NodeId id) const {
    return *values[id];
  }

  ckks::Ciphertext take_or_copy(std::vector<std::optional<ckks::Ciphertext>>& values, NodeId source,
                                NodeId reader, const std::vector<NodeId>& last_use) const {
    if (last_use[source] == reader) return std::move(*values[source]);
    return values[source]->clone();
  }

  ckks::Ciphertext receive(ckks::Ciphertext input, NodeId id) const {
    const Program& program = plan_.program;
    const Node& node = program.node(id);
    // Another context's ciphertext is refused first: its level and slots mean nothing here.
    ckks::require_same_context(program.context(), input.context(), "executor: an input");
    require<LevelError>(input.level() >= node.input_level,
                        "executor: {} arrives at level {}; the plan expects level {} (Plan::input_encoding) or one "
                        "above it on the plan's scale chain",
                        program.describe(id), input.level(), node.input_level);
    require<MismatchError>(input.slots() == node.slots, "executor: {} has {} slots; the program traced {}",
                           program.describe(id), input.slots(), node.slots);
    require<LevelError>(ckks::scales_match(input.scale(), plan_.chain.at(input.level())),
                        "executor: {} has scale {}; the plan expects {} at level {}: encode it with "
                        "Plan::input_encoding",
                        program.describe(id), ckks::format_scale(input.scale()),
                        ckks::format_scale(plan_.chain.at(input.level())), input.level());
    // Above its level (an earlier run's output fed back, say): brought down exactly, as the chain does.
    return ops_.to_level(ops_.on_chain(ops_.evaluator().upload(input)), node.input_level);
  }

  // The first rotation of a hoisting group computes them all; the others wait in `hoisted`.
  ckks::Ciphertext rotate_group(NodeId id, const std::vector<std::optional<ckks::Ciphertext>>& values,
                                std::vector<std::optional<ckks::Ciphertext>>& hoisted) const {
    const HoistGroup& group = plan_.hoisting.groups[static_cast<std::size_t>(plan_.hoisting.group_of[id])];
    std::vector<ckks::Ciphertext> results = ops_.rotate_hoisted(operand(values, group.source), group.steps);
    for (std::size_t i = 1; i < group.rotations.size(); ++i) hoisted[group.rotations[i]] = std::move(results[i]);
    return std::move(results[0]);
  }

  // The plan's plaintext operands, encoded ahead on host threads, for a run without the cache (null: none).
  std::unique_ptr<PlaintextStream> plaintext_stream(const PlainSums& sums) const {
    const unsigned threads =
        options_.encode_threads != 0 ? options_.encode_threads : std::max(1u, std::thread::hardware_concurrency());
    if (threads <= 1) return nullptr;
    std::vector<NodeId> order = plain_nodes(sums);
    if (options_.cache_plaintexts) {  // a full cache streams the rest; otherwise runs fill it
      std::lock_guard lock(cache_mutex_);
      if (!cache_full_) return nullptr;
      std::erase_if(order, [&](NodeId id) { return cache_.contains(planned_key(id)); });
      if (options_.keep_rest_unscaled) {  // those the unscaled plaintexts take (in run order, as runs do)
        std::size_t bytes = unscaled_bytes_;
        std::set<PlainKey> taken;
        std::erase_if(order, [&](NodeId id) {
          const PlainKey key = unscaled_key(id);
          if (unscaled_.contains(key) || taken.contains(key)) return true;
          if (!unscaled_room(bytes, id)) return false;
          bytes += unscaled_bytes_of(id);
          taken.insert(key);
          return true;
        });
      }
    }
    if (order.empty()) return nullptr;
    return std::make_unique<PlaintextStream>(
        std::move(order),
        [this](NodeId id) { return encode_at_planned_level(id); },
        threads, 4 * static_cast<std::size_t>(threads));
  }

  // The nodes with a plaintext operand, in the order a run takes their plaintexts (a sum's products at its root).
  std::vector<NodeId> plain_nodes(const PlainSums& sums) const {
    std::vector<std::pair<NodeId, NodeId>> taken;  // (when, node)
    for (NodeId id = 0; id < plan_.program.size(); ++id) {
      const Op op = plan_.program.node(id).op;
      if (op != Op::multiply_plain && op != Op::add_plain) continue;
      const int sum = sums.sum_of.empty() ? -1 : sums.sum_of[id];
      taken.emplace_back(sum >= 0 ? sums.sums[static_cast<std::size_t>(sum)].root : id, id);
    }
    std::sort(taken.begin(), taken.end());
    std::vector<NodeId> ids;
    for (const auto& [when, id] : taken) ids.push_back(id);
    return ids;
  }

  // A plaintext node's operand on the host, at the level and slots the plan gives its ciphertext operand (what
  // the run will meet; plaintext_for and cached re-encode on a mismatch). Thread-safe.
  ckks::PeriodicPlaintext encode_at_planned_level(NodeId id) const {
    const Node& node = plan_.program.node(id);
    const NodeId source = node.inputs[0];
    return ops_.encode_on_host(node.plain, plan_.nodes[source].held_level, plan_.program.node(source).slots);
  }

  // A plaintext node's operand, encoding's first half, on the host (thread-safe).
  ckks::UnscaledPlaintext unscaled_on_host(NodeId id) const {
    const Node& node = plan_.program.node(id);
    return ops_.unscaled_on_host(node.plain, plan_.program.node(node.inputs[0]).slots);
  }

  // A plaintext operand where the evaluator computes: cached, streamed (uploaded here) or encoded now.
  ckks::Plaintext plaintext_for(NodeId id, const ckks::Ciphertext& a, PlaintextStream* stream) const {
    const Node& node = plan_.program.node(id);
    if (stream != nullptr && stream->streams(id)) {
      const ckks::PeriodicPlaintext p = stream->take(id);
      if (p.level == a.level() && p.slots == a.slots()) return ops_.evaluator().upload(p);
    }
    return ops_.encode(node.plain, a.level(), a.slots());
  }

  ckks::Ciphertext compute(NodeId id, const std::vector<std::optional<ckks::Ciphertext>>& values,
                           PlaintextStream* stream) const {
    const Node& node = plan_.program.node(id);
    const auto& a = operand(values, node.inputs[0]);
    switch (node.op) {
      case Op::add: return ops_.add(a, operand(values, node.inputs[1]));
      case Op::sub: return ops_.sub(a, operand(values, node.inputs[1]));
      case Op::negate: return ops_.negate(a);
      case Op::multiply: return ops_.multiply(a, operand(values, node.inputs[1]));
      case Op::product_sum: {
        std::vector<const ckks::Ciphertext*> factors[2];
        for (std::size_t i = 0; i < node.inputs.size(); ++i) factors[i % 2].push_back(&operand(values, node.inputs[i]));
        return ops_.product_sum(factors[0], factors[1]);
      }
      case Op::multiply_plain: {
        std::optional<ckks::Plaintext> owned;
        return ops_.multiply(a, plaintext_operand(id, a, stream, owned));
      }
      case Op::multiply_constant: return ops_.multiply(a, node.constant.real());
      case Op::add_plain: {
        std::optional<ckks::Plaintext> owned;
        return ops_.add(a, plaintext_operand(id, a, stream, owned));
      }
      case Op::add_constant: return ops_.add(a, node.constant);
      case Op::rotate: return ops_.rotate(a, node.steps);
      case Op::conjugate: return ops_.conjugate(a);
      case Op::bootstrap: return a.clone();  // the refresh itself follows (NodePlan::bootstrap)
      case Op::input:
      case Op::output: break;
    }
    throw InvalidArgument("executor: a node of kind " + std::string(to_string(node.op)) + " has nothing to compute");
  }

  // A sum of plaintext products at its root: every product's operand and plaintext, one evaluator call (or one a
  // part, added, when the plaintexts it encodes for itself pass ExecutorOptions::sum_plaintext_bytes). The
  // plaintexts kept unscaled are encoded together, one batch a part. round_once (RunOptions::round_sums_once):
  // the parts summed unrescaled and their total rescaled once, where the terms share a level, slots and scale
  // (a planned sum's do; otherwise each product is rounded on its own).
  ckks::Ciphertext compute_sum(const PlainSum& sum, const std::vector<std::optional<ckks::Ciphertext>>& values,
                               PlaintextStream* stream, bool round_once) const {
    const std::size_t terms = sum.products.size();
    // Unscaled plaintexts read compact by the products where the backend can (backend::CompactProductSum).
    constexpr bool compact_sums = backend::CompactProductSum<B>;
    std::vector<std::optional<ckks::Plaintext>> owned(terms);  // encoded for this run
    std::vector<const ckks::Ciphertext*> operands(terms);
    std::vector<const ckks::Plaintext*> plains(terms);
    std::vector<std::size_t> deferred;  // the part's terms whose plaintexts are kept unscaled
    std::vector<const ckks::UnscaledPlaintext*> unscaled;
    std::optional<ckks::Ciphertext> total;
    std::size_t owned_bytes = 0, first = 0;
    for (std::size_t t = 0; t < terms; ++t) operands[t] = &operand(values, plan_.program.node(sum.products[t]).inputs[0]);
    round_once = round_once && uniform(operands);
    // Parts rounded once add up off the chain (at the products' scale), exactly.
    const auto add_to_total = [&](ckks::Ciphertext part) {
      if (!total.has_value()) {
        total = std::move(part);
      } else if (round_once) {
        ops_.evaluator().add_inplace(*total, part);
      } else {
        total = ops_.add(*total, part);
      }
    };
    // The part's products: rescaled term by term, or (round_once) not rescaled.
    const auto unscaled_sum = [&](std::span<const ckks::Ciphertext* const> a,
                                  std::span<const ckks::UnscaledPlaintext* const> p) {
      const ckks::Ciphertext& first_term = *a.front();
      return round_once ? ops_.multiply_sum_unrescaled(a, p, first_term.level(), first_term.slots())
                        : ops_.multiply_sum(a, p, first_term.level(), first_term.slots());
    };
    const auto encoded_sum = [&](std::span<const ckks::Ciphertext* const> a,
                                 std::span<const ckks::Plaintext* const> p) {
      return round_once ? ops_.multiply_sum_unrescaled(a, p) : ops_.multiply_sum(a, p);
    };
    const auto add_part = [&](std::size_t end) {
      if (compact_sums && alike(deferred, operands)) {
        // The unscaled terms' products in one call that never writes their plaintexts whole, the others in
        // another: each term is rounded on its own either way, so the sum's words are the same.
        std::vector<const ckks::Ciphertext*> kept_unscaled, encoded;
        std::vector<const ckks::Plaintext*> encoded_plains;
        for (std::size_t t = first, d = 0; t < end; ++t) {
          if (d < deferred.size() && deferred[d] == t) {
            kept_unscaled.push_back(operands[t]);
            ++d;
          } else {
            encoded.push_back(operands[t]);
            encoded_plains.push_back(plains[t]);
          }
        }
        add_to_total(unscaled_sum(kept_unscaled, unscaled));
        if (!encoded.empty()) add_to_total(encoded_sum(encoded, encoded_plains));
      } else {
        encode_deferred(deferred, unscaled, operands, owned, plains);
        const auto count = end - first;
        add_to_total(encoded_sum(std::span(operands).subspan(first, count), std::span(plains).subspan(first, count)));
      }
      for (std::size_t t = first; t < end; ++t) owned[t].reset();
      deferred.clear();
      unscaled.clear();
      owned_bytes = 0;
      first = end;
    };
    for (std::size_t t = 0; t < terms; ++t) {
      const NodeId product = sum.products[t];
      const ckks::Ciphertext& a = *operands[t];
      const PlainSource source = plain_source(product, a);
      if (source.unscaled != nullptr) {
        deferred.push_back(t);
        unscaled.push_back(source.unscaled);
        owned_bytes += kept_compact(*source.unscaled) ? planned_bytes(product) / source.unscaled->gap()
                                                      : planned_bytes(product);
      } else {
        plains[t] = source.cached != nullptr ? source.cached : &(owned[t] = plaintext_for(product, a, stream)).value();
        if (owned[t].has_value()) owned_bytes += bytes_of(*owned[t]);
      }
      if (owned_bytes > options_.sum_plaintext_bytes && t + 1 < terms) add_part(t + 1);
    }
    add_part(terms);
    return round_once ? ops_.rescale_sum(std::move(*total)) : std::move(*total);
  }

  // Whether a sum's operands share a level, slot count and scale, 2 parts each: rounded once, its parts add up
  // unrescaled (their plaintexts are encoded at the operands' level and the chain's scale there).
  static bool uniform(const std::vector<const ckks::Ciphertext*>& operands) {
    const ckks::Ciphertext& a = *operands.front();
    return std::all_of(operands.begin(), operands.end(), [&](const ckks::Ciphertext* c) {
      return c->size() == 2 && c->level() == a.level() && c->slots() == a.slots() && c->scale() == a.scale();
    });
  }

  // Whether a sum reads this unscaled plaintext compact (1/gap of its encoded size, never written whole).
  bool kept_compact(const ckks::UnscaledPlaintext& p) const {
    if constexpr (backend::CompactProductSum<B>) {
      return ops_.evaluator().backend().compact_encoding(p.gap());
    } else {
      return false;
    }
  }

  // Whether the deferred terms' operands share a level and slot count (a sum's do), and there is one.
  static bool alike(const std::vector<std::size_t>& deferred, const std::vector<const ckks::Ciphertext*>& operands) {
    if (deferred.empty()) return false;
    const ckks::Ciphertext& a = *operands[deferred.front()];
    return std::all_of(deferred.begin(), deferred.end(), [&](std::size_t t) {
      return operands[t]->level() == a.level() && operands[t]->slots() == a.slots();
    });
  }

  // The deferred terms' plaintexts encoded from their unscaled forms into owned: one batch when their operands
  // share a level and slot count (a sum's do), else one by one.
  void encode_deferred(const std::vector<std::size_t>& deferred,
                       const std::vector<const ckks::UnscaledPlaintext*>& unscaled,
                       const std::vector<const ckks::Ciphertext*>& operands,
                       std::vector<std::optional<ckks::Plaintext>>& owned,
                       std::vector<const ckks::Plaintext*>& plains) const {
    if (deferred.empty()) return;
    const ckks::Ciphertext& a = *operands[deferred.front()];
    if (alike(deferred, operands)) {
      std::vector<ckks::Plaintext> encoded = ops_.encode(unscaled, a.level(), a.slots());
      for (std::size_t k = 0; k < deferred.size(); ++k) owned[deferred[k]] = std::move(encoded[k]);
    } else {
      for (std::size_t k = 0; k < deferred.size(); ++k) {
        const ckks::Ciphertext& operand = *operands[deferred[k]];
        owned[deferred[k]] = ops_.encode(*unscaled[k], operand.level(), operand.slots());
      }
    }
    for (const std::size_t t : deferred) plains[t] = &*owned[t];
  }

  // After a sum's root: the inputs the sum's members read last (the members' own values were never made).
  void release_sum_inputs(const PlainSums& sums, int index, const std::vector<NodeId>& last_use,
                          std::vector<std::optional<ckks::Ciphertext>>& values) const {
    const PlainSum& sum = sums.sums[static_cast<std::size_t>(index)];
    for (const NodeId member : sum.members) {
      for (const NodeId input : plan_.program.node(member).inputs) {
        if (last_use[input] == sum.root) values[input].reset();
      }
    }
  }

  // The memory plan's last uses with every member of a sum reading at the sum's root (where it is computed): a
  // value a member reads must outlive the nodes between the member and the root, even those that read it last
  // in program order.
  static std::vector<NodeId> fused_last_uses(const Plan& plan, const PlainSums& sums) {
    std::vector<NodeId> last = plan.memory.last_use;
    for (const PlainSum& sum : sums.sums) {
      for (const NodeId member : sum.members) {
        for (const NodeId input : plan.program.node(member).inputs) last[input] = std::max(last[input], sum.root);
      }
    }
    return last;
  }

  // A plaintext node's operand: from the cache (encoded into it on first use while it has room), else streamed or
  // encoded now into `owned`.
  const ckks::Plaintext& plaintext_operand(NodeId id, const ckks::Ciphertext& a, PlaintextStream* stream,
                                           std::optional<ckks::Plaintext>& owned) const {
    const PlainSource source = plain_source(id, a);
    if (source.cached != nullptr) return *source.cached;
    owned = source.unscaled != nullptr ? ops_.encode(*source.unscaled, a.level(), a.slots())
                                       : plaintext_for(id, a, stream);
    return *owned;
  }

  // Where a plaintext node's operand comes from: the cache (encoded into it on first use while it has room), the
  // plaintexts kept unscaled, or neither (null, null: streamed or encoded at each use).
  struct PlainSource {
    const ckks::Plaintext* cached = nullptr;
    const ckks::UnscaledPlaintext* unscaled = nullptr;
  };
  PlainSource plain_source(NodeId id, const ckks::Ciphertext& a) const {
    if (!options_.cache_plaintexts) return {};
    if (stays_unscaled(id)) return {.unscaled = kept_unscaled(id)};
    std::unique_lock lock(cache_mutex_);
    const bool keep = cache_.contains(run_key(id, a)) || (!cache_full_ && room_for(cached_bytes_, id));
    if (!keep) cache_full_ = true;
    lock.unlock();
    if (keep) return {.cached = &cached(id, a)};
    return {.unscaled = kept_unscaled(id)};
  }

  // Node id's plaintext kept unscaled where the evaluator computes (made on first use while there is room), or null:
  // streamed. Entries are never erased, so the pointer outlives the lock.
  const ckks::UnscaledPlaintext* kept_unscaled(NodeId id) const {
    if (!options_.keep_rest_unscaled) return nullptr;
    const PlainKey key = unscaled_key(id);
    {
      std::lock_guard lock(cache_mutex_);
      if (auto it = unscaled_.find(key); it != unscaled_.end()) return &it->second;
      if (!unscaled_room(unscaled_bytes_, id)) return nullptr;
    }
    ckks::UnscaledPlaintext uploaded = ops_.evaluator().upload(unscaled_on_host(id));
    std::lock_guard lock(cache_mutex_);
    auto [it, inserted] = unscaled_.emplace(key, std::move(uploaded));
    if (inserted) unscaled_bytes_ += it->second.bytes();
    return &it->second;
  }
  // ExecutorOptions::unscaled_period_limit: node id's plaintext is kept unscaled rather than cached encoded.
  bool stays_unscaled(NodeId id) const {
    return options_.keep_rest_unscaled && plan_.program.node(id).plain.period() <= options_.unscaled_period_limit;
  }
  bool unscaled_room(std::size_t bytes, NodeId id) const {
    return options_.unscaled_bytes == 0 || bytes + unscaled_bytes_of(id) <= options_.unscaled_bytes;
  }
  std::size_t unscaled_bytes_of(NodeId id) const { return 2 * plan_.program.node(id).plain.period() * sizeof(double); }

  // Whether a cache holding `bytes` may take node id's plaintext too.
  bool room_for(std::size_t bytes, NodeId id) const {
    return options_.plaintext_cache_bytes == 0 || bytes + planned_bytes(id) <= options_.plaintext_cache_bytes;
  }
  // A plaintext node's encoding at its planned level: limbs x N words.
  std::size_t planned_bytes(NodeId id) const {
    const auto& context = plan_.program.context();
    const NodeId source = plan_.program.node(id).inputs[0];
    return context->parameters().limbs_at(plan_.nodes[source].held_level) * context->ring_degree() *
           sizeof(std::uint32_t);
  }
  static std::size_t bytes_of(const ckks::Plaintext& p) {
    return p.poly().limb_count() * p.poly().n() * sizeof(std::uint32_t);
  }

  // The node's plaintext at its operand's level and slots, encoded on first use (plans fix the level, so one per
  // plaintext). Entries are never erased, so the reference outlives the lock.
  const ckks::Plaintext& cached(NodeId id, const ckks::Ciphertext& operand) const {
    const Node& node = plan_.program.node(id);
    const PlainKey key = run_key(id, operand);
    std::lock_guard lock(cache_mutex_);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      it = cache_.emplace(key, ops_.encode(node.plain, operand.level(), operand.slots())).first;
      cached_bytes_ += bytes_of(it->second);
      ++encodings_;
    }
    return it->second;
  }

  // A plaintext as the executor holds it (see cache_ and unscaled_).
  struct PlainKey {
    const void* storage = nullptr;  // graph::PlainVector::storage(): copies share it
    std::size_t slots = 0;          // expanded over
    int level = -1;                 // encoded at (with the chain's scale there); -1: unscaled
    auto operator<=>(const PlainKey&) const = default;
  };
  // Node id's plaintext encoded at its planned level, at the level of the operand a run meets, and unscaled.
  PlainKey planned_key(NodeId id) const {
    const NodeId source = plan_.program.node(id).inputs[0];
    return {plan_.program.node(id).plain.storage(), plan_.program.node(source).slots, plan_.nodes[source].held_level};
  }
  PlainKey run_key(NodeId id, const ckks::Ciphertext& operand) const {
    return {plan_.program.node(id).plain.storage(), operand.slots(), operand.level()};
  }
  PlainKey unscaled_key(NodeId id) const {
    PlainKey key = planned_key(id);
    key.level = -1;
    return key;
  }

  const Plan& plan_;
  ChainOps<B> ops_;
  ExecutorOptions options_;
  mutable std::mutex cache_mutex_;
  // Plaintexts by their vector's storage, slots and level, not by node: a matrix's diagonal that multiplies
  // several ciphertexts (graph::BsgsProduct) is held once.
  mutable std::map<PlainKey, ckks::Plaintext> cache_;
  mutable std::size_t encodings_ = 0;
  mutable std::size_t cached_bytes_ = 0;
  mutable bool cache_full_ = false;  // a plaintext found no room: the rest are kept unscaled or streamed
  mutable std::map<PlainKey, ckks::UnscaledPlaintext> unscaled_;  // ExecutorOptions::keep_rest_unscaled
  mutable std::size_t unscaled_bytes_ = 0;
  PlainSums sums_;
  std::vector<NodeId> fused_last_use_;
  PlainSums no_sums_;  // runs node by node
};

}  // namespace cerium::graph
