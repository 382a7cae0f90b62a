// Encrypted ResNet-20 inference of one image on the GPU (issue 20): N = 2^16, bootstrappable_n16, 16384 slots,
// the model, image, plan and bootstrapper of examples/resnet20.cpp's GPU run (resnet20_setup.hpp: the trained
// Fashion-MNIST weights with the degree-31 ReLU on [-16, 16] when data/resnet20_fashion_mnist.crwt exists, else
// seeded weights; Fashion-MNIST test image 0 when the test set is found, else seeded pixels).
//
// Set up once for the process (static, like bench_graph_gpu's): the program traced and planned, only the keys the
// plan needs (relinearization and plan.keys, seeded and expanded on upload) plus the bootstrapper's, every
// plaintext encoded ahead and kept on the device (Executor::encode_plaintexts), the image encrypted on the host.
// Then one run as warm-up, whose logits are decrypted and checked: its class must be the plaintext twin's (the same
// polynomial ReLUs in doubles), else every benchmark here ends with SkipWithError (as on a failed setup or a run's
// error, out of device memory say, so that the JSON stays whole). The setup holds its keys and plaintexts on the
// device for the rest of the process: run these alone (--benchmark_filter=resnet20), as scripts/gpu-check.sh does.
//
// What is timed: CUDA events on the work stream around Executor::run of the host ciphertext, i.e. its upload, every
// node and bootstrap, up to the logits' ciphertext on the device; host encryption (before) and the download and
// decryption of the logits (after) are outside, as in the example's timing of an image. The events bracket the
// host's issuing too, so this is the latency of one image with whatever the host adds (host_issue_ms is the host's
// time to issue the run: when it nears the device time, the GPU waits on the host).
//
// The memory floor (floor_ratio = time / (floor bytes / copy bandwidth measured in this process)): bytes the run
// must read at least once:
//  - the switching key of every key switch of the plan (relinearizations and rotations; hoisted rotations each
//    read their own key): 2 x dnum(l) x (limbs(l) + alpha) limbs at the level l the key switch runs at;
//  - every plaintext of the plan once, at the level it is used (Plan::plaintext_encoded_bytes);
//  - per bootstrap, every bootstrap key once at full size (bench_bootstrap_gpu's floor) and its DFT diagonals once
//    (BasicBootstrapper::plaintext_bytes).
// Ciphertext traffic comes on top, so a ratio of 1 is out of reach; the components are counters (floor_*_GB). For
// the trained model (20,034 nodes, 1,057 key switches, 17 bootstraps; counted on the host): 41 GB of plan keys,
// 47 GB of plaintexts and 17 x 15 GB for the bootstraps (48 keys of 0.19 GB, 5.8 GB of diagonals), 343 GB in all:
// 80 ms at 4.3 TB/s. Resident on the device: about 87 GB (131 rotation keys 25 GB, bootstrap keys 9 GB, diagonals
// 6 GB, plaintexts 47 GB) on an H200; where the device is smaller (an H100), the plaintexts that do not fit are kept
// unscaled and encoded at each use, as examples/resnet20.cpp does (plaintexts_cached_GB says how much stayed).
//
// Benchmarks:
//  - BM_resnet20_one_image_gpu: the latency of one image (5 timed runs); counters N, limbs (at the top), dnum,
//    bootstraps, nodes, key_switches, device memory, bootstrap_share (from one profiled run), floor_ratio, the
//    class against the twin's and the label.
//  - BM_resnet20_layer_profile_gpu: one profiled run (graph::RunOptions::profile: the device waited for after
//    every node, so the total exceeds the plain run's); counters ms_<layer> per layer label of the model (stem
//    conv, block 1 conv1, ..., avgpool, fc), bootstraps_<layer> where a layer bootstraps, and totals by kind.
//  - BM_resnet20_images_per_second_gpu/images:4: four encrypted images run back to back between one pair of events
//    (one stream: the host issues the next image while the device finishes the last), images_per_second.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cerium/backend/cuda/memory.hpp"
#include "cerium/backend/cuda/timer.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/executor.hpp"
#include "gpu_bench_support.hpp"
#include "plaintext_budget.hpp"
#include "resnet20_setup.hpp"

