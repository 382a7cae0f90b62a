// all-MiniLM-L6-v2 (a 6-layer BERT: hidden 384, 12 heads, FFN 1536) on an encrypted sentence: the client embeds
// its tokens in plaintext and encrypts them; the server runs the six encoder layers on the ciphertext (token-major
// rows, polynomial softmax, LayerNorm and GELU calibrated on the sentence, bootstraps placed by the planner); the
// client decrypts the hidden states, mean-pools them and compares the sentence embedding with the real model's
// (cosine similarity). On the GPU when there is one; on the CPU it says first how long that would take.
//
//   cerium_example_minilm                  plan, then run on the GPU (or print the CPU estimate)
//   --plan-only                            trace and plan; print the plan's summary
//   --cpu                                  run on the CPU even so (hours)
//   --sentence K                           sentence K of data/minilm_sentences.txt (0)
//   --sentences all | K,K,...              several sentences in one run: planned on host threads side by side,
//                                          one key set for all; the cosine of each and the least
//   --model DIR                            where scripts/fetch-minilm.sh wrote minilm_encoder.crwt
//   --noise BITS                           each plan simulated with noise 2^-BITS on every bootstrapped slot (times
//                                          the value's bootstrap_shift) and the rescales' and key switches'
//                                          rounding: the cosine a run with bootstraps of that precision would reach
//   --margin M                             the calibrated ranges widened by M (1.25)
//   --narrow-levels                        presets::bootstrappable_n16_narrow: 15 levels of ~2^30 between
//                                          bootstraps instead of 8 of 2^56 (fewer bootstraps, fewer bits)
//   --magnitude-limit M                    bootstrap only values up to M on the calibration (graph::PlanOptions::
//                                          bootstrap_magnitude_limit; default 2): larger lets the planner refresh
//                                          LayerNorm's outputs instead of GELU's inner powers (fewer bootstraps,
//                                          each shifted down by more bits)
//                                          (default: $CERIUM_MINILM_DIR, else build/minilm)

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/io/weights.hpp"
#include "cerium/nn/encrypted_bert.hpp"
#include "plaintext_budget.hpp"
#include "run_planned.hpp"
#include "transformer_support.hpp"

using namespace cerium;

