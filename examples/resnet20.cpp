// ResNet-20 (3 stages of 3 basic blocks, 16/32/64 channels, 32x32x3 inputs, 10 classes) on an encrypted image:
// the model is traced once, the planner places its bootstraps and infers its rotation keys, and the executor runs
// it on the GPU when there is one (on the CPU it says first how long that would take and asks for --cpu).
// Weights: seeded at the published shapes, or a trained weight file (scripts/train_resnet.py); the image: a
// Fashion-MNIST test image (padded to 32x32, three channels) when the dataset is installed, else random pixels.
// The logits are checked against the plaintext twin (the same polynomial ReLUs) and the exact-ReLU reference.
//
//   cerium_example_resnet20                     plan, then run on the GPU (or print the CPU estimate)
//   --plan-only                                 trace and plan; print the plan's summary
//   --cpu                                       run on the CPU even so (hours)
//   --relu-degree D                             the interpolated ReLU's degree (15)
//   --relu-bound B                              its range [-B, B] for trained weights (8; seeded weights are
//                                               calibrated on the image)
//   --seed S                                    the weights' seed (1)
//   --weights FILE                              trained weights (io/weights.hpp layout)
//   --image I                                   Fashion-MNIST test image I (0)
//   --images N                                  N images from I on: encrypted accuracy and agreement with the
//                                               plaintext twin, the time of each (1)
//   --time-limit S                              start no image past S seconds of runs (none)
//   --no-profile                                skip the per-layer breakdown (a second, profiled run)
//   --side-by-side K                            on a GPU, also time K images at once (K recorded runs, each
//                                               replayed on its own stream) against the same words one at a
//                                               time: images per second
//   --no-capture                                on a GPU, issue every image's run node by node instead of
//                                               replaying it as recorded CUDA graphs (graph::CapturedRun)
//   --segment-nodes K                           record K nodes to a graph (default: the whole run in one)
//   --no-join-halves                            bootstrap each half of the 2 x 16384 slots with its own EvalMod
//                                               (default: one EvalMod on both halves joined,
//                                               boot::BootstrapConfig::join_halves; 1.006 against 1.26 s an image
//                                               on the H100, bench/RESULTS.md)
//   --cache-gib G                               at most G GiB of plaintexts kept encoded on the device, the rest
//                                               kept unscaled there and encoded at each use (a model whose
//                                               weights outgrow the GPU; default: what the device has room for)
//   --node-by-node                              run the sums of plaintext products node by node (the same words,
//                                               slower), for comparison; by default one extra run of the first
//                                               image does so and checks its words
//   --pair-images                               trace two images into one program, so that the planner pairs their
//                                               bootstraps (graph::PlanOptions::pair_bootstraps: one bootstrap
//                                               refreshes both): each run classifies two images
//   --accuracy N                                no encryption: the first N test images through the plaintext
//                                               twin (polynomial ReLUs) and the exact-ReLU reference; both
//                                               accuracies and how often their classes agree

#include <fmt/format.h>

#include <chrono>
#include <complex>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/captured_run.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/io/idx.hpp"
#include "cerium/io/weights.hpp"
#include "cerium/nn/resnet.hpp"
#include "layer_profile.hpp"
#include "plaintext_budget.hpp"
#include "run_planned.hpp"
#include "same_words.hpp"

using namespace cerium;

namespace {

constexpr std::size_t kSlots = 16384;  // 16 x 32 x 32, the widest activation

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::size_t arg_max(const std::vector<double>& v) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < v.size(); ++k) best = v[k] > v[best] ? k : best;
  return best;
}

// The logits where the output packing puts them (logit k is not slot k: the dense layer writes its packing).
std::vector<double> logits_of(const nn::ResNet& model, const std::vector<std::complex<double>>& slots) {
  std::vector<double> real(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) real[i] = slots[i].real();
  return model.output_packing().unpack(real).values;
}

// An image to classify: a Fashion-MNIST test image with its label, or random pixels (label -1).
struct Sample {
  std::size_t index = 0;
  int label = -1;
  nn::Tensor image;
};