namespace {

using namespace cerium;
namespace rn = cerium_bench::resnet20;
using clock_type = std::chrono::steady_clock;

constexpr double kGB = 1e9;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Bytes a key switch at `level` reads of its switching key: both halves of dnum(level) digits over the level's
// limbs and the alpha special primes (a seeded key's uniform halves are expanded on upload: read like the others).
double key_switch_bytes(const ckks::Context& context, int level) {
  return 2.0 * static_cast<double>(context.digit_count(level) * (context.limbs_at(level) + context.alpha()) *
                                   context.ring_degree() * sizeof(std::uint32_t));
}

// Every bootstrap key read once: at full size (bench_bootstrap_gpu's floor), the encapsulation key to the sparse
// secret at level 0, where it is used (its other limbs are zeros).
double bootstrap_key_bytes(const ckks::Context& context, const boot::BootstrapKeys& keys) {
  std::size_t full_keys = keys.relinearization ? 1 : 0;
  if (keys.galois) full_keys += keys.galois->galois_elements().size();
  if (keys.from_sparse) ++full_keys;
  return static_cast<double>(full_keys) * key_switch_bytes(context, context.max_level()) +
         (keys.to_sparse ? key_switch_bytes(context, 0) : 0.0);
}

// Switching-key bytes the plan's key switches read, each at the level its operands meet.
double plan_key_switch_bytes(const graph::Plan& plan) {
  const ckks::Context& context = *plan.program.context();
  double bytes = 0;
  for (graph::NodeId id = 0; id < plan.program.size(); ++id) {
    const graph::Node& node = plan.program.node(id);
    const int count = graph::key_switches(node.op);
    if (count == 0) continue;
    int level = plan.nodes[node.inputs[0]].held_level;
    for (const graph::NodeId input : node.inputs) level = std::min(level, plan.nodes[input].held_level);
    bytes += count * key_switch_bytes(context, level);
  }
  return bytes;
}

std::string counter_name(const std::string& prefix, const std::string& layer) {
  std::string name = prefix;
  for (const char c : layer) name += c == ' ' ? '_' : c;
  return name;
}

struct ResNet20Gpu {
  // Host side: the image, the model, its plan and the twin's logits.
  rn::Sample sample = rn::load_sample(nn::Shape{3, 32, 32});
  bool trained = false;
  nn::ResNet model = rn::load_model(sample.image, trained);
  ckks::ContextPtr context = ckks::Context::create(ckks::presets::bootstrappable_n16());
  graph::Plan plan = rn::plan_model(model, context);
  boot::BootstrapConfig boot_config = rn::bootstrap_config(plan);
  std::vector<double> expected = rn::twin_logits(model, sample.image);
  // Keys: exactly the plan's, seeded (expanded on the device when uploaded), and the bootstrapper's.
  ckks::KeyGenerator keygen{context};
  ckks::CudaEvaluator evaluator{context, backend::CudaBackend(context)};
  boot::CudaBootstrapper bootstrapper{context, boot_config, backend::CudaBackend(context)};
  std::unique_ptr<graph::Executor<backend::CudaBackend>> executor;
  ckks::Encoder encoder{context};
  ckks::Ciphertext input;  // the image encrypted on the host
  double setup_seconds = 0, keys_seconds = 0, encode_seconds = 0;
  std::size_t plaintexts = 0;
  std::size_t cache_bytes = 0;  // the plaintext cache's bound (0: every plaintext encoded on the device)
  double floor_key_bytes = 0, floor_plaintext_bytes = 0, floor_bootstrap_bytes = 0;
  double resident_bytes = 0, run_peak_bytes = 0, peak_bytes = 0;  // device memory
  std::size_t encrypted_class = 0, twin_class = 0;
  double max_logit_error = 0;
  std::string error;  // set when the encrypted class is not the twin's
  std::optional<rn::LayerTimes> profile;

