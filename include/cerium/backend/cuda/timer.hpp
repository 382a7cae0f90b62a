#pragma once
// Timing device work with CUDA events: the time the device spent between two points of a stream, without the
// host's launch overhead, which is what benchmarks of kernels report.

#include "cerium/backend/cuda/stream.hpp"

namespace cerium::cuda {

// A start and a stop event recorded on one stream, and the device time between them. Move-only.
class EventTimer {
 public:
  // Creates the two events, to be recorded on `stream` (the legacy default stream by default); DeviceError when
  // the runtime refuses.
  explicit EventTimer(Stream stream = {});
  ~EventTimer();  // destroys the events
  // Moves take the events; a moved-from timer cannot record.
  EventTimer(EventTimer&& other) noexcept;
  EventTimer& operator=(EventTimer&& other) noexcept;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void start();  // records the start event on the stream
  void stop();   // records the stop event on the stream
  // Milliseconds between the last start() and stop(); waits for the stop event. Throws DeviceError when
  // either was never recorded.
  double elapsed_ms() const;

 private:
  void* start_ = nullptr;  // cudaEvent_t
  void* stop_ = nullptr;
  Stream stream_;
};

}  // namespace cerium::cuda
