#pragma once
// A CUDA stream behind an opaque handle, so that public headers need no CUDA header.

#include <memory>

namespace cerium::cuda {

// Copies share one stream; the last copy destroys it (after its queued work, as CUDA does). Buffers and plans
// keep a copy of the stream they were made on, so the stream outlives every object that still queues work on it.
class Stream {
 public:
  // The device's default (legacy) stream: nothing is created.
  Stream() = default;

  // A new non-blocking stream on the current device. Throws DeviceError when the runtime refuses.
  static Stream create();
  // A new stream that, like the default stream's users, waits for work queued on the legacy default stream
  // (plans upload their tables there): the stream the CUDA backend computes on. It can be captured into graphs.
  static Stream create_blocking();

  // Blocks until all work queued so far has finished; throws DeviceError for a failure of that work.
  void synchronize() const;
  // Work queued on this stream from now on waits for the work queued on `other` so far (an event between them; the
  // host does not wait). DeviceError when the runtime refuses.
  void wait(const Stream& other) const;

  // The cudaStream_t, as void*; nullptr for the default stream.
  void* native_handle() const;

  bool is_default() const { return native_handle() == nullptr; }  // the legacy default stream

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace cerium::cuda