struct RunSettings {
  bool profile = true;          // a per-layer breakdown of one run after the first
  bool fuse = true;             // sums of plaintext products in one call (graph::RunOptions::fuse_plain_sums)
  double time_limit_s = 0;      // stop starting new images past it (0: none)
  double cache_gib = -1;        // the plaintext cache's bound (negative: sized to the device)
  bool capture = true;          // on a GPU, record the run as CUDA graphs and replay them (graph::CapturedRun)
  std::size_t segment_nodes = 0;  // nodes per recorded graph (0: one graph)
  std::size_t side_by_side = 1;   // on a GPU, also time this many images run at once (recorded runs, one stream each)
  std::size_t images_per_run = 1;  // --pair-images: 2 (the program traced on two images, their bootstraps paired)
};

// Throughput: `count` recorded runs of the executor, each replayed on a stream of its own so that several images
// run at once, checked against the words of the same images run one at a time; prints runs per second (each run
// classifies RunSettings::images_per_run images). encrypt(k): the inputs of the k-th run. Returns whether the words
// matched.
template <backend::PolyBackend B, class Encrypt>
bool side_by_side(const graph::Executor<B>& executor, const graph::CapturedRun<B>& first,
                  const graph::CaptureOptions& capture_options, const Encrypt& encrypt,
                  const ckks::BasicEvaluator<B>& evaluator, std::size_t count) {
  using Stream = std::remove_cvref_t<decltype(evaluator.backend().work_stream())>;
  auto start = std::chrono::steady_clock::now();
  const auto example = encrypt(0);
  std::vector<std::unique_ptr<const graph::CapturedRun<B>>> more;
  std::vector<const graph::CapturedRun<B>*> runs{&first};
  std::vector<Stream> streams;
  std::vector<std::vector<ckks::Ciphertext>> inputs;
  std::vector<ckks::Ciphertext> want;
  for (std::size_t k = 0; k < count; ++k) {
    if (k > 0) {
      more.push_back(std::make_unique<const graph::CapturedRun<B>>(executor, example, capture_options));
      runs.push_back(more.back().get());
    }
    streams.push_back(Stream::create());
    inputs.push_back(encrypt(k));
    want.push_back(evaluator.download(first.run(inputs.back()).at(0)));  // one at a time: the words to match
  }
  const double record_s = seconds_since(start);
  const auto round = [&] {
    for (std::size_t k = 0; k < count; ++k) runs[k]->start(inputs[k], streams[k]);
    std::vector<ckks::Ciphertext> got;
    for (std::size_t k = 0; k < count; ++k) got.push_back(evaluator.download(runs[k]->collect(streams[k]).at(0)));
    return got;
  };
  const auto got = round();  // also reserves each graph's memory
  bool same = true;
  for (std::size_t k = 0; k < count; ++k) same = same && same_words(got[k], want[k]);
  constexpr int rounds = 5;
  start = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) (void)round();
  const double elapsed = seconds_since(start);
  fmt::print("side by side: {} runs at once, one recorded run and stream each: {:.2f} runs/s ({:.3f} s a round; "
             "{} more runs recorded in {:.1f} s); the same words as one at a time: {}\n",
             count, static_cast<double>(count * rounds) / elapsed, elapsed / rounds, count - 1, record_s,
             same ? "yes" : "NO");
  return same;
}

