#pragma once
// A planned program's run recorded once as device graphs (CUDA graphs on the GPU) and replayed for each new input,
// so that the host issues a few launches per run instead of one per kernel. At N = 2^16 a model's operations at
// low levels take the device a few microseconds each, about what the host needs to issue one; replayed, they run
// back to back (bench/RESULTS.md has the figures).
//
//   graph::Executor<backend::CudaBackend> executor(plan, gpu, &bootstrapper, {.cache_plaintexts = true});
//   graph::CapturedRun<backend::CudaBackend> captured(executor, examples);  // one eager run, then the capture
//   std::vector<ckks::Ciphertext> y = captured.run(inputs);               // the executor's words for inputs
//
// What capture fixes: every host-side decision of the run is taken once, on the examples, so inputs must have
// the examples' level, scale, slot count and parts (another shape is an InvalidArgument naming both: capture
// another CapturedRun for it). The run may queue nothing but device work after its first: the executor caches its
// plaintexts (ExecutorOptions::cache_plaintexts) and, after the eager run, holds every one on the device, encoded
// or unscaled (Executor::host_encoded_plaintexts() is 0), and places nothing over ranks. The bootstrapper computes
// on the executor's device (its work goes to the same stream).
//
// Segments: CaptureOptions::segment_nodes nodes to a graph (0: the whole run in one). A value computed in one
// segment and read in a later one lives in memory that the first graph allocates and the later one frees, so the
// segments must be replayed in order, every one of them, as run() does.
//
// Memory: the graphs' temporaries come from the driver's graph pool (not the pool that cuda::memory_stats counts),
// reserved at the first replay and kept between replays; the unused part of the ordinary pool is released before
// capture so that the two do not hold the run's working set twice. One run at a time per CapturedRun: the input
// and output buffers are its own.

#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/core/check.hpp"
#include "cerium/graph/executor.hpp"

namespace cerium::graph {

// How CapturedRun cuts a run into graphs.
struct CaptureOptions {
  // Nodes of the program per graph; 0: one graph for the whole run. Smaller graphs instantiate faster and use
  // less host memory; each costs one more launch per run.
  std::size_t segment_nodes = 0;
  // Run options of the recorded run (profiling is refused: it waits on the host after each node).
  RunOptions run = {};
};

// An executor's run, captured once and replayed (see the file comment).
template <backend::PolyBackend B>
class CapturedRun {
  static_assert(backend::WorkCapture<B>,
                "a captured run needs a backend that records device work (the CUDA backend)");

 public:
  // Runs the executor eagerly on copies of `examples` (their outputs are outputs() until the first replay), then
  // records the run on copies of them. The executor must outlive this object.
  CapturedRun(const Executor<B>& executor, const std::vector<ckks::Ciphertext>& examples, CaptureOptions options = {})
      : executor_(&executor) {
    const ExecutorOptions& eo = executor.options();
    require<UnsupportedError>(eo.placement == nullptr,
                              "captured run: a program placed over ranks exchanges values through the host; run it "
                              "with Executor::run");
    require<UnsupportedError>(!options.run.profile,
                              "captured run: profiling waits for the device after each node; profile with "
                              "Executor::run");
    require<UnsupportedError>(eo.cache_plaintexts,
                              "captured run: the executor encodes its plaintexts on the host at each use; make it "
                              "with ExecutorOptions::cache_plaintexts so that they stay on the device");
    const auto& ev = executor.evaluator();
    for (const auto& example : examples) inputs_.push_back(ev.upload(example));
    outputs_ = executor.run(copies(inputs_), {}, options.run);  // plans built, plaintexts cached: the shapes
    const std::size_t on_host = executor.host_encoded_plaintexts();
    require<UnsupportedError>(on_host == 0,
                              "captured run: {} of the plan's plaintexts do not fit the executor's device cache and "
                              "would be encoded on the host at each run; raise ExecutorOptions::plaintext_cache_bytes "
                              "or unscaled_bytes (0: no bound), or run them with Executor::run",
                              on_host);
    const auto capture_start = std::chrono::steady_clock::now();
    const std::size_t nodes = executor.plan().program.size();
    const std::size_t step = options.segment_nodes == 0 ? nodes : options.segment_nodes;
    std::optional<typename Executor<B>::Walk> walk;
    for (std::size_t first = 0; first < nodes || graphs_.empty(); first += step) {
      const std::size_t end = std::min(nodes, first + step);
      graphs_.push_back(ev.backend().capture([&] {
        if (!walk.has_value()) walk.emplace(executor.start(copies(inputs_), options.run));
        executor.advance(*walk, static_cast<NodeId>(end));
        if (end < nodes) return;
        std::vector<ckks::Ciphertext> results = executor.finish(std::move(*walk));
        walk.reset();
        require(results.size() == outputs_.size(), "captured run: {} outputs recorded, {} from the eager run",
                results.size(), outputs_.size());
        for (std::size_t o = 0; o < results.size(); ++o) copy_words(outputs_[o], results[o], "output");
      }));
      if (end >= nodes) break;
    }
    capture_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - capture_start).count();
  }