  explicit ResNet20Gpu(clock_type::time_point start) {
    auto t = clock_type::now();
    evaluator.set_relinearization_key(
        std::make_shared<const ckks::RelinearizationKey>(keygen.relinearization_key(ckks::KeyStorage::seeded)));
    evaluator.set_galois_keys(std::make_shared<const ckks::GaloisKeys>(
        keygen.galois_keys(plan.keys.steps, plan.keys.conjugation, ckks::KeyStorage::seeded)));
    const auto boot_keys = std::make_shared<const boot::BootstrapKeys>(
        bootstrapper.generate_keys(keygen, {}, ckks::KeyStorage::seeded));
    bootstrapper.set_keys(boot_keys);
    keys_seconds = seconds_since(t);

    floor_key_bytes = plan_key_switch_bytes(plan);
    floor_plaintext_bytes = static_cast<double>(plan.plaintext_encoded_bytes);
    floor_bootstrap_bytes =
        plan.bootstraps() *
        (bootstrap_key_bytes(*context, *boot_keys) + static_cast<double>(bootstrapper.plaintext_bytes()));

    t = clock_type::now();
    // Every plaintext kept encoded where the device has room (an H200), else what fits beside the rest kept
    // unscaled and encoded at each use (an H100: the example's rule, plaintext_budget.hpp).
    cache_bytes = plaintext_cache_bytes<backend::CudaBackend>(std::span<const graph::Plan>(&plan, 1));
    executor = std::make_unique<graph::Executor<backend::CudaBackend>>(
        plan, evaluator, &bootstrapper,
        graph::ExecutorOptions{.cache_plaintexts = true, .plaintext_cache_bytes = cache_bytes});
    plaintexts = executor->encode_plaintexts();
    encode_seconds = seconds_since(t);

    const ckks::Encryptor encryptor(keygen.public_key());
    input = encryptor.encrypt(encoder.encode(model.input_packing().pack(sample.image), plan.input_encoding(0)));

    // The warm-up run, checked: its class must be the plaintext twin's.
    cuda::work_stream().synchronize();
    const cuda::MemoryStats before = cuda::memory_stats();
    resident_bytes = static_cast<double>(before.in_use);
    cuda::reset_peak_memory();
    const std::vector<ckks::Ciphertext> outputs = run();
    const ckks::Decryptor decryptor(keygen.secret_key());
    const std::vector<double> logits =
        rn::logits_of(model, encoder.decode(decryptor.decrypt(evaluator.download(outputs.at(0)))));
    const cuda::MemoryStats after = cuda::memory_stats();
    run_peak_bytes = static_cast<double>(after.peak) - resident_bytes;
    peak_bytes = static_cast<double>(std::max(before.peak, after.peak));
    encrypted_class = rn::arg_max(logits);
    twin_class = rn::arg_max(expected);
    for (std::size_t k = 0; k < logits.size(); ++k) {
      max_logit_error = std::max(max_logit_error, std::abs(logits[k] - expected[k]));
    }
    if (encrypted_class != twin_class) {
      error = "the encrypted class " + std::to_string(encrypted_class) + " is not the plaintext twin's " +
              std::to_string(twin_class) + " (max logit error " + std::to_string(max_logit_error) + ")";
    }
    setup_seconds = seconds_since(start);
    std::cerr << "resnet20 bench: "
              << (trained ? "trained weights " + rn::trained_weights_path().string() : std::string("seeded weights"))
              << ", " << (sample.fashion_mnist ? "Fashion-MNIST test image 0" : "random pixels") << "; "
              << plan.program.size() << " nodes, " << plan.bootstraps() << " bootstraps, " << plan.key_switches()
              << " key switches; keys " << keys_seconds << " s, " << plaintexts << " plaintexts encoded in "
              << encode_seconds << " s; class " << encrypted_class << " (twin " << twin_class << ", label "
              << sample.label << "), max logit error " << max_logit_error << "; setup " << setup_seconds << " s\n";
  }

  std::vector<ckks::Ciphertext> run(const graph::RunProgressCallback& progress = {},
                                    graph::RunOptions options = {}) const {
    std::vector<ckks::Ciphertext> inputs;
    inputs.push_back(input.clone());
    return executor->run(std::move(inputs), progress, options);
  }

  // One profiled run (the device waited for after every node), made on first use.
  const rn::LayerTimes& layer_times() {
    if (!profile) {
      rn::LayerTimes times(plan.program);
      run([&](const graph::RunProgress& p) { times.add(p); }, {.profile = true});
      profile = std::move(times);
    }
    return *profile;
  }