namespace {

// Tokens per ciphertext: the FFN of 1536 in two column blocks of 768 takes a stride of 1024, so 32 rows fill the
// 2^15 slots (one block: a stride of 2048, 16 rows).
constexpr std::size_t kRows = 32;
constexpr std::size_t kFfnBlocks = 2;

struct Sentence {
  nn::Matrix input;  // kRows x 384: the tokens' embeddings, padded with copies of [CLS] (masked keys)
  std::size_t tokens = 0;
  std::vector<double> embedding;  // the real model's mean-pooled embedding
};

Sentence load_sentence(const io::WeightFile& file, std::size_t k, std::size_t hidden) {
  const std::string p = "sentence." + std::to_string(k) + ".";
  require(file.contains(p + "input"), "--sentence {}: data/minilm_sentences.crwt has no such sentence", k);
  const std::uint64_t tokens = file.tensors().at(p + "input").dims.at(0);
  require(tokens <= kRows, "sentence {} has {} tokens; this example packs at most {} (one ciphertext)", k, tokens,
          kRows);
  const auto& values = file.values(p + "input", {tokens, hidden});
  Sentence s{nn::Matrix::zeros(kRows, hidden), tokens, file.values(p + "embedding", {hidden})};
  for (std::size_t i = 0; i < s.input.values.size(); ++i) {
    s.input.values[i] = i < values.size() ? values[i] : values[i % hidden];
  }
  return s;
}

template <backend::PolyBackend B>
double run(const graph::Plan& plan, const nn::EncryptedBert& model, const Sentence& sentence,
        const ckks::BasicEvaluator<B>& evaluator, const boot::BasicBootstrapper<B>& bootstrapper,
        const ckks::KeyGenerator& keygen) {
  const ckks::Encoder encoder(plan.program.context());
  std::vector<ckks::Ciphertext> inputs;
  inputs.push_back(ckks::Encryptor(keygen.public_key())
                       .encrypt(encoder.encode(model.pack(sentence.input), plan.input_encoding(0))));
  // Fully encoded, the plan's plaintexts would take 200 GiB at N = 2^16 (thousands of compressed diagonals at
  // every level they are used): what the device has room for is encoded, the rest kept unscaled (2 doubles a slot
  // of each one's period, tens of MiB) and encoded where the evaluator computes at each use (plaintext_budget.hpp).
  const graph::Executor<B> executor(
      plan, evaluator, &bootstrapper,
      {.cache_plaintexts = true,
       .plaintext_cache_bytes = plaintext_cache_bytes<B>(std::span<const graph::Plan>(&plan, 1)),
       .unscaled_period_limit = unscaled_period_limit<B>(plan.program.context()->ring_degree())});
  auto start = std::chrono::steady_clock::now();
  const std::size_t prepared = executor.encode_plaintexts();
  fmt::print("{} plaintexts prepared in {:.1f} s ({} kept unscaled: {:.1f} MiB)\n", prepared, seconds_since(start),
             executor.unscaled_plaintexts(), executor.unscaled_plaintext_bytes() / 1048576.0);
  start = std::chrono::steady_clock::now();
  auto outputs = executor.run(std::move(inputs), [&](const graph::RunProgress& p) {
    if (p.nodes_done % 1000 == 0 || p.nodes_done == p.nodes) {
      fmt::print("\r  {:5.1f}%  nodes {}/{}, bootstraps {}/{}, {:.1f} s", 100.0 * p.nodes_done / p.nodes,
                 p.nodes_done, p.nodes, p.bootstraps_done, p.bootstraps, p.elapsed_seconds);
      std::fflush(stdout);
    }
  });
  fmt::print("\nencrypted encoder: {:.3f} s\n", seconds_since(start));
  const auto slots = encoder.decode(ckks::Decryptor(keygen.secret_key()).decrypt(evaluator.download(outputs.at(0))));
  const std::vector<double> encrypted = nn::mean_pool(model.unpack(slots), sentence.tokens);
  graph::PlainOps twin;
  const auto packed = model.pack(sentence.input);
  const nn::Matrix twin_hidden = model.unpack(model.forward(twin, graph::PlainOps::Value(packed.begin(), packed.end())));
  const nn::Matrix hidden = model.unpack(slots);
  double error = 0, largest = 0;  // over the sentence's rows
  for (std::size_t i = 0; i < sentence.tokens * twin_hidden.cols; ++i) {
    error = std::max(error, std::abs(hidden.values[i] - twin_hidden.values[i]));
    largest = std::max(largest, std::abs(twin_hidden.values[i]));
  }
  fmt::print("hidden states against the polynomial twin: max error {:.3e} ({:.1f} bits) for values up to {:.2f}\n",
             error, -std::log2(error), largest);
  const std::vector<double> polynomial = nn::mean_pool(twin_hidden, sentence.tokens);
  const double cosine = nn::cosine_similarity(encrypted, sentence.embedding);
  fmt::print("cosine with the real model's embedding: {:.6f} (the polynomial twin's: {:.6f})\n", cosine,
             nn::cosine_similarity(polynomial, sentence.embedding));
  return cosine;
}

// A sentence with its model (calibrated on it: the ranges a client would send) and its plan.
struct Prepared {
  std::size_t index = 0;
  Sentence sentence;
  nn::EncryptedBert model;
  graph::Plan plan;
};

Prepared prepare(const nn::BertWeights& weights, const io::WeightFile& file, std::size_t index,
                 const ckks::ContextPtr& context, double margin, double magnitude_limit, bool precise) {
  Sentence sentence = load_sentence(file, index, weights.config.hidden);
  // Widened: a polynomial piece fed a value just past its calibrated range (a bootstrap's error is enough) can leave
  // it for good (a Newton step that diverges).
  std::vector<nn::BertLayerRanges> ranges = nn::bert_ranges(weights, {sentence.input}, sentence.tokens);
  for (auto& r : ranges) r = r.widened(margin);
  nn::EncryptedBert model(weights, ranges,
                          {.rows = kRows, .valid_tokens = sentence.tokens, .ffn_blocks = kFfnBlocks});
  const std::size_t slots = model.layout().slots();
  graph::PlanOptions options = bootstrapped_plan_options(context, slots, magnitude_limit);
  options.precise_bootstraps = precise;
  const auto packed = model.pack(sentence.input);
  options.calibration = {{graph::SlotValues(packed.begin(), packed.end())}};
  graph::Tracer tracer(context);
  tracer.output(model.forward(tracer, tracer.input("tokens", slots)), "hidden");
  graph::Plan plan = graph::plan(std::move(tracer).finish(), options);
  return {index, std::move(sentence), std::move(model), std::move(plan)};
}

// "all" or a comma-separated list of sentence indices.
std::vector<std::size_t> parse_sentences(const std::string& list, const io::WeightFile& file) {
  std::vector<std::size_t> out;
  if (list == "all") {
    for (std::size_t k = 0; file.contains("sentence." + std::to_string(k) + ".input"); ++k) out.push_back(k);
    return out;
  }
  for (const auto& item : split_list(list)) out.push_back(std::strtoull(item.c_str(), nullptr, 10));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a log cut short (a time limit) keeps every finished line
  bool plan_only = false, cpu = false, precise = false, narrow = false;
  double noise_bits = 0, margin = 1.25, magnitude_limit = 0;
  std::string sentence_list = "0";
  const char* env = std::getenv("CERIUM_MINILM_DIR");
  std::filesystem::path model_dir = env != nullptr ? env : "build/minilm";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--plan-only") {
      plan_only = true;
    } else if (arg == "--cpu") {
      cpu = true;
    } else if (arg == "--precise-bootstraps") {
      precise = true;
    } else if (arg == "--narrow-levels") {
      narrow = true;
    } else if ((arg == "--sentence" || arg == "--sentences") && i + 1 < argc) {
      sentence_list = argv[++i];
    } else if (arg == "--model" && i + 1 < argc) {
      model_dir = argv[++i];
    } else if (arg == "--noise" && i + 1 < argc) {
      noise_bits = std::strtod(argv[++i], nullptr);
    } else if (arg == "--margin" && i + 1 < argc) {
      margin = std::strtod(argv[++i], nullptr);
    } else if (arg == "--magnitude-limit" && i + 1 < argc) {
      magnitude_limit = std::strtod(argv[++i], nullptr);
    } else {
      fmt::print(stderr,
                 "usage: {} [--plan-only] [--cpu] [--sentence K | --sentences all|K,K,...] [--model DIR] "
                 "[--noise BITS] [--margin M] [--magnitude-limit M] [--precise-bootstraps] [--narrow-levels]\n",
                 argv[0]);
      return 2;
    }
  }
  const std::filesystem::path weights_file = model_dir / "minilm_encoder.crwt";
  if (!std::filesystem::exists(weights_file)) {
    fmt::print(stderr, "no {}: run scripts/fetch-minilm.sh (or pass --model DIR)\n", weights_file.string());
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  const nn::BertWeights weights = nn::BertWeights::from_weights(io::WeightFile::load(weights_file), nn::BertConfig{});
  const io::WeightFile sentences = io::WeightFile::load(std::filesystem::path(CERIUM_DATA_DIR) / "minilm_sentences.crwt");
  const std::vector<std::size_t> indices = parse_sentences(sentence_list, sentences);
  require(!indices.empty(), "--sentences {}: no sentences", sentence_list);
  const auto context = ckks::Context::create(narrow ? ckks::presets::bootstrappable_n16_narrow()
                                                     : ckks::presets::bootstrappable_n16());

  // Each sentence calibrated on itself and planned on a host thread of its own.
  std::vector<std::future<Prepared>> pending;
  for (const std::size_t k : indices) {
    pending.push_back(std::async(std::launch::async, [&, k] {
      return prepare(weights, sentences, k, context, margin, magnitude_limit, precise);
    }));
  }
  std::vector<Prepared> prepared;
  for (auto& p : pending) prepared.push_back(p.get());
  fmt::print("all-MiniLM-L6-v2: {} sentence(s) calibrated, traced and planned in {:.1f} s\n", prepared.size(),
             seconds_since(start));
  for (const Prepared& p : prepared) {
    fmt::print("sentence {} ({} tokens): {} nodes, {} bootstraps ({} pairs: {} run), {} key switches, largest value "
               "bootstrapped {:.2f}\n",
               p.index, p.sentence.tokens, p.plan.program.size(), p.plan.bootstraps(), p.plan.bootstrap_pairs(),
               p.plan.bootstrap_runs(), p.plan.key_switches(), p.plan.bootstrap_magnitude);
  }
  fmt::print("{}", graph::summary(prepared.front().plan));
  if (noise_bits > 0) {
    for (const Prepared& p : prepared) {
      const auto packed = p.model.pack(p.sentence.input);
      const auto out = graph::simulate_outputs_noisy(p.plan, {graph::SlotValues(packed.begin(), packed.end())},
                                                     run_noise(p.plan, noise_bits, p.index + 1));
      const std::vector<double> pooled = nn::mean_pool(p.model.unpack(out.at(0)), p.sentence.tokens);
      const bool finite = std::all_of(pooled.begin(), pooled.end(), [](double x) { return std::isfinite(x); });
      fmt::print("sentence {}: bootstraps with noise 2^-{:g}: {}\n", p.index, noise_bits,
                 finite ? fmt::format("cosine {:.6f}", nn::cosine_similarity(pooled, p.sentence.embedding))
                        : std::string("diverged (values not finite)"));
    }
  }
  if (plan_only) return 0;

  std::vector<graph::Plan> plans;  // one key set and one bootstrapper for all (run_planned takes the union)
  for (Prepared& p : prepared) plans.push_back(std::move(p.plan));
  const ckks::KeyGenerator keygen(context);
  const boot::BootstrapConfig boot_config{.slots = prepared.front().model.layout().slots()};
  return run_planned(plans, boot_config, keygen, cpu, [&](const auto& evaluator, const auto& bootstrapper) {
    double least = 1;
    for (std::size_t i = 0; i < prepared.size(); ++i) {
      fmt::print("--- sentence {} ({} tokens)\n", prepared[i].index, prepared[i].sentence.tokens);
      least = std::min(least, run(plans[i], prepared[i].model, prepared[i].sentence, evaluator, bootstrapper, keygen));
    }
    fmt::print("least cosine over {} sentence(s): {:.6f} (target 0.99)\n", prepared.size(), least);
    return least >= 0.99 ? 0 : 1;
  });
}