// Encrypts each sample, runs the plan, decrypts the logits and compares the class with the plaintext twin's (the
// same polynomial ReLUs) and the exact-ReLU reference's. The first run encodes the plaintexts (kept on the
// device); a second, profiled run of the first image gives the per-layer times; every run is timed.
template <backend::PolyBackend B>
int run(const graph::Plan& plan, const nn::ResNet& model, const std::vector<Sample>& samples,
        const ckks::BasicEvaluator<B>& evaluator, const boot::BasicBootstrapper<B>& bootstrapper,
        const ckks::KeyGenerator& keygen, const RunSettings& settings) {
  const auto& context = plan.program.context();
  const ckks::Encoder encoder(context);
  const ckks::Encryptor encryptor(keygen.public_key());
  const ckks::Decryptor decryptor(keygen.secret_key());
  const std::size_t cache_bytes =
      settings.cache_gib >= 0 ? std::max<std::size_t>(1, static_cast<std::size_t>(settings.cache_gib * 1073741824.0))
                              : plaintext_cache_bytes<B>(std::span<const graph::Plan>(&plan, 1));
  const graph::Executor<B> executor(plan, evaluator, &bootstrapper,
                                    {.cache_plaintexts = true, .plaintext_cache_bytes = cache_bytes});
  if (cache_bytes != 0) {
    fmt::print("plaintext cache: {:.1f} of {:.1f} GiB on the device (what it has free after the keys, less room for "
               "the run); the rest kept unscaled on the device (at most {:.1f} GiB) and encoded there at each use\n",
               cache_bytes / 1073741824.0, plan.plaintext_encoded_bytes / 1073741824.0,
               unscaled_plaintext_bytes(plan) / 1073741824.0);
  }
  const graph::RunOptions run_options{.fuse_plain_sums = settings.fuse};
  // The inputs of the run that starts at image `first` (images wrap around the samples: the last run of an odd
  // count repeats the first image).
  const std::size_t per_run = settings.images_per_run;
  const auto encrypt = [&](std::size_t first) {
    std::vector<ckks::Ciphertext> inputs;
    for (std::size_t k = 0; k < per_run; ++k) {
      const Sample& s = samples[(first + k) % samples.size()];
      inputs.push_back(
          encryptor.encrypt(encoder.encode(model.input_packing().pack(s.image), plan.input_encoding(k))));
    }
    return inputs;
  };
  const auto decrypt_logits = [&](const ckks::Ciphertext& c) {
    return logits_of(model, encoder.decode(decryptor.decrypt(evaluator.download(c))));
  };

  // Every plaintext encoded ahead on all host cores and kept on the device; then the first image, with a
  // progress bar.
  auto start = std::chrono::steady_clock::now();
  const std::size_t encoded = executor.encode_plaintexts();
  fmt::print("{} plaintexts encoded and uploaded in {:.1f} s ({} of them kept unscaled: {:.2f} GiB)\n", encoded,
             seconds_since(start), executor.unscaled_plaintexts(), executor.unscaled_plaintext_bytes() / 1073741824.0);
  start = std::chrono::steady_clock::now();
  const auto first_input = encrypt(0);
  const auto inputs_copy = [&] {
    std::vector<ckks::Ciphertext> copy;
    for (const auto& c : first_input) copy.push_back(c.clone());
    return copy;
  };
  auto outputs = executor.run(inputs_copy(), [&](const graph::RunProgress& p) {
    if (p.nodes_done % 500 == 0 || p.nodes_done == p.nodes) {
      fmt::print("\r  {:5.1f}%  nodes {}/{}, bootstraps {}/{}, {:.1f} s", 100.0 * p.nodes_done / p.nodes,
                 p.nodes_done, p.nodes, p.bootstraps_done, p.bootstraps, p.elapsed_seconds);
      std::fflush(stdout);
    }
  }, run_options);
  fmt::print("\nfirst encrypted inference: {:.3f} s\n", seconds_since(start));
  if (settings.fuse) {
    // The same input node by node: the fused sums must not change a word (both timed warm: the first inference
    // ran the kernels of both paths and filled the plaintext cache).
    start = std::chrono::steady_clock::now();
    const auto fused = executor.run(inputs_copy(), {}, run_options);
    const ckks::Ciphertext fused_words = evaluator.download(fused.at(0));
    const double fused_s = seconds_since(start);
    start = std::chrono::steady_clock::now();
    const auto plain = executor.run(inputs_copy(), {}, {.fuse_plain_sums = false});
    const ckks::Ciphertext plain_words = evaluator.download(plain.at(0));
    const double plain_s = seconds_since(start);
    bool same = plain_words.level() == fused_words.level();
    for (std::size_t k = 0; same && k < plain_words.size(); ++k) {
      for (std::size_t i = 0; same && i < plain_words.part(k).limb_count(); ++i) {
        same = std::ranges::equal(plain_words.part(k).limb(i), fused_words.part(k).limb(i));
      }
    }
    fmt::print("sums of plaintext products fused: {:.3f} s; node by node: {:.3f} s; the same words: {}\n", fused_s,
               plain_s, same ? "yes" : "NO");
  }
  if (settings.profile) {
    LayerProfile profile(plan.program);
    executor.run(encrypt(0), [&](const graph::RunProgress& p) { profile.add(p); },
                 {.profile = true, .fuse_plain_sums = settings.fuse});
    fmt::print("per-layer times of a second run (the device waited for after each node):\n");
    profile.print();
  }

  // On a GPU: the run recorded once as CUDA graphs and replayed for each image (the executor's words, checked on
  // the first image; both timed warm).
  std::function<std::vector<ckks::Ciphertext>(std::vector<ckks::Ciphertext>)> run_image = [&](auto inputs) {
    return executor.run(std::move(inputs), {}, run_options);
  };
  if constexpr (backend::WorkCapture<B>) {
    if (settings.capture) {
      start = std::chrono::steady_clock::now();
      auto captured = std::make_shared<const graph::CapturedRun<B>>(
          executor, first_input, graph::CaptureOptions{.segment_nodes = settings.segment_nodes, .run = run_options});
      fmt::print("run recorded as {} CUDA graph(s) in {:.1f} s (an eager run first, then {:.1f} s to record and "
                 "instantiate)\n",
                 captured->segments(), seconds_since(start), captured->capture_seconds());
      start = std::chrono::steady_clock::now();
      const auto eager = executor.run(inputs_copy(), {}, run_options);
      const ckks::Ciphertext eager_words = evaluator.download(eager.at(0));
      const double eager_s = seconds_since(start);
      start = std::chrono::steady_clock::now();
      const auto replayed = captured->run(first_input);
      const ckks::Ciphertext replayed_words = evaluator.download(replayed.at(0));
      const double replay_s = seconds_since(start);
      const bool same = same_words(eager_words, replayed_words);
      fmt::print("one image issued node by node: {:.3f} s; replayed: {:.3f} s; the same words: {}\n", eager_s,
                 replay_s, same ? "yes" : "NO");
      if (!same) return 1;
      if (settings.side_by_side > 1 &&
          !side_by_side(executor, *captured,
                        graph::CaptureOptions{.segment_nodes = settings.segment_nodes, .run = run_options},
                        [&](std::size_t k) { return encrypt(k * per_run); }, evaluator, settings.side_by_side)) {
        return 1;
      }
      run_image = [captured](std::vector<ckks::Ciphertext> inputs) { return captured->run(inputs); };
    }
  }

  // The plaintext references of each image, computed on host threads a window ahead while the GPU runs.
  struct Reference {
    std::vector<double> twin_logits;
    std::optional<std::size_t> exact_class;  // none when a ReLU input leaves its range
  };
  const auto reference_of = [&model](const Sample& s) {
    const auto packed = model.input_packing().pack(s.image);
    graph::PlainOps twin;
    Reference r{logits_of(model, model.forward(twin, graph::PlainOps::Value(packed.begin(), packed.end()))), {}};
    try {
      r.exact_class = arg_max(model.reference(s.image).values);
    } catch (const InvalidArgument&) {
    }
    return r;
  };
  std::vector<std::future<Reference>> references(samples.size());
  const std::size_t window = std::max(1u, std::thread::hardware_concurrency() - 1);
  std::size_t launched = 0;

  std::size_t done = 0, right = 0, twin_right = 0, exact_right = 0, exact_count = 0, agree = 0;
  std::vector<double> times;
  double worst = 0;
  const auto all_start = std::chrono::steady_clock::now();
  for (std::size_t first = 0; first < samples.size(); first += per_run) {
    if (settings.time_limit_s > 0 && seconds_since(all_start) > settings.time_limit_s) {
      fmt::print("time limit of {:.0f} s reached: {} of {} images done\n", settings.time_limit_s, done,
                 samples.size());
      break;
    }
    for (; launched < std::min(samples.size(), first + per_run + window); ++launched) {
      references[launched] = std::async(std::launch::async, reference_of, std::cref(samples[launched]));
    }
    auto inputs = encrypt(first);
    start = std::chrono::steady_clock::now();
    outputs = run_image(std::move(inputs));
    std::vector<std::vector<double>> run_logits;
    for (std::size_t k = 0; k < per_run; ++k) {
      run_logits.push_back(decrypt_logits(outputs.at(k)));  // the download waits for the device
    }
    const double run_seconds = seconds_since(start);
    for (std::size_t k = 0; k < per_run && first + k < samples.size(); ++k) {
      const std::size_t i = first + k;
      const Sample& s = samples[i];
      const std::vector<double>& logits = run_logits[k];
      times.push_back(run_seconds / static_cast<double>(per_run));  // each image's share of its run

      const Reference reference = references[i].get();
      const std::vector<double>& expected = reference.twin_logits;
      double error = 0;
      for (std::size_t c = 0; c < logits.size(); ++c) error = std::max(error, std::abs(logits[c] - expected[c]));
      worst = std::max(worst, error);
      const std::size_t best = arg_max(logits), best_twin = arg_max(expected);
      std::string exact_text = "out of range";
      if (reference.exact_class) {
        exact_text = std::to_string(*reference.exact_class);
        exact_right += static_cast<int>(*reference.exact_class) == s.label;
        ++exact_count;
      }
      ++done;
      agree += best == best_twin;
      right += static_cast<int>(best) == s.label;
      twin_right += static_cast<int>(best_twin) == s.label;
      fmt::print("image {:4}: label {:2}, class {} (twin {}, exact ReLU {}), max logit error {:.2e}, {:.3f} s\n",
                 s.index, s.label, best, best_twin, exact_text, error, times.back());
    }
  }
  std::sort(times.begin(), times.end());
  const double median = times.empty() ? 0 : times[times.size() / 2];
  fmt::print("encrypted inference: median {:.3f} s, fastest {:.3f} s an image over {} images ({:.2f} images/s, {} a "
             "run); {} bootstraps a run ({} run: {} pairs)\n",
             median, times.empty() ? 0 : times.front(), done, median > 0 ? 1 / median : 0.0, per_run,
             plan.bootstraps(), plan.bootstrap_runs(), plan.bootstrap_pairs());
  fmt::print("classes equal to the plaintext twin's: {}/{} ({:.2f}%); max logit error {:.2e}\n", agree, done,
             100.0 * agree / std::max<std::size_t>(1, done), worst);
  if (samples.front().label >= 0) {
    fmt::print("top-1: encrypted {:.2f}%, plaintext twin {:.2f}%, exact ReLU {:.2f}% (on the {} images within its "
               "range)\n",
               100.0 * right / std::max<std::size_t>(1, done), 100.0 * twin_right / std::max<std::size_t>(1, done),
               100.0 * exact_right / std::max<std::size_t>(1, exact_count), exact_count);
  }
  // At least 99.5 percent of the classes must be the twin's (issue 20); one image must match outright.
  return done > 0 && 1000 * agree >= 995 * done ? 0 : 1;
}