  double floor_bytes() const { return floor_key_bytes + floor_plaintext_bytes + floor_bootstrap_bytes; }
};

// The setup, made once; null with the reason when it failed (no device, out of memory, ...).
struct Holder {
  std::unique_ptr<ResNet20Gpu> setup;
  std::string error;
};

Holder& holder() {
  static Holder h = [] {
    Holder made;
    try {
      const auto start = clock_type::now();
      cerium_bench::copy_bandwidth();  // measured before the keys and plaintexts fill the device
      made.setup = std::make_unique<ResNet20Gpu>(start);
      if (!made.setup->error.empty()) made.error = made.setup->error;
    } catch (const std::exception& e) {
      made.setup.reset();
      made.error = std::string("resnet20 setup failed: ") + e.what();
    }
    if (!made.error.empty()) std::cerr << made.error << "\n";
    return made;
  }();
  return h;
}

// Runs a benchmark's body on the setup; a failed setup, or an error of the body (out of device memory, ...), ends
// the benchmark with SkipWithError rather than the process, so that the JSON of the others stays whole.
void run_guarded(benchmark::State& state, void (*body)(benchmark::State&, ResNet20Gpu&)) {
  Holder& h = holder();
  if (!h.error.empty()) {
    state.SkipWithError(h.error.c_str());
    return;
  }
  try {
    body(state, *h.setup);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void shape_counters(benchmark::State& state, const ResNet20Gpu& s) {
  const ckks::Context& context = *s.context;
  state.counters["N"] = static_cast<double>(context.ring_degree());
  state.counters["limbs"] = static_cast<double>(context.limbs_at(context.max_level()));
  state.counters["dnum"] = static_cast<double>(context.digit_count(context.max_level()));
  state.counters["slots"] = static_cast<double>(rn::kSlots);
  state.counters["bootstraps"] = static_cast<double>(s.plan.bootstraps());
  state.counters["nodes"] = static_cast<double>(s.plan.program.size());
  state.counters["key_switches"] = static_cast<double>(s.plan.key_switches());
  state.counters["trained_weights"] = s.trained ? 1 : 0;
  state.SetLabel(cerium_bench::device_label());
}

void one_image(benchmark::State& state, ResNet20Gpu& s) {
  const auto& stream = cuda::work_stream();
  cuda::EventTimer timer(stream);
  std::vector<double> seconds, host_seconds;
  for (auto _ : state) {
    std::vector<ckks::Ciphertext> inputs;
    inputs.push_back(s.input.clone());  // a host copy, outside the timed region
    stream.synchronize();
    timer.start();
    const auto t0 = clock_type::now();
    std::vector<ckks::Ciphertext> outputs = s.executor->run(std::move(inputs));
    host_seconds.push_back(seconds_since(t0));
    timer.stop();
    seconds.push_back(timer.elapsed_ms() / 1e3);
    state.SetIterationTime(seconds.back());
    benchmark::DoNotOptimize(outputs);
  }
  const double t = cerium_bench::median(seconds);
  const rn::LayerTimes& profile = s.layer_times();
  shape_counters(state, s);
  state.counters["ms"] = t * 1e3;
  state.counters["ms_min"] = *std::min_element(seconds.begin(), seconds.end()) * 1e3;
  state.counters["ms_max"] = *std::max_element(seconds.begin(), seconds.end()) * 1e3;
  state.counters["host_issue_ms"] = cerium_bench::median(host_seconds) * 1e3;
  state.counters["bootstrap_share"] =
      profile.total_seconds() > 0 ? profile.bootstrap_seconds() / profile.total_seconds() : 0.0;
  state.counters["floor_ratio"] = t / (s.floor_bytes() / cerium_bench::copy_bandwidth());
  state.counters["floor_key_GB"] = s.floor_key_bytes / kGB;
  state.counters["floor_plaintext_GB"] = s.floor_plaintext_bytes / kGB;
  state.counters["floor_bootstrap_GB"] = s.floor_bootstrap_bytes / kGB;
  state.counters["copy_GB_s"] = cerium_bench::copy_bandwidth() / kGB;
  state.counters["device_peak_GB"] = s.peak_bytes / kGB;
  state.counters["device_resident_GB"] = s.resident_bytes / kGB;  // keys and plaintexts before a run
  state.counters["run_peak_GB"] = s.run_peak_bytes / kGB;          // what a run adds at its peak
  state.counters["plaintexts"] = static_cast<double>(s.plaintexts);
  state.counters["plaintexts_cached_GB"] =
      (s.cache_bytes == 0 ? s.floor_plaintext_bytes : static_cast<double>(s.executor->plaintext_cache_bytes())) / kGB;
  state.counters["encode_s"] = s.encode_seconds;
  state.counters["keys_s"] = s.keys_seconds;
  state.counters["setup_s"] = s.setup_seconds;
  state.counters["class"] = static_cast<double>(s.encrypted_class);
  state.counters["twin_class"] = static_cast<double>(s.twin_class);
  state.counters["label"] = s.sample.label;
  state.counters["max_logit_error"] = s.max_logit_error;
}

void layer_profile(benchmark::State& state, ResNet20Gpu& s) {
  const rn::LayerTimes& profile = s.layer_times();
  for (auto _ : state) state.SetIterationTime(profile.total_seconds());
  shape_counters(state, s);
  double conv = 0, relu = 0, other = 0;
  for (const rn::LayerTimes::Row& row : profile.rows()) {
    state.counters[counter_name("ms_", row.name)] = row.seconds * 1e3;
    if (row.bootstraps > 0) state.counters[counter_name("bootstraps_", row.name)] = row.bootstraps;
    const auto has = [&](const char* word) { return row.name.find(word) != std::string::npos; };
    if (has("conv") || has("shortcut")) {
      conv += row.seconds;
    } else if (has("relu")) {
      relu += row.seconds;
    } else {
      other += row.seconds;
    }
  }
  state.counters["ms_total"] = profile.total_seconds() * 1e3;
  state.counters["ms_total_conv"] = conv * 1e3;    // convolutions and shortcuts
  state.counters["ms_total_relu"] = relu * 1e3;    // ReLUs with their bootstraps
  state.counters["ms_total_other"] = other * 1e3;  // residual additions, pooling, dense layer
  state.counters["ms_total_bootstrap"] = profile.bootstrap_seconds() * 1e3;
  state.counters["bootstrap_share"] =
      profile.total_seconds() > 0 ? profile.bootstrap_seconds() / profile.total_seconds() : 0.0;
}

void images_per_second(benchmark::State& state, ResNet20Gpu& s) {
  const auto images = static_cast<std::size_t>(state.range(0));
  const auto& stream = cuda::work_stream();
  cuda::EventTimer timer(stream);
  double seconds = 0;
  for (auto _ : state) {
    std::vector<std::vector<ckks::Ciphertext>> inputs(images);
    for (auto& in : inputs) in.push_back(s.input.clone());
    std::vector<std::vector<ckks::Ciphertext>> outputs;
    stream.synchronize();
    timer.start();
    for (auto& in : inputs) outputs.push_back(s.executor->run(std::move(in)));
    timer.stop();
    seconds = timer.elapsed_ms() / 1e3;
    state.SetIterationTime(seconds);
    benchmark::DoNotOptimize(outputs);
  }
  shape_counters(state, s);
  state.counters["images"] = static_cast<double>(images);
  state.counters["images_per_second"] = static_cast<double>(images) / seconds;
  state.counters["ms_per_image"] = seconds * 1e3 / static_cast<double>(images);
  state.counters["floor_ratio"] =
      seconds / (static_cast<double>(images) * s.floor_bytes() / cerium_bench::copy_bandwidth());
}

void BM_resnet20_one_image_gpu(benchmark::State& state) { run_guarded(state, one_image); }
void BM_resnet20_layer_profile_gpu(benchmark::State& state) { run_guarded(state, layer_profile); }
void BM_resnet20_images_per_second_gpu(benchmark::State& state) { run_guarded(state, images_per_second); }

}  // namespace

BENCHMARK(BM_resnet20_one_image_gpu)->UseManualTime()->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_resnet20_layer_profile_gpu)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_resnet20_images_per_second_gpu)
    ->ArgName("images")
    ->Arg(4)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
