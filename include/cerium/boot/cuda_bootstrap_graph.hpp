#pragma once
// The whole GPU bootstrap of one input shape as a CUDA graph: captured once, then replayed for each input, so
// that the host issues one launch instead of the bootstrap's thousands (the host's issue time is close to the
// device time at N = 2^16; bench/RESULTS.md).
//
//   boot::CudaBootstrapGraph graph(boot, example);   // example: a device ciphertext of the inputs' shape
//   ckks::Ciphertext fresh = graph.bootstrap(input); // the words of boot.bootstrap(input)
//
// The graph reads its own copy of the input and writes its own output; bootstrap() copies the input in, replays
// and returns a copy of the output, all ordered on the CUDA backend's work stream. Host-side values are fixed at
// capture (the scale-down constant depends on the input's scale), so inputs must have the example's level,
// scale, slot count and parts: another shape is an InvalidArgument naming both (make a graph for that shape).
// The bootstrapper must outlive the graph, with its keys set. One bootstrap at a time per graph (its input and
// output buffers are its own); use a graph per thread.

#include "cerium/backend/cuda/graph.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#include "cerium/ckks/ciphertext.hpp"

namespace cerium::boot {

// One input shape's GPU bootstrap, captured as a CUDA graph and replayed (the header comment).
class CudaBootstrapGraph {
 public:
  // Runs one eager bootstrap of `example` first (it builds the plans, which capture cannot), then captures.
  CudaBootstrapGraph(const CudaBootstrapper& bootstrapper, const Ciphertext& example);

  // A device ciphertext of the captured shape in, its bootstrap out.
  Ciphertext bootstrap(const Ciphertext& input) const;
  // The captured work alone on the captured input (what a benchmark times); output() holds its result.
  void replay() const { graph_.replay(); }
  // The same on another stream of the device (what it reads must be ready there: cuda::Stream::wait), so that
  // several graphs bootstrap side by side (one graph per input: each reads and writes its own buffers).
  void replay(const cuda::Stream& stream) const { graph_.replay(stream); }
  const Ciphertext& output() const { return output_; }

 private:
  const CudaBootstrapper* bootstrapper_;
  mutable Ciphertext input_;  // the device words the graph reads (overwritten by each bootstrap())
  Ciphertext output_;  // the device words the graph writes
  cuda::Graph graph_;
};

}  // namespace cerium::boot
