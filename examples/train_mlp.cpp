// Encrypted training on real data: a two-layer perceptron (64 -> 32 -> 10, quadratic activation, squared error)
// trained by mini-batch SGD on scikit-learn's 8x8 handwritten digits (Debian python3-sklearn), or 784 -> H -> 10 on
// Fashion-MNIST's 28x28 images (Debian dataset-fashion-mnist: the anchor's input size), the server seeing
// only ciphertexts of the batches, the labels and the weights. One SGD step is traced and planned once (the
// planner places the bootstraps; every updated weight row is refreshed, so the weights enter each step at the
// bootstrapper's output level), then run step after step with the weights fed back. The same training in double
// precision (same batches, same initial weights) is the twin: the decrypted weights are compared with it, and
// both are scored on held-out digits. On the GPU when there is one; on the CPU it says how long that would take.
//
//   cerium_example_train_mlp                   plan, then train on the GPU (or print the CPU estimate)
//   --plan-only                                the plaintext twin's training and the plan only
//   --cpu                                      train on the CPU even so
//   --toy                                      N = 2^12 toy parameters (NOT secure: a quick look on the CPU, about
//                                              25 s a step on one core)
//   --steps S --batch B --rate R --hidden H    100, 32, 0.2 (Fashion-MNIST: 0.05), 32
//   --digits FILE                              digits.csv.gz (default: python3-sklearn's, or $CERIUM_DIGITS_FILE)
//   --compact                                  the weights between steps as 2 ciphertexts (2 bootstraps a step for
//                                              their refresh instead of one per row, 3 a step in all on
//                                              Fashion-MNIST instead of 44; nn/mlp_training.hpp)
//   --capture                                  on a GPU, the step recorded once as CUDA graphs and replayed from
//                                              the third step on (graph::CapturedRun: one launch instead of one a
//                                              kernel; the step's many small low-level rotations are launch-bound)
//   --explain FILE                             the step's plan, node by node (graph::explain)
//   --noise BITS|auto                          with --plan-only: the whole training simulated on the host with every
//                                              bootstrapped slot off by up to 2^-BITS (times its bootstrap shift)
//                                              and every rescale's and key switch's rounding (graph::rounding_noise),
//                                              the weights fed back step after step: how far an encrypted run of
//                                              that precision drifts from the twin (auto: 21 bits less log2 of the
//                                              bootstrapper's bound)
//   --check-every K                            every K steps (and at the end), the weights decrypted and compared
//                                              with the twin's at that step (encrypted run or --noise simulation)
//   --profile                                  after training, one more step profiled (the device waited for after
//                                              each node): its time split into forward, backward, update and
//                                              bootstrapping (the step's labels; layer_profile.hpp)
//   --fashion-mnist [DIR]                      Fashion-MNIST instead (train split for the steps, t10k to score;
//                                              DIR: the idx files, default the package's or
//                                              $CERIUM_FASHION_MNIST_DIR); 784 inputs fill 1024 blocks x the batch

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/captured_run.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/io/digits.hpp"
#include "cerium/nn/mlp_training.hpp"
#include "layer_profile.hpp"
#include "run_planned.hpp"
#include "transformer_support.hpp"

using namespace cerium;

namespace {

struct Options {
  std::size_t steps = 100, batch = 32, hidden = 32;
  double rate = 0;  // 0: 0.2 for the digits, 0.05 for Fashion-MNIST (0.1 diverges on its 784 inputs)
  bool plan_only = false, cpu = false, toy = false, fashion = false, compact = false;
  bool capture = false;  // --capture: on a GPU, the step recorded as CUDA graphs once and replayed
  bool profile = false;  // --profile: one more step, profiled, for the per-step breakdown
  double noise_bits = 0;   // --noise: the training simulated with noisy bootstraps (-1: auto; 0: not)
  std::size_t check_every = 0;  // --check-every: the weights against the twin's every K steps (0: at the end only)
  std::string explain_path;  // --explain FILE: the step's plan table
  std::filesystem::path digits = io::kDigitsFile;
  std::filesystem::path fashion_dir = io::kFashionMnistDir;
};

struct Split {
  nn::Matrix x;  // examples x pixels, scaled to [0, 1]
  std::vector<std::uint8_t> labels;
};

// count images from `first`, pixels divided by `full_scale` (16 for the digits, 255 for Fashion-MNIST).
Split take(const io::LabeledImages& d, std::size_t first, std::size_t count, double full_scale) {
  const std::size_t pixels = d.height * d.width;
  Split s{nn::Matrix::zeros(count, pixels), {}};
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t p = 0; p < pixels; ++p) s.x.at(i, p) = d.pixels[(first + i) * pixels + p] / full_scale;
    s.labels.push_back(d.labels[first + i]);
  }
  return s;
}

