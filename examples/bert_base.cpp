// BERT-Base (12 layers, hidden 768, 12 heads, FFN 3072) on 128 encrypted tokens, with seeded weights at the
// published shapes: the tokens in 4 ciphertexts of 32 rows (stride 1024: the FFN in 4 column blocks of 768), each
// layer traced and planned as its own stage (graph::StagedPlanner: inputs where the last layer left them,
// calibration carried forward), bootstraps placed by the planner, run on the GPU when there is one. The hidden
// states are checked against the polynomial twin and the exact plaintext reference (nn/bert.hpp).
//
//   cerium_example_bert_base                 plan, then run on the GPU (or print the CPU estimate)
//   --plan-only                              trace and plan every layer; print the plans' figures
//   --cpu                                    run on the CPU even so (days at full size)
//   --layers L --tokens T                    12 and 128
//   --hidden H --heads A --ffn F             768, 12 and 3072 (smaller shapes for a quick look)
//   --rows R --ffn-blocks B                  token rows per ciphertext (32) and FFN column blocks (4)
//   --seed S                                 the weights' and tokens' seed (1)
//   --gelu-degree D                          the GELU interpolant's degree (default: from its calibrated bound,
//                                            nn::activation_degree)
//   --explain FILE                           write every layer's plan to FILE, a row per node (graph::explain):
//                                            levels, scales, where the bootstraps went
//   --magnitude-limit M                      bootstrap only values up to M on the calibration (default 2, doubled
//                                            by the planner until a placement exists; docs/transformers.md)
//   --noise BITS|auto                        the layers simulated one after another with every bootstrapped slot off
//                                            by up to 2^-BITS (times its bootstrap shift) and every rescale and key
//                                            switch rounding as the parameters make it: the error a run with
//                                            bootstraps of that precision would reach (auto: 21 bits less log2 of
//                                            the bootstrapper's bound, within about a bit of a GPU run)
//   --unpaired-bootstraps                    refresh every value alone (default: independent refreshes two at a
//                                            time, graph::PlanOptions::pair_bootstraps)
//   --per-term-sums                          each plaintext product of a matrix product's sums rescaled on its own
//                                            (default: each sum rounded once, graph::RunOptions::round_sums_once)
//   --narrow-levels                          presets::bootstrappable_n16_narrow: 15 levels of ~2^30 between
//                                            bootstraps instead of 8 of 2^56 (fewer bootstraps, fewer bits)
//   --profile                                a second, profiled run: the per-layer-type table
//   --capture [K]                            on a GPU, record the layers' runs as CUDA graphs (K nodes to a graph;
//                                            default 20000) and time a replay against the run issued node by node
//                                            (the same words), then a replay on a fresh encryption (the twin's error)
//   --placement R,R,...                      with --plan-only: the layers placed over R ranks (ciphertext-parallel)
//                                            next to limb-parallel sharding: bytes moved, predicted times, per
//                                            attention and FFN (graph/passes/rank_placement.hpp)

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/passes/rank_placement.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/staged_planner.hpp"
#include "cerium/nn/encrypted_bert.hpp"
#include "layer_profile.hpp"
#include "run_planned.hpp"
#include "run_stages.hpp"
#include "same_words.hpp"
#include "transformer_support.hpp"

using namespace cerium;

