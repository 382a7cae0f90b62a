// Llama-3-8B decoder blocks (hidden 4096, 32 query and 8 key-value heads, FFN 14336) on 128 encrypted tokens, with
// seeded weights at the published shapes. Each block is a stage of its own (graph::StagedPlanner): its weights
// are drawn, calibrated, laid out on rows, traced and planned on a host thread while the previous block runs on
// the device, then run and dropped, so the host holds one or two blocks' weights at a time whatever the depth.
// The tokens sit in 16 ciphertexts of 8 rows (stride 4096: the FFN in 4 column blocks of 3584). The hidden
// states are checked against the polynomial twin and the exact plaintext reference (nn/llama.hpp).
//
//   cerium_example_llama                     one block: plan, then run on the GPU (or print the CPU estimate)
//   --plan-only                              trace and plan every block; print the plans' figures
//   --cpu                                    run on the CPU even so (days at full size)
//   --attention-only                         each block's first half alone, x + attention(norm(x)) (the twin checks it)
//   --explain FILE                           write every block's plan to FILE, a row per node (graph::explain)
//   --noise-bits B|auto                      also run each plan on the host with every bootstrapped value off by up
//                                            to 2^-B times its magnitude (graph::simulate_outputs_noisy) and the
//                                            rescales' and key switches' rounding (graph::rounding_noise): how far
//                                            they carry the hidden states from the twin (the profile: bootstraps;
//                                            auto: 21 bits less log2 of the bound the block's bootstrapper needs)
//   --noise-profile K                        with --noise-bits: the bootstraps split in K stretches of the block,
//                                            each stretch's noise alone: where errors grow
//   --noise-range A:B                        the profile over nodes A .. B - 1 only
//   --layers L --tokens T                    1 and 128
//   --hidden H --heads A --kv-heads K --ffn F   4096, 32, 8 and 14336 (smaller shapes for a quick look)
//   --rows R --ffn-blocks B                  token rows per ciphertext (8) and FFN column blocks (4)
//   --seed S                                 the weights' and tokens' seed (1)
//   --narrow-levels                          presets::bootstrappable_n16_narrow: 15 levels of ~2^30 between
//                                            bootstraps instead of 8 of 2^56 (fewer bootstraps, fewer bits)
//   --magnitude-limit M                      bootstrap only values up to M on the calibration (default 2, doubled
//                                            by the planner until a placement exists; docs/transformers.md)
//   --unpaired-bootstraps                    refresh every value alone (default: independent refreshes two at a
//                                            time, graph::PlanOptions::pair_bootstraps; precise ones as pairs too)
//   --per-term-sums                          each plaintext product of a matrix product's sums rescaled on its own
//                                            (default: each sum rounded once, graph::RunOptions::round_sums_once)

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/core/error.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/staged_planner.hpp"
#include "cerium/nn/encrypted_llama.hpp"
#include "cerium/nn/row_blocks.hpp"
#include "run_planned.hpp"
#include "run_stages.hpp"
#include "transformer_support.hpp"

using namespace cerium;