  // The recorded run on `inputs` (each of its example's shape): the words Executor::run gives them. The results
  // are copies; outputs() holds them too until the next run.
  std::vector<ckks::Ciphertext> run(const std::vector<ckks::Ciphertext>& inputs) const {
    load(inputs);
    for (const auto& graph : graphs_) graph.replay();
    return copies(outputs_);
  }

  // Side by side: several CapturedRuns of one executor, each started on a stream of its own, run at once (a model's
  // late layers leave most of the device idle). start() copies the inputs in on the backend's work stream and
  // queues the graphs on `stream` after them; collect() makes the work stream wait for `stream` and returns
  // copies of the outputs, as run() would. Start every run first, then collect them. One run at a time per
  // CapturedRun; `stream` must be of the executor's device.
  template <class Stream>
  void start(const std::vector<ckks::Ciphertext>& inputs, const Stream& stream) const {
    load(inputs);
    stream.wait(executor_->evaluator().backend().work_stream());
    for (const auto& graph : graphs_) graph.replay(stream);
  }
  template <class Stream>
  std::vector<ckks::Ciphertext> collect(const Stream& stream) const {
    executor_->evaluator().backend().work_stream().wait(stream);
    return copies(outputs_);
  }

  // The last run's outputs on the device (the eager run's until the first replay); overwritten by each run.
  const std::vector<ckks::Ciphertext>& outputs() const { return outputs_; }
  std::size_t segments() const { return graphs_.size(); }      // graphs recorded
  double capture_seconds() const { return capture_seconds_; }  // recording and instantiating them

 private:
  // Checks the inputs against the recorded shapes and copies them into the buffers the graphs read.
  void load(const std::vector<ckks::Ciphertext>& inputs) const {
    require(inputs.size() == inputs_.size(), "captured run: {} inputs given; it was recorded with {}", inputs.size(),
            inputs_.size());
    const auto& ev = executor_->evaluator();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const ckks::Ciphertext& in = inputs[i];
      const ckks::Ciphertext& want = inputs_[i];
      ckks::require_same_context(want.context(), in.context(), "captured run: an input");
      require(in.level() == want.level() && in.scale() == want.scale() && in.slots() == want.slots() &&
                  in.size() == want.size(),
              "captured run: input {} (level {}, scale {}, {} slots, {} parts) is not the recorded shape (level {}, "
              "scale {}, {} slots, {} parts); record a CapturedRun for this shape",
              i, in.level(), ckks::format_scale(in.scale()), in.slots(), in.size(), want.level(),
              ckks::format_scale(want.scale()), want.slots(), want.size());
      const bool on_device = !in.part(0).host_accessible();
      if (on_device) {
        copy_words(inputs_[i], in, "input");
      } else {
        copy_words(inputs_[i], ev.upload(in), "input");
      }
    }
  }
  static std::vector<ckks::Ciphertext> copies(const std::vector<ckks::Ciphertext>& values) {
    std::vector<ckks::Ciphertext> out;
    out.reserve(values.size());
    for (const auto& v : values) out.push_back(v.clone());
    return out;
  }

  // dst's words := src's, queued on the device: both of one shape.
  void copy_words(ckks::Ciphertext& dst, const ckks::Ciphertext& src, const char* what) const {
    require(dst.size() == src.size() && dst.level() == src.level(),
            "captured run: the recorded {} changed shape ({} parts at level {} against {} at level {})", what,
            src.size(), src.level(), dst.size(), dst.level());
    for (std::size_t k = 0; k < src.size(); ++k) executor_->evaluator().backend().copy_into(dst.part(k), src.part(k));
  }

  const Executor<B>* executor_;
  mutable std::vector<ckks::Ciphertext> inputs_;  // the device words the graphs read (overwritten by each run)
  std::vector<ckks::Ciphertext> outputs_;         // the device words the last graph writes
  std::vector<decltype(std::declval<const B&>().capture(std::declval<const std::function<void()>&>()))> graphs_;
  double capture_seconds_ = 0;
};

}  // namespace cerium::graph