namespace {

struct Options {
  nn::BertConfig config{.layers = 12, .hidden = 768, .heads = 12, .ffn = 3072};
  std::size_t tokens = 128, rows = 32, ffn_blocks = 4;
  std::uint64_t seed = 1;
  int gelu_degree = 0;  // 0: nn::activation_degree's choice from the calibrated bound
  double magnitude_limit = 0;  // 0: graph::PlanOptions' default
  double noise_bits = 0;       // --noise: the plans simulated with bootstraps off by 2^-bits
  std::string explain_path;  // --explain: every layer's plan as a table (graph::explain), layer after layer
  bool plan_only = false, cpu = false, profile = false, capture = false;
  bool precise_bootstraps = false;  // --precise-bootstraps: every bootstrap precise (graph::PlanOptions)
  bool paired_bootstraps = true;    // --unpaired-bootstraps: each value refreshed alone
  bool round_sums_once = true;  // --per-term-sums: graph::RunOptions::round_sums_once off
  bool precise_softmax = false;     // --precise-softmax: softmax's bootstraps only (nn::EncryptedBertOptions)
  bool narrow_levels = false;       // --narrow-levels: presets::bootstrappable_n16_narrow
  std::size_t segment_nodes = 20000;
  std::vector<int> placement_ranks;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto number = [&] { return std::strtoull(argv[++i], nullptr, 10); };
    const bool has_value = i + 1 < argc;
    if (arg == "--plan-only") o.plan_only = true;
    else if (arg == "--cpu") o.cpu = true;
    else if (arg == "--precise-bootstraps") o.precise_bootstraps = true;
    else if (arg == "--precise-softmax") o.precise_softmax = true;
    else if (arg == "--unpaired-bootstraps") o.paired_bootstraps = false;
    else if (arg == "--per-term-sums") o.round_sums_once = false;
    else if (arg == "--narrow-levels") o.narrow_levels = true;
    else if (arg == "--profile") o.profile = true;
    else if (arg == "--capture") {
      o.capture = true;
      if (i + 1 < argc && argv[i + 1][0] != '-') o.segment_nodes = std::strtoull(argv[++i], nullptr, 10);
    }
    else if (arg == "--layers" && has_value) o.config.layers = number();
    else if (arg == "--tokens" && has_value) o.tokens = number();
    else if (arg == "--hidden" && has_value) o.config.hidden = number();
    else if (arg == "--heads" && has_value) o.config.heads = number();
    else if (arg == "--ffn" && has_value) o.config.ffn = number();
    else if (arg == "--rows" && has_value) o.rows = number();
    else if (arg == "--ffn-blocks" && has_value) o.ffn_blocks = number();
    else if (arg == "--seed" && has_value) o.seed = number();
    else if (arg == "--gelu-degree" && has_value) o.gelu_degree = static_cast<int>(number());
    else if (arg == "--explain" && has_value) o.explain_path = argv[++i];
    else if (arg == "--magnitude-limit" && has_value) o.magnitude_limit = std::strtod(argv[++i], nullptr);
    else if (arg == "--noise" && has_value) o.noise_bits = noise_bits_argument(argv[++i]);
    else if (arg == "--placement" && has_value) {
      for (const auto& r : split_list(argv[++i])) o.placement_ranks.push_back(std::stoi(r));
    } else return false;
  }
  return true;
}

