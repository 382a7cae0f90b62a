#pragma once
// A fixed sequence of device work captured once as a CUDA graph and replayed without the host's per-launch cost.
//
// Capture records the device work that `work` queues on the stream (the CUDA backend's work_stream() by default);
// nothing runs during capture. Host-side effects of `work` happen once, at capture: new ciphertext objects, a
// ciphertext's level or scale changing. So capture code that writes into device memory that outlives the graph
// (in-place operations on existing ciphertexts whose level and scale the code leaves as they are), and let every
// temporary it makes go before capture ends (the graph then allocates and frees it on each replay). Work that
// waits on the host (uploads, downloads, plans built for the first time) cannot be captured: run `work` once
// before capturing so that its plans exist. Failures are DeviceError naming the call.

#include <functional>
#include <memory>

#include "cerium/backend/cuda/stream.hpp"

namespace cerium::cuda {

// A captured CUDA graph (see the file comment), replayed on the stream it was captured on. Copies share it.
class Graph {
 public:
  Graph() = default;
  // The work `work` queues on `stream` (InvalidArgument for the legacy default stream), captured and instantiated.
  // An exception from `work` ends the capture, leaves the stream usable and propagates.
  static Graph capture(const Stream& stream, const std::function<void()>& work);
  // Captures on the CUDA backend's work stream of device 0 (cuda/memory.hpp).
  static Graph capture(const std::function<void()>& work);

  // Queues one run of the graph on its stream; returns without waiting.
  void replay() const;
  // The same on another stream of its device (what it reads must be ready there: Stream::wait), so that several
  // graphs run side by side. One run of a graph at a time.
  void replay(const Stream& stream) const;
  bool empty() const { return state_ == nullptr; }  // default-made: nothing to replay

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace cerium::cuda