namespace {

struct Options {
  nn::LlamaConfig config{.layers = 1};
  std::size_t tokens = 128, rows = 8, ffn_blocks = 4;
  std::uint64_t seed = 1;
  double magnitude_limit = 0;  // 0: graph::PlanOptions' default
  double noise_bits = 0;       // --noise-bits: 0 for no noisy simulation
  std::size_t noise_profile = 0;  // --noise-profile: stretches of the block to add noise to one at a time
  std::size_t noise_first = 0, noise_last = 0;  // --noise-range A:B: the profile's nodes (0:0 all)
  bool plan_only = false, cpu = false;
  // Every bootstrap precise (graph::PlanOptions; --single-bootstraps: none): a block keeps 18 bits of its twin
  // instead of 8 (simulated), for twice the bootstraps' time.
  bool precise_bootstraps = true;
  bool paired_bootstraps = true;  // --unpaired-bootstraps: each value refreshed alone (graph::PlanOptions)
  bool round_sums_once = true;  // --per-term-sums: graph::RunOptions::round_sums_once off
  bool precise_softmax = false;  // --precise-softmax: softmax's bootstraps only (nn::SoftmaxTolerances)
  bool narrow_levels = false;    // --narrow-levels: presets::bootstrappable_n16_narrow
  bool attention_only = false;  // each block's first half alone (x + attention(norm(x))), checked on the twin
  std::string explain_path;     // --explain: every block's plan as a table (graph::explain), block after block
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto number = [&] { return std::strtoull(argv[++i], nullptr, 10); };
    const bool has_value = i + 1 < argc;
    if (arg == "--plan-only") o.plan_only = true;
    else if (arg == "--cpu") o.cpu = true;
    else if (arg == "--single-bootstraps") o.precise_bootstraps = false;
    else if (arg == "--unpaired-bootstraps") o.paired_bootstraps = false;
    else if (arg == "--per-term-sums") o.round_sums_once = false;
    else if (arg == "--precise-softmax") o.precise_softmax = true;
    else if (arg == "--narrow-levels") o.narrow_levels = true;
    else if (arg == "--attention-only") o.attention_only = true;
    else if (arg == "--explain" && has_value) o.explain_path = argv[++i];
    else if (arg == "--layers" && has_value) o.config.layers = number();
    else if (arg == "--tokens" && has_value) o.tokens = number();
    else if (arg == "--hidden" && has_value) o.config.hidden = number();
    else if (arg == "--heads" && has_value) o.config.heads = number();
    else if (arg == "--kv-heads" && has_value) o.config.kv_heads = number();
    else if (arg == "--ffn" && has_value) o.config.ffn = number();
    else if (arg == "--rows" && has_value) o.rows = number();
    else if (arg == "--ffn-blocks" && has_value) o.ffn_blocks = number();
    else if (arg == "--seed" && has_value) o.seed = number();
    else if (arg == "--magnitude-limit" && has_value) o.magnitude_limit = std::strtod(argv[++i], nullptr);
    else if (arg == "--noise-bits" && has_value) o.noise_bits = noise_bits_argument(argv[++i]);
    else if (arg == "--noise-profile" && has_value) o.noise_profile = number();
    else if (arg == "--noise-range" && has_value) {
      char* end = nullptr;
      o.noise_first = std::strtoull(argv[++i], &end, 10);
      o.noise_last = *end == ':' ? std::strtoull(end + 1, nullptr, 10) : 0;
    }
    else return false;
  }
  return true;
}

// Block by block: its weights drawn and calibrated on the exact reference's input to it, laid out, traced and
// planned; the weights are gone when this returns (the plan keeps the diagonals it needs).
class BlockPlanner {
 public:
  BlockPlanner(const Options& o, graph::StagedPlanner& planner, nn::Matrix x, std::vector<graph::SlotValues> noisy)
      : o_(o), planner_(planner), exact_(std::move(x)), noisy_(std::move(noisy)) {}

  graph::Plan next(std::size_t l) {
    const auto start = std::chrono::steady_clock::now();
    const nn::LlamaLayerWeights weights = nn::LlamaWeights::seeded_layer(o_.config, o_.seed, l);
    std::vector<nn::Matrix> next;
    const nn::LlamaLayerRanges ranges = nn::llama_layer_ranges(weights, o_.config, {exact_}, 0, &next);
    exact_ = std::move(next.front());
    const nn::LlamaDecoderLayer layer = nn::encrypted_llama_layer(
        weights, o_.config, ranges,
        {.rows = o_.rows, .blocks = o_.tokens / o_.rows, .ffn_blocks = o_.ffn_blocks,
         .softmax = {.precise_bootstraps = o_.precise_softmax}});
    const auto& softmax = layer.functions().softmax;
    fmt::print("block {:2}: scores in [{:.2f}, {:.2f}], lowest row maximum {:.2f}: softmax of score / 2^{} squared "
               "back {} times; SiLU inputs within {:.2f}\n",
               l, ranges.scores.lower, ranges.scores.upper, ranges.scores.lowest_row_max, softmax.squarings,
               softmax.squarings, ranges.activation_bound);
    const std::vector<graph::SlotValues> inputs = o_.noise_profile > 0 ? planner_.samples().front()
                                                                        : std::vector<graph::SlotValues>{};
    graph::Plan plan = planner_.next([&](graph::Tracer& t, std::span<const graph::Value> in) {
      return o_.attention_only ? layer.forward_attention<graph::Tracer>(t, in) : layer.forward<graph::Tracer>(t, in);
    });
    fmt::print("block {:2}: {} nodes, {} key switches, {} bootstraps ({} precise, {} pairs: {} run; largest value "
               "{:.2f}), drawn and planned in {:.1f} s (the plan's passes {:.1f} s, calibration {:.1f} s of them)\n",
               l, plan.program.size(), plan.key_switches(), plan.bootstraps(), plan.precise_bootstraps(),
               plan.bootstrap_pairs(), plan.bootstrap_runs(), plan.bootstrap_magnitude, seconds_since(start),
               plan.timings.total(), plan.timings.simulation);
    if (!o_.explain_path.empty()) {  // first: the noise reports below take minutes at full size
      write_explain(o_.explain_path, plan, fmt::format("# block {}", l), l == 0);
    }
    // --noise-bits auto: the bootstraps' noise relative to the bound this block needs (simulated_noise_bits).
    const double bits = o_.noise_bits < 0 ? simulated_noise_bits(std::span(&plan, 1)) : o_.noise_bits;
    if (bits > 0) report_noise(plan, l, bits);
    if (bits > 0 && o_.noise_profile > 0) report_noise_profile(plan, inputs, bits);
    return plan;
  }
  const nn::Matrix& exact() const { return exact_; }  // the reference's output of the blocks planned so far