// Every layer placed over R ranks, the figures summed over the layers: bytes by attention and FFN.
void print_placements(const std::vector<graph::Plan>& plans, const std::vector<int>& ranks) {
  const std::vector<graph::SegmentBoundary> segments = {{"attention block", "attention"}, {"encoder layer", "ffn"}};
  for (const int r : ranks) {
    graph::RankPlacement total;
    for (const auto& p : plans) {
      const graph::RankPlacement layer = graph::place_on_ranks(p, {.ranks = r}, segments);
      if (total.segments.empty()) {
        total = layer;
        continue;
      }
      total.moved_bytes += layer.moved_bytes;
      total.limb_parallel_bytes += layer.limb_parallel_bytes;
      total.makespan_seconds += layer.makespan_seconds;
      total.serial_seconds += layer.serial_seconds;
      total.limb_parallel_seconds += layer.limb_parallel_seconds;
      for (std::size_t i = 0; i < total.busy_seconds.size(); ++i) total.busy_seconds[i] += layer.busy_seconds[i];
      for (std::size_t i = 0; i < total.segments.size() && i < layer.segments.size(); ++i) {
        total.segments[i].nodes += layer.segments[i].nodes;
        total.segments[i].moved_bytes += layer.segments[i].moved_bytes;
        total.segments[i].limb_parallel_bytes += layer.segments[i].limb_parallel_bytes;
      }
    }
    fmt::print("{}", graph::explain_placement(total));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Options o;
  if (!parse(argc, argv, o)) {
    fmt::print(stderr,
               "usage: {} [--plan-only] [--cpu] [--profile] [--capture [K]] [--layers L] [--tokens T] [--hidden H] [--heads A] "
               "[--ffn F] [--rows R] [--ffn-blocks B] [--seed S] [--gelu-degree D] [--explain FILE]\n"
               "       [--magnitude-limit M] [--noise BITS|auto] [--precise-bootstraps] [--precise-softmax] [--unpaired-bootstraps] [--per-term-sums] [--narrow-levels]\n",
               argv[0]);
    return 2;
  }
  require(o.rows >= 1 && o.tokens % o.rows == 0, "--tokens {} is not a multiple of --rows {}", o.tokens, o.rows);
  auto start = std::chrono::steady_clock::now();
  const nn::BertWeights weights = nn::BertWeights::seeded(o.config, o.seed);
  std::mt19937_64 rng(o.seed + 1000);
  std::normal_distribution<double> unit(0, 1);  // token embeddings after BERT's embedding LayerNorm
  nn::Matrix x = nn::Matrix::zeros(o.tokens, o.config.hidden);
  for (double& v : x.values) v = unit(rng);
  const nn::Matrix exact = nn::bert_reference(weights, x);
  const nn::EncryptedBert model(weights, nn::bert_ranges(weights, {x}),
                                {.rows = o.rows, .blocks = o.tokens / o.rows, .ffn_blocks = o.ffn_blocks,
                                 .activation_degree = o.gelu_degree, .precise_softmax = o.precise_softmax});
  fmt::print("BERT: {} layers, hidden {}, {} heads, FFN {}; {} tokens in {} ciphertexts of {} rows (stride {}); "
             "seeded weights, reference computed in {:.1f} s\n",
             o.config.layers, o.config.hidden, o.config.heads, o.config.ffn, o.tokens, model.blocks(),
             model.layout().rows, model.layout().stride, seconds_since(start));
  for (std::size_t l = 0; l < model.layers().size(); ++l) {
    const auto& gelu = model.layers()[l].functions().activation;
    fmt::print("layer {:2}: GELU on [-{:.2f}, {:.2f}], degree {}, depth {}, max error {:.2e}\n", l,
               gelu.config().bound, gelu.config().bound, gelu.degree(), gelu.depth(), gelu.max_error());
  }

  const auto context = ckks::Context::create(o.narrow_levels ? ckks::presets::bootstrappable_n16_narrow()
                                                             : ckks::presets::bootstrappable_n16());
  const std::size_t slots = model.layout().slots();
  const boot::BootstrapConfig boot_config{.slots = slots};
  graph::PlanOptions options = bootstrapped_plan_options(context, slots, o.magnitude_limit);
  options.precise_bootstraps = o.precise_bootstraps;
  options.pair_bootstraps = o.paired_bootstraps;
  std::vector<graph::SlotValues> sample;
  for (const auto& block : model.pack_blocks(x)) sample.emplace_back(block.begin(), block.end());
  graph::StagedPlanner planner(context, options, std::vector<graph::StageInput>(model.blocks(), {.slots = slots}),
                               {sample});
  std::vector<graph::Plan> plans;
  std::size_t nodes = 0, key_switches = 0, peak_bytes = 0;
  int bootstraps = 0;
  for (std::size_t l = 0; l < model.layers().size(); ++l) {
    start = std::chrono::steady_clock::now();
    plans.push_back(planner.next([&](graph::Tracer& t, std::span<const graph::Value> in) {
      return model.layers()[l].forward<graph::Tracer>(t, in);
    }));
    const graph::Plan& p = plans.back();
    nodes += p.program.size();
    key_switches += p.key_switches();
    bootstraps += p.bootstraps();
    peak_bytes = std::max(peak_bytes, p.memory.peak_bytes);
    fmt::print("layer {:2}: {} nodes, {} key switches, {} bootstraps ({} precise, {} pairs: {} run; largest value "
               "{:.2f}), planned in {:.1f} s (calibration {:.1f} s, placement {:.1f} s)\n",
               l, p.program.size(), p.key_switches(), p.bootstraps(), p.precise_bootstraps(), p.bootstrap_pairs(),
               p.bootstrap_runs(), p.bootstrap_magnitude, seconds_since(start), p.timings.simulation,
               p.timings.placement);
    if (!o.explain_path.empty()) {
      write_explain(o.explain_path, p, fmt::format("# layer {}", l), l == 0);
    }
  }
  fmt::print("{}", graph::summary(plans.front()));
  fmt::print("all layers: {} nodes, {} key switches, {} bootstraps; peak live ciphertexts {:.2f} GiB; host memory "
             "peak {:.2f} GiB\n",
             nodes, key_switches, bootstraps, peak_bytes / 1073741824.0, peak_host_gib());
  // The twin's hidden states are the planner's last calibration samples: the plans simulated on x.
  std::vector<std::vector<std::complex<double>>> twin_blocks;
  for (const auto& block : planner.samples().front()) twin_blocks.emplace_back(block.begin(), block.end());
  const nn::Matrix twin = model.unpack_blocks(twin_blocks);
  fmt::print("polynomial twin against the exact reference: max error {:.3e}\n", max_difference(twin, exact));
  if (o.noise_bits < 0) o.noise_bits = simulated_noise_bits(plans);  // --noise auto
  if (o.noise_bits > 0) {
    // Each layer on the last one's noisy outputs (the stages' inputs are the previous stage's outputs, in order).
    std::vector<graph::SlotValues> values = sample;
    for (std::size_t l = 0; l < plans.size(); ++l) {
      values = graph::simulate_outputs_noisy(
          plans[l], values, run_noise(plans[l], o.noise_bits, l + 1));
    }
    std::vector<std::vector<std::complex<double>>> noisy_blocks;
    for (const auto& block : values) noisy_blocks.emplace_back(block.begin(), block.end());
    const double error = max_difference(model.unpack_blocks(noisy_blocks), twin);
    fmt::print("bootstraps off by 2^-{:g}: hidden states {:.3e} from the twin ({:.1f} bits)\n", o.noise_bits, error,
               -std::log2(error));
  }
  print_placements(plans, o.placement_ranks);
  if (o.plan_only) return 0;

  const ckks::KeyGenerator keygen(context);
  return run_planned(plans, boot_config, keygen, o.cpu, [&](const auto& evaluator, const auto& bootstrapper) {
    const ckks::Encoder encoder(context);
    const ckks::Encryptor encryptor(keygen.public_key());
    const auto packed = model.pack_blocks(x);
    const auto encrypt_tokens = [&] {  // each call fresh randomness
      std::vector<ckks::Ciphertext> out;
      for (std::size_t b = 0; b < packed.size(); ++b) {
        out.push_back(evaluator.upload(encryptor.encrypt(encoder.encode(packed[b], plans.front().input_encoding(b)))));
      }
      return out;
    };
    std::vector<ckks::Ciphertext> inputs = encrypt_tokens();
    std::vector<ckks::Ciphertext> again, recorded;
    for (const auto& c : inputs) {
      if (o.profile) again.push_back(c.clone());
      if (o.capture) recorded.push_back(c.clone());
    }
    // The executors and their plaintexts made once, before the timed run (the profiled run reuses them).
    StagedExecutors<std::decay_t<decltype(evaluator.backend())>> stages(plans, evaluator, bootstrapper,
                                                                        {.round_sums_once = o.round_sums_once});
    stages.prepare();
    const StagedRun run = stages.run(std::move(inputs));
    fmt::print("encrypted BERT: {:.3f} s for {} layers ({:.3f} s a layer)\n", run.seconds, plans.size(),
               run.seconds / static_cast<double>(plans.size()));
    const ckks::Decryptor decryptor(keygen.secret_key());
    const auto hidden_of = [&](const std::vector<ckks::Ciphertext>& outputs) {
      std::vector<std::vector<std::complex<double>>> slots_out;
      for (const auto& c : outputs) slots_out.push_back(encoder.decode(decryptor.decrypt(evaluator.download(c))));
      return model.unpack_blocks(slots_out);
    };
    if (o.capture) {
      // Recorded once (another run node by node, then the capture), replayed on the same input: the same words.
      const double seconds = stages.capture(recorded, o.segment_nodes);
      if (stages.captured()) {
        fmt::print("layers recorded as CUDA graphs in {:.1f} s\n", seconds);
        const StagedRun replay = stages.run(std::move(recorded));
        bool same = replay.outputs.size() == run.outputs.size();
        for (std::size_t b = 0; same && b < run.outputs.size(); ++b) {
          same = same_words(evaluator.download(replay.outputs[b]), evaluator.download(run.outputs[b]));
        }
        fmt::print("encrypted BERT replayed: {:.3f} s for {} layers ({:.3f} s a layer); the same words: {}\n",
                   replay.seconds, plans.size(), replay.seconds / static_cast<double>(plans.size()),
                   same ? "yes" : "NO");
        if (!same) return 1;
        // The graphs serve any input of the recorded shape: the tokens encrypted again (fresh randomness), replayed
        // and decrypted, against the twin.
        const StagedRun other = stages.run(encrypt_tokens());
        const double other_error = max_difference(hidden_of(other.outputs), twin);
        fmt::print("encrypted BERT replayed on a fresh encryption: {:.3f} s; against the twin {:.3e} ({:.1f} bits)\n",
                   other.seconds, other_error, -std::log2(other_error));
        if (other_error >= 0.05) return 1;
      }
    }
    const nn::Matrix hidden = hidden_of(run.outputs);
    const double error = max_difference(hidden, twin);
    fmt::print("hidden states: against the twin {:.3e} ({:.1f} bits), against the exact reference {:.3e}\n", error,
               -std::log2(error), max_difference(hidden, exact));
    if (o.profile) {
      LayerProfile table(plans.front().program);
      stages.run(std::move(again), &table);
      fmt::print("profiled run (the device waited for after each node):\n");
      table.print();
    }
    return error < 0.05 ? 0 : 1;
  });
}