nn::Tensor fashion_image(const io::LabeledImages& set, std::size_t index, const nn::Shape& shape) {
  nn::Tensor image(shape);
  for (std::size_t c = 0; c < 3; ++c) {  // 28x28 grey, padded by 2, copied to the three channels
    for (std::size_t y = 0; y < 28; ++y) {
      for (std::size_t x = 0; x < 28; ++x) image.at(c, y + 2, x + 2) = set.pixels[(index * 28 + y) * 28 + x] / 255.0;
    }
  }
  return image;
}

// The model's plaintext accuracy on the first `count` test images: the twin with the polynomial ReLUs (what the
// encrypted run computes) and the exact-ReLU reference (which refuses inputs beyond the ReLU's range).
int plaintext_accuracy(const nn::ResNet& model, const io::LabeledImages& test, std::size_t count) {
  count = std::min(count, test.count);
  std::size_t twin_right = 0, exact_right = 0, agree = 0, out_of_range = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < count; ++i) {
    const nn::Tensor image = fashion_image(test, i, model.config().input);
    const auto packed = model.input_packing().pack(image);
    graph::PlainOps twin;
    const auto slots = model.forward(twin, graph::PlainOps::Value(packed.begin(), packed.end()));
    const std::size_t twin_class = arg_max(logits_of(model, slots));
    twin_right += twin_class == test.labels[i];
    try {
      const std::size_t exact_class = arg_max(model.reference(image).values);
      exact_right += exact_class == test.labels[i];
      agree += exact_class == twin_class;
    } catch (const InvalidArgument&) {
      ++out_of_range;
    }
    fmt::print("\r  {}/{} images, {:.1f} s", i + 1, count, seconds_since(start));
    std::fflush(stdout);
  }
  fmt::print("\npolynomial-ReLU twin: {:.2f}% top-1 on {} test images\n", 100.0 * twin_right / count, count);
  fmt::print("exact ReLU: {:.2f}% top-1 on the {} images within the ReLU's range ({} outside); classes agree on "
             "{}\n",
             100.0 * exact_right / std::max<std::size_t>(1, count - out_of_range), count - out_of_range,
             out_of_range, agree);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a log cut short (a time limit) keeps every finished line
  bool plan_only = false, cpu = false, join_halves = true;
  int relu_degree = 15;
  double relu_bound = 8;
  std::uint64_t seed = 1;
  std::string weights_file;
  std::size_t image_index = 0, accuracy_images = 0, image_count = 1;
  RunSettings settings;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--plan-only") {
      plan_only = true;
    } else if (arg == "--join-halves") {  // the default; kept so that earlier command lines still run
      join_halves = true;
    } else if (arg == "--no-join-halves") {
      join_halves = false;
    } else if (arg == "--cpu") {
      cpu = true;
    } else if (arg == "--relu-degree" && i + 1 < argc) {
      relu_degree = std::atoi(argv[++i]);
    } else if (arg == "--relu-bound" && i + 1 < argc) {
      relu_bound = std::atof(argv[++i]);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--weights" && i + 1 < argc) {
      weights_file = argv[++i];
    } else if (arg == "--image" && i + 1 < argc) {
      image_index = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--accuracy" && i + 1 < argc) {
      accuracy_images = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--images" && i + 1 < argc) {
      image_count = std::max<std::size_t>(1, std::strtoull(argv[++i], nullptr, 10));
    } else if (arg == "--time-limit" && i + 1 < argc) {
      settings.time_limit_s = std::atof(argv[++i]);
    } else if (arg == "--side-by-side" && i + 1 < argc) {
      settings.side_by_side = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
    } else if (arg == "--no-capture") {
      settings.capture = false;
    } else if (arg == "--segment-nodes" && i + 1 < argc) {
      settings.segment_nodes = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--no-profile") {
      settings.profile = false;
    } else if (arg == "--cache-gib" && i + 1 < argc) {
      settings.cache_gib = std::atof(argv[++i]);
    } else if (arg == "--node-by-node") {
      settings.fuse = false;
    } else if (arg == "--pair-images") {
      settings.images_per_run = 2;
    } else {
      fmt::print(stderr,
                 "usage: {} [--plan-only] [--cpu] [--relu-degree D] [--relu-bound B] [--seed S] [--weights FILE] [--image I] "
                 "[--images N] [--time-limit S] [--no-profile] [--no-capture] [--side-by-side K] [--no-join-halves] "
                 "[--segment-nodes K] [--cache-gib G] [--node-by-node] [--pair-images] [--accuracy N]\n",
                 argv[0]);
      return 2;
    }
  }

  auto start = std::chrono::steady_clock::now();
  nn::ResNetConfig config{.slots = kSlots, .relu_bound = relu_bound, .relu_stages = 0, .relu_degree = relu_degree};
  std::vector<Sample> samples;
  std::optional<io::LabeledImages> test;
  const char* data_dir = std::getenv("CERIUM_FASHION_MNIST_DIR");  // else the Debian package's
  const std::filesystem::path dir = data_dir != nullptr ? data_dir : io::kFashionMnistDir;
  if (std::filesystem::exists(dir / "t10k-images-idx3-ubyte.gz")) {
    test = io::load_fashion_mnist("t10k", dir);
    require(image_index + image_count <= test->count, "--image {} --images {}: the test set has {} images",
            image_index, image_count, test->count);
    for (std::size_t i = image_index; i < image_index + image_count; ++i) {
      samples.push_back({i, static_cast<int>(test->labels[i]), fashion_image(*test, i, config.input)});
    }
    fmt::print("Fashion-MNIST test images {} to {} (first label {})\n", image_index, image_index + image_count - 1,
               samples.front().label);
  } else {
    std::mt19937_64 rng(seed + 1);
    std::uniform_real_distribution<double> pixel(0, 1);
    for (std::size_t i = 0; i < image_count; ++i) {
      nn::Tensor image(config.input);
      for (auto& v : image.values) v = pixel(rng);
      samples.push_back({i, -1, std::move(image)});
    }
    fmt::print("random images (install dataset-fashion-mnist for real ones)\n");
  }
  nn::ResNet model = weights_file.empty() ? nn::ResNet::seeded(config, seed)
                                          : nn::ResNet::from_weights(config, io::WeightFile::load(weights_file));
  // Seeded weights have no trained range: calibrate the ReLU's on this image. Trained ones keep the training's.
  if (weights_file.empty()) model = model.with_relu_bound(1.25 * model.activation_range({samples.front().image}));
  fmt::print("ResNet-20, {} weights: built in {:.1f} s; ReLU of degree {} on [-{:.2f}, {:.2f}]\n",
             weights_file.empty() ? "seeded" : "trained", seconds_since(start), relu_degree, model.config().relu_bound,
             model.config().relu_bound);
  if (accuracy_images > 0) {
    require(test.has_value(), "--accuracy needs the Fashion-MNIST test set (dataset-fashion-mnist)");
    return plaintext_accuracy(model, *test, accuracy_images);
  }

  const auto context = ckks::Context::create(ckks::presets::bootstrappable_n16());
  const boot::BootstrapConfig boot_config{.slots = kSlots, .join_halves = join_halves};
  const auto levels = boot::bootstrap_levels(context->parameters(), boot_config);
  graph::PlanOptions options;
  options.bootstrap = graph::BootstrapSpec{.output_level = levels.output,
                                           .output_scale = context->parameters().default_scale_at(levels.output),
                                           .min_input_level = 1,
                                           .slots = kSlots};
  start = std::chrono::steady_clock::now();
  // With --pair-images the model is traced on two images: independent chains whose bootstraps pair.
  options.pair_bootstraps = settings.images_per_run > 1;
  graph::Tracer tracer(context);
  for (std::size_t k = 0; k < settings.images_per_run; ++k) {
    const std::string suffix = settings.images_per_run > 1 ? std::to_string(k) : "";
    tracer.output(model.forward(tracer, tracer.input("image" + suffix, kSlots)), "logits" + suffix);
  }
  const graph::Plan plan = graph::plan(std::move(tracer).finish(), options);
  fmt::print("traced and planned in {:.1f} s\n{}", seconds_since(start), graph::summary(plan));
  if (plan_only) return 0;

  const ckks::KeyGenerator keygen(context);
  return run_planned(plan, boot_config, keygen, cpu, [&](const auto& evaluator, const auto& bootstrapper) {
    return run(plan, model, samples, evaluator, bootstrapper, keygen, settings);
  });
}