 private:
  // The block run on the host on the last block's noisy outputs, every bootstrapped value off by up to 2^-B of
  // its magnitude and every rescale and key switch rounding as the parameters make it (graph::rounding_noise):
  // its outputs' distance from the twin's (the planner's calibration outputs of this block).
  void report_noise(const graph::Plan& plan, std::size_t l, double bits) {
    noisy_ = graph::simulate_outputs_noisy(
        plan, noisy_, run_noise(plan, bits, l + 1));
    const double error = distance_from_twin(noisy_);
    fmt::print("block {:2}: bootstraps off by 2^-{:g}: outputs {:.3e} from the twin ({:.1f} bits)\n", l, bits,
               error, -std::log2(error));
  }

  double distance_from_twin(const std::vector<graph::SlotValues>& values) const {
    double error = 0;
    const auto& twin = planner_.samples().front();
    for (std::size_t b = 0; b < values.size(); ++b) {
      for (std::size_t i = 0; i < values[b].size(); ++i) error = std::max(error, std::abs(values[b][i] - twin[b][i]));
    }
    return error;
  }

  // The bootstraps in K stretches of equal count, in the plan's order (by bootstrap epoch when they pair); each
  // stretch's noise alone, on the block's exact inputs, with the first labelled node of the stretch to say where in
  // the block it lies.
  void report_noise_profile(const graph::Plan& plan, const std::vector<graph::SlotValues>& inputs,
                            double bits) const {
    std::vector<graph::NodeId> bootstrapped;
    for (graph::NodeId id = 0; id < plan.nodes.size(); ++id) {
      const bool in_range = o_.noise_last == 0 || (id >= o_.noise_first && id < o_.noise_last);
      if (plan.nodes[id].bootstrap && in_range) bootstrapped.push_back(id);
    }
    const std::size_t k = std::min(o_.noise_profile, bootstrapped.size());
    const auto start = [&](std::size_t s) { return s * bootstrapped.size() / k; };  // stretch s's first bootstrap
    for (std::size_t s = 0; s < k; ++s) {
      const graph::NodeId first = bootstrapped[start(s)];
      const graph::NodeId last = s + 1 == k ? bootstrapped.back() + 1 : bootstrapped[start(s + 1)];
      std::string label;
      double largest = 0;
      for (graph::NodeId id = first; id < last; ++id) {
        if (label.empty() && !plan.program.node(id).name.empty()) label = plan.program.node(id).name;
        if (plan.nodes[id].bootstrap) largest = std::max(largest, plan.nodes[id].magnitude);
      }
      const auto noisy = graph::simulate_outputs_noisy(
          plan, inputs,
          {.absolute = std::exp2(-bits), .scaled_by_magnitude = true, .seed = s + 1, .first = first,
           .last = last});
      const double error = distance_from_twin(noisy);
      fmt::print("  nodes {:>8} .. {:<8} ({:24}): {:4} bootstraps of |x| <= {:6.2f}: outputs {:.2e} off ({:.1f} bits)\n",
                  first, last, label, start(s + 1) - start(s), largest, error,
                  -std::log2(error));
    }
  }