double accuracy(const nn::MlpShape& shape, const nn::MlpWeights& w, const Split& test) {
  const nn::Matrix y = nn::mlp_forward_reference(shape, w, test.x);
  std::size_t right = 0;
  for (std::size_t i = 0; i < y.rows; ++i) {
    const auto row = y.row(i);
    right += static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin()) == test.labels[i];
  }
  return static_cast<double>(right) / static_cast<double>(y.rows);
}

// The batches of the run: a fixed shuffle of the training set, batch after batch.
struct Batches {
  const Split& train;
  std::vector<std::size_t> order;
  std::size_t batch;

  Split at(std::size_t step) const {
    Split s{nn::Matrix::zeros(batch, train.x.cols), {}};
    for (std::size_t b = 0; b < batch; ++b) {
      const std::size_t i = order[(step * batch + b) % order.size()];
      for (std::size_t p = 0; p < train.x.cols; ++p) s.x.at(b, p) = train.x.at(i, p);
      s.labels.push_back(train.labels[i]);
    }
    return s;
  }
};

}  // namespace

int run_train_mlp(int argc, char** argv) {
  Options o;
  if (const char* env = std::getenv("CERIUM_DIGITS_FILE")) o.digits = env;
  if (const char* env = std::getenv("CERIUM_FASHION_MNIST_DIR")) o.fashion_dir = env;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--plan-only") o.plan_only = true;
    else if (arg == "--cpu") o.cpu = true;
    else if (arg == "--toy") o.toy = o.cpu = true;
    else if (arg == "--steps" && has_value) o.steps = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--batch" && has_value) o.batch = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--hidden" && has_value) o.hidden = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--rate" && has_value) o.rate = std::strtod(argv[++i], nullptr);
    else if (arg == "--digits" && has_value) o.digits = argv[++i];
    else if (arg == "--compact") o.compact = true;
    else if (arg == "--capture") o.capture = true;
    else if (arg == "--profile") o.profile = true;
    else if (arg == "--noise" && has_value) o.noise_bits = noise_bits_argument(argv[++i]);
    else if (arg == "--check-every" && has_value) o.check_every = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--explain" && has_value) o.explain_path = argv[++i];
    else if (arg == "--fashion-mnist") {
      o.fashion = true;
      if (has_value && argv[i + 1][0] != '-') o.fashion_dir = argv[++i];
    }
    else {
      fmt::print(stderr, "usage: {} [--plan-only] [--cpu] [--toy] [--steps S] [--batch B] [--rate R] [--hidden H] "
                         "[--compact] [--capture] [--profile] [--noise BITS|auto] [--check-every K] [--explain FILE] "
                         "[--digits FILE | --fashion-mnist [DIR]]\n", argv[0]);
      return 2;
    }
  }
  if (o.noise_bits != 0 && !o.plan_only) {
    fmt::print(stderr, "train_mlp: --noise simulates the training on the host and needs --plan-only (an encrypted run "
                       "measures its own drift: --check-every K)\n");
    return 2;
  }
  if (o.rate == 0) o.rate = o.fashion ? 0.05 : 0.2;
  Split train, test;
  std::string data_name;
  if (o.fashion) {
    // The steps visit steps x batch training images at most: only those are loaded into the training split.
    const io::LabeledImages images = io::load_fashion_mnist("train", o.fashion_dir);
    train = take(images, 0, std::min(images.count, std::max<std::size_t>(o.steps * o.batch, 1000)), 255.0);
    const io::LabeledImages held_out = io::load_fashion_mnist("t10k", o.fashion_dir);
    test = take(held_out, 0, held_out.count, 255.0);
    data_name = "Fashion-MNIST";
  } else {
    const io::LabeledImages digits = io::load_digits(o.digits);
    const std::size_t train_count = digits.count * 4 / 5;
    train = take(digits, 0, train_count, 16.0);
    test = take(digits, train_count, digits.count - train_count, 16.0);
    data_name = "digits";
  }
  const std::size_t train_count = train.labels.size();
  const nn::MlpShape shape{.inputs = train.x.cols, .hidden = o.hidden, .outputs = 10, .batch = o.batch,
                           .learning_rate = o.rate, .refresh_weights = true, .compact_weights = o.compact};
  const nn::MlpTrainer trainer(shape);
  Batches batches{train, std::vector<std::size_t>(train_count), o.batch};
  std::iota(batches.order.begin(), batches.order.end(), 0);
  std::shuffle(batches.order.begin(), batches.order.end(), std::mt19937_64(7));
  const nn::MlpWeights initial = nn::MlpWeights::seeded(shape, 11);

  // The plaintext twin: the same steps in double precision. Its weights at the start, the middle and the end of
  // training calibrate the plan (weights grow as they train: the bootstraps must be made for the largest values).
  nn::MlpWeights twin = initial;
  std::vector<std::pair<std::size_t, nn::MlpWeights>> checkpoints;
  std::vector<nn::MlpWeights> twin_after;  // the twin's weights after steps K, 2K, ... (--check-every K)
  for (std::size_t s = 0; s < o.steps; ++s) {
    if (s == 0 || s == o.steps / 2 || s + 1 == o.steps) checkpoints.emplace_back(s, twin);
    const Split b = batches.at(s);
    twin = nn::mlp_step_reference(shape, twin, b.x, b.labels);
    if (o.check_every > 0 && (s + 1) % o.check_every == 0) twin_after.push_back(twin);
  }
  // The weights after `step` steps against the twin's then (--check-every): max difference and test accuracy.
  const auto check = [&](std::size_t step, const nn::MlpWeights& w) {
    const nn::MlpWeights& reference = step == o.steps ? twin : twin_after.at(step / o.check_every - 1);
    const double error = std::max(max_difference(w.w1, reference.w1), max_difference(w.w2, reference.w2));
    fmt::print("\n  after step {}: weights {:.3e} from the twin's ({:.1f} bits), test accuracy {:.2f} % "
               "(twin {:.2f} %)",
               step, error, -std::log2(error), 100 * accuracy(shape, w, test), 100 * accuracy(shape, reference, test));
  };
  const auto checked_at = [&](std::size_t step) {
    return o.check_every > 0 && (step % o.check_every == 0 || step == o.steps);
  };
  fmt::print("{}: {} training and {} test images; MLP {}-{}-10, batch {}, rate {}, {} steps\n", data_name,
             train_count, test.labels.size(), shape.inputs, o.hidden, o.batch, o.rate, o.steps);
  fmt::print("plaintext twin: test accuracy {:.2f} % after {} steps ({:.2f} % before)\n",
             100 * accuracy(shape, twin, test), o.steps, 100 * accuracy(shape, initial, test));

  const auto context = ckks::Context::create(o.toy ? ckks::presets::bootstrappable_toy(12, 24)
                                                   : ckks::presets::bootstrappable_n16());
  if (o.toy) fmt::print("toy parameters (N = 2^12): NOT secure, for a look at the arithmetic only\n");
  const std::size_t slots = shape.slots();
  graph::PlanOptions options = bootstrapped_plan_options(context, slots);
  const int weight_level = options.bootstrap->output_level;
  options.output_level = weight_level;
  for (const auto& [step, weights] : checkpoints) {
    const Split b = batches.at(step);
    std::vector<graph::SlotValues> sample;
    const auto add = [&](const std::vector<double>& v) { sample.emplace_back(v.begin(), v.end()); };
    add(trainer.pack_inputs(b.x));
    add(trainer.pack_targets(b.labels));
    for (const auto& r : trainer.pack_weights(weights)) add(r);
    options.calibration.push_back(std::move(sample));
  }
  graph::Tracer tracer(context);
  const graph::Value x = tracer.input("x", slots), t = tracer.input("t", slots);
  std::vector<graph::Value> w;
  for (std::size_t r = 0; r < trainer.weight_count(); ++r) w.push_back(tracer.input("w", slots, weight_level));
  const auto updated = trainer.step<graph::Tracer>(tracer, x, t, w);
  for (const auto& v : updated) tracer.output(v, "w");
  auto start = std::chrono::steady_clock::now();
  const graph::Plan plan = graph::plan(std::move(tracer).finish(), options);
  fmt::print("one step planned in {:.1f} s\n{}", seconds_since(start), graph::summary(plan));
  if (!o.explain_path.empty()) write_explain(o.explain_path, plan, "", true);
  if (o.plan_only && o.noise_bits != 0) {
    // The training on the host: each step's plan simulated with noisy bootstraps and rounding, weights fed back.
    if (o.noise_bits < 0) o.noise_bits = simulated_noise_bits(std::span<const graph::Plan>(&plan, 1));
    std::vector<graph::SlotValues> weights;
    for (const auto& r : trainer.pack_weights(initial)) weights.emplace_back(r.begin(), r.end());
    const auto unpack = [&] {
      std::vector<std::vector<std::complex<double>>> rows;
      for (const auto& w : weights) rows.emplace_back(w.begin(), w.end());
      return trainer.unpack_weights(rows);
    };
    start = std::chrono::steady_clock::now();
    for (std::size_t s = 0; s < o.steps; ++s) {
      const Split b = batches.at(s);
      std::vector<graph::SlotValues> inputs;
      for (const auto& v : {trainer.pack_inputs(b.x), trainer.pack_targets(b.labels)}) {
        inputs.emplace_back(v.begin(), v.end());
      }
      for (auto& w : weights) inputs.push_back(std::move(w));
      weights = graph::simulate_outputs_noisy(plan, inputs, run_noise(plan, o.noise_bits, s + 1));
      if (checked_at(s + 1)) check(s + 1, unpack());
    }
    const nn::MlpWeights simulated = unpack();
    const double error = std::max(max_difference(simulated.w1, twin.w1), max_difference(simulated.w2, twin.w2));
    fmt::print("\nsimulated training, bootstraps off by 2^-{:.1f} and the rounding, {} steps in {:.1f} s: "
               "weights {:.3e} from the twin's ({:.1f} bits), test accuracy {:.2f} % (twin {:.2f} %)\n",
               o.noise_bits, o.steps, seconds_since(start), error, -std::log2(error),
               100 * accuracy(shape, simulated, test), 100 * accuracy(shape, twin, test));
  }
  if (o.plan_only) return 0;

  const ckks::KeyGenerator keygen(context);
  const boot::BootstrapConfig boot_config{.slots = slots};
  return run_planned(plan, boot_config, keygen, o.cpu, [&](const auto& evaluator, const auto& bootstrapper) {
    using Backend = std::decay_t<decltype(evaluator.backend())>;
    const ckks::Encoder encoder(context);
    const ckks::Encryptor encryptor(keygen.public_key());
    const ckks::Decryptor checker(keygen.secret_key());  // --check-every: the data owner's look at the weights
    const auto encrypt = [&](const std::vector<double>& v, std::size_t input) {
      return encryptor.encrypt(encoder.encode(v, plan.input_encoding(input)));
    };
    std::vector<ckks::Ciphertext> weights;
    const auto rows = trainer.pack_weights(initial);
    for (std::size_t r = 0; r < rows.size(); ++r) weights.push_back(evaluator.upload(encrypt(rows[r], 2 + r)));
    const graph::Executor<Backend> executor(plan, evaluator, &bootstrapper, {.cache_plaintexts = true});
    executor.encode_plaintexts();
    // The data owner's side: each batch encrypted on a host thread while the server runs the step before, as a
    // client would send batches ahead; the loop times the server's steps (and any wait for a batch).
    double encrypting = 0;  // seconds the host thread spent encrypting, all batches
    const auto encrypt_batch = [&](std::size_t s) {
      const auto begin = std::chrono::steady_clock::now();
      const Split b = batches.at(s);
      std::array<ckks::Ciphertext, 2> batch{encrypt(trainer.pack_inputs(b.x), 0),
                                            encrypt(trainer.pack_targets(b.labels), 1)};
      encrypting += seconds_since(begin);
      return batch;
    };
    std::future<std::array<ckks::Ciphertext, 2>> next;  // the batch of the step to come
    if (o.steps > 0) next = std::async(std::launch::async, encrypt_batch, 0);
    // --capture: step 0 runs node by node; step 1's run is recorded (the recording's eager run is step 1) and
    // replayed from step 2 on. Its weights then have the shape every later step's have (the step's outputs').
    std::function<std::vector<ckks::Ciphertext>(std::vector<ckks::Ciphertext>)> step =
        [&](std::vector<ckks::Ciphertext> inputs) { return executor.run(std::move(inputs)); };
    start = std::chrono::steady_clock::now();
    for (std::size_t s = 0; s < o.steps; ++s) {
      std::array<ckks::Ciphertext, 2> batch = next.get();
      if (s + 1 < o.steps) next = std::async(std::launch::async, encrypt_batch, s + 1);
      std::vector<ckks::Ciphertext> inputs;
      for (auto& c : batch) inputs.push_back(evaluator.upload(c));
      for (auto& c : weights) inputs.push_back(std::move(c));
      bool recorded = false;  // this step was the recording's eager run
      if constexpr (backend::WorkCapture<Backend>) {
        if (o.capture && s == 1) {
          const auto recording = std::chrono::steady_clock::now();
          auto captured = std::make_shared<const graph::CapturedRun<Backend>>(executor, inputs);
          fmt::print("step recorded as {} CUDA graph(s) in {:.1f} s (its eager run is step 1)\n", captured->segments(),
                     seconds_since(recording));
          weights.clear();
          for (const auto& c : captured->outputs()) weights.push_back(c.clone());
          step = [captured](std::vector<ckks::Ciphertext> in) { return captured->run(in); };
          recorded = true;
        }
      }
      if (!recorded) weights = step(std::move(inputs));
      if (checked_at(s + 1)) {
        std::vector<std::vector<std::complex<double>>> rows;
        for (const auto& c : weights) rows.push_back(encoder.decode(checker.decrypt(evaluator.download(c))));
        check(s + 1, trainer.unpack_weights(rows));
      }
      if ((s + 1) % 10 == 0 || s + 1 == o.steps) {
        fmt::print("\r  step {}/{}, {:.1f} s ({:.3f} s a step)", s + 1, o.steps, seconds_since(start),
                   seconds_since(start) / static_cast<double>(s + 1));
        std::fflush(stdout);
      }
    }
    const double seconds = seconds_since(start);
    fmt::print("\nencrypted training: {} steps in {:.2f} s ({:.3f} s a step; the batches encrypted meanwhile on a host "
               "thread, {:.3f} s each)\n",
               o.steps, seconds, seconds / static_cast<double>(o.steps), encrypting / static_cast<double>(o.steps));
    if (o.profile) {
      // One step more on the next batch and copies of the weights (its outputs are dropped: training is over),
      // the time of each node given to the phase of the step it belongs to.
      const Split b = batches.at(o.steps);
      std::vector<ckks::Ciphertext> inputs;
      inputs.push_back(evaluator.upload(encrypt(trainer.pack_inputs(b.x), 0)));
      inputs.push_back(evaluator.upload(encrypt(trainer.pack_targets(b.labels), 1)));
      for (const auto& c : weights) inputs.push_back(c.clone());
      LayerProfile table(plan.program);
      executor.run(std::move(inputs), [&](const graph::RunProgress& p) { table.add(p); }, {.profile = true});
      fmt::print("one step profiled (the device waited for after each node; forward includes the compact weights' "
                 "expansion, update the gradients' outer products and the weights' refresh):\n");
      table.print();
    }
    const ckks::Decryptor decryptor(keygen.secret_key());
    std::vector<std::vector<std::complex<double>>> decoded;
    for (const auto& c : weights) decoded.push_back(encoder.decode(decryptor.decrypt(evaluator.download(c))));
    const nn::MlpWeights trained = trainer.unpack_weights(decoded);
    const double error = std::max(max_difference(trained.w1, twin.w1), max_difference(trained.w2, twin.w2));
    const double encrypted_accuracy = accuracy(shape, trained, test), twin_accuracy = accuracy(shape, twin, test);
    fmt::print("decrypted weights against the twin's: max difference {:.3e} ({:.1f} bits)\n", error,
               -std::log2(error));
    fmt::print("test accuracy: encrypted training {:.2f} %, plaintext twin {:.2f} %\n", 100 * encrypted_accuracy,
               100 * twin_accuracy);
    return std::abs(encrypted_accuracy - twin_accuracy) <= 0.005 ? 0 : 1;
  });
}

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    return run_train_mlp(argc, argv);
  } catch (const cerium::Error& e) {  // a missing data set, bad options, out of device memory: said, not aborted
    fmt::print(stderr, "train_mlp: {}\n", e.what());
  }
  return 1;
}