  const Options& o_;
  graph::StagedPlanner& planner_;
  nn::Matrix exact_;
  std::vector<graph::SlotValues> noisy_;  // --noise-bits: the noisy simulation's outputs of the last block
};

}  // namespace

int run_llama(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    fmt::print(stderr,
               "usage: {} [--plan-only] [--cpu] [--attention-only] [--single-bootstraps] [--unpaired-bootstraps] [--per-term-sums] [--precise-softmax] [--narrow-levels] "
               "[--layers L] [--tokens T] [--hidden H] [--heads A] "
               "[--kv-heads K] [--ffn F] [--rows R] [--ffn-blocks B] [--seed S] [--magnitude-limit M] "
               "[--explain FILE] [--noise-bits B|auto] [--noise-profile K] [--noise-range A:B]\n",
               argv[0]);
    return 2;
  }
  require(o.rows >= 1 && o.tokens % o.rows == 0, "--tokens {} is not a multiple of --rows {}", o.tokens, o.rows);
  const nn::EncryptedLlamaOptions layout_options{.rows = o.rows, .blocks = o.tokens / o.rows,
                                                 .ffn_blocks = o.ffn_blocks};
  const nn::RowLayout layout = nn::llama_layout(o.config, layout_options);
  std::mt19937_64 rng(o.seed + 1000);
  std::normal_distribution<double> unit(0, 1);
  nn::Matrix x = nn::Matrix::zeros(o.tokens, o.config.hidden);
  for (double& v : x.values) v = unit(rng);
  fmt::print("Llama: {} blocks, hidden {}, {} query and {} key-value heads, FFN {}; {} tokens in {} ciphertexts of "
             "{} rows (stride {}); seeded weights\n",
             o.config.layers, o.config.hidden, o.config.heads, o.config.kv_heads, o.config.ffn, o.tokens,
             layout_options.blocks, layout.rows, layout.stride);

  const auto context = ckks::Context::create(o.narrow_levels ? ckks::presets::bootstrappable_n16_narrow()
                                                             : ckks::presets::bootstrappable_n16());
  const std::size_t slots = layout.slots();
  const boot::BootstrapConfig boot_config{.slots = slots};
  graph::PlanOptions options = bootstrapped_plan_options(context, slots, o.magnitude_limit);
  options.precise_bootstraps = o.precise_bootstraps;
  options.pair_bootstraps = o.paired_bootstraps;
  std::vector<graph::SlotValues> sample;
  for (const auto& block : nn::pack_row_blocks(layout, layout_options.blocks, x)) {
    sample.emplace_back(block.begin(), block.end());
  }
  graph::StagedPlanner planner(context, options,
                               std::vector<graph::StageInput>(layout_options.blocks, {.slots = slots}), {sample});
  BlockPlanner blocks(o, planner, x, sample);
  const auto twin = [&] {
    std::vector<std::vector<std::complex<double>>> out;
    for (const auto& block : planner.samples().front()) out.emplace_back(block.begin(), block.end());
    return nn::unpack_row_blocks(layout, out);
  };
  const auto report_twin = [&] {
    if (o.attention_only) {  // the exact reference is of whole blocks
      fmt::print("host memory peak {:.2f} GiB\n", peak_host_gib());
      return;
    }
    fmt::print("polynomial twin against the exact reference: max error {:.3e}; host memory peak {:.2f} GiB\n",
               max_difference(twin(), blocks.exact()), peak_host_gib());
  };
  if (o.plan_only) {
    for (std::size_t l = 0; l < o.config.layers; ++l) {
      const graph::Plan plan = blocks.next(l);
      if (l == 0) fmt::print("{}", graph::summary(plan));
    }
    report_twin();
    return 0;
  }

  // The first block's plan sets the keys (every block rotates by the same steps) and the bootstrapper; each
  // later block is planned on a host thread while the one before it runs.
  std::vector<graph::Plan> first;
  first.push_back(blocks.next(0));
  fmt::print("{}", graph::summary(first.front()));
  const auto steps = first.front().keys.steps;
  const ckks::KeyGenerator keygen(context);
  return run_planned(first, boot_config, keygen, o.cpu, [&](const auto& evaluator, const auto& bootstrapper) {
    using Backend = std::decay_t<decltype(evaluator.backend())>;
    const ckks::Encoder encoder(context);
    const ckks::Encryptor encryptor(keygen.public_key());
    const auto packed = nn::pack_row_blocks(layout, layout_options.blocks, x);
    std::vector<ckks::Ciphertext> values;
    for (std::size_t b = 0; b < packed.size(); ++b) {
      values.push_back(evaluator.upload(encryptor.encrypt(encoder.encode(packed[b], first.front().input_encoding(b)))));
    }
    graph::Plan current = std::move(first.front());
    double device_seconds = 0;
    for (std::size_t l = 0; l < o.config.layers; ++l) {
      std::future<graph::Plan> next;
      if (l + 1 < o.config.layers) next = std::async(std::launch::async, [&, l] { return blocks.next(l + 1); });
      // The block's plaintexts made (unscaled, on every host core) before its timed run.
      const StagedExecutors<Backend> stage(std::span<const graph::Plan>(&current, 1), evaluator, bootstrapper,
                                          {.round_sums_once = o.round_sums_once});
      stage.prepare();
      const auto start = std::chrono::steady_clock::now();
      values = stage.run(std::move(values)).outputs;
      const double ran = seconds_since(start);
      device_seconds += ran;
      if (next.valid()) {
        const auto wait_start = std::chrono::steady_clock::now();
        current = next.get();
        fmt::print("block {:2} ran in {:.3f} s; the next was ready {:.1f} s later\n", l, ran, seconds_since(wait_start));
        require(std::includes(steps.begin(), steps.end(), current.keys.steps.begin(), current.keys.steps.end()),
                "block {} rotates by steps the first block did not", l + 1);
      } else {
        fmt::print("block {:2} ran in {:.3f} s\n", l, ran);
      }
    }
    fmt::print("encrypted Llama: {:.3f} s in {} blocks ({:.3f} s a block)\n", device_seconds, o.config.layers,
               device_seconds / static_cast<double>(o.config.layers));
    const ckks::Decryptor decryptor(keygen.secret_key());
    std::vector<std::vector<std::complex<double>>> slots_out;
    for (const auto& c : values) slots_out.push_back(encoder.decode(decryptor.decrypt(evaluator.download(c))));
    const nn::Matrix hidden = nn::unpack_row_blocks(layout, slots_out);
    const nn::Matrix expected = twin();
    const double error = max_difference(hidden, expected);
    fmt::print("hidden states: against the twin {:.3e} ({:.1f} bits), against the exact reference {}\n", error,
               -std::log2(error),
               o.attention_only ? "(not made: whole blocks only)"
                                : fmt::format("{:.3e}", max_difference(hidden, blocks.exact())));
    if (error >= 0.05) {  // where it went wrong: the error of each ciphertext of rows
      std::string per_block;
      for (std::size_t r = 0; r < hidden.rows; r += layout.rows) {
        double worst = 0;
        for (std::size_t i = r * hidden.cols; i < std::min(hidden.rows, r + layout.rows) * hidden.cols; ++i) {
          worst = std::max(worst, std::abs(hidden.values[i] - expected.values[i]));
        }
        per_block += fmt::format(" {:.2e}", worst);
      }
      fmt::print("against the twin, ciphertext by ciphertext:{}\n", per_block);
    }
    report_twin();
    return error < 0.05 ? 0 : 1;
  });
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    return run_llama(argc, argv);
  } catch (const cerium::OutOfMemoryError& e) {
    // A full-size block holds 203 rotation keys (37 GB), its weights' diagonals unscaled (8 GB) and 8 GB of live
    // ciphertexts on the device.
    fmt::print(stderr,
               "llama: {}\nthe block needs more device memory than this GPU has: run smaller shapes (--hidden, --ffn, "
               "--tokens) or on a GPU with more memory\n",
               e.what());
  } catch (const cerium::Error& e) {
    fmt::print(stderr, "llama: {}\n", e.what());
  }
  return 1;
}
