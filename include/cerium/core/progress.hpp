#pragma once
// Progress callbacks for long jobs (key generation, bootstrapping set-up, model loading).

#include <cstdint>
#include <functional>
#include <string_view>

namespace cerium {

// One report of a task's progress: `done` of `total` steps.
struct ProgressEvent {
  std::string_view task;  // what runs, e.g. "galois keys"
  std::uint64_t done = 0;   // steps finished so far
  std::uint64_t total = 0;  // steps in all
  // done / total; 1 for a task of no steps.
  double fraction() const { return total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total); }
};

// Called on the thread that does the work. An empty callback costs one branch per step.
using ProgressCallback = std::function<void(const ProgressEvent&)>;

// Counts steps of one task and reports each to an optional callback.
class ProgressReporter {
 public:
  // Reports the task's start (0 of total) at once.
  ProgressReporter(ProgressCallback callback, std::string_view task, std::uint64_t total)
      : callback_(std::move(callback)), task_(task), total_(total) {
    report();
  }
  // Counts `steps` more and reports them.
  void advance(std::uint64_t steps = 1) {
    done_ += steps;
    report();
  }
  std::uint64_t done() const { return done_; }    // steps counted so far
  std::uint64_t total() const { return total_; }  // steps in all

 private:
  void report() const {
    if (callback_) callback_(ProgressEvent{task_, done_, total_});
  }
  ProgressCallback callback_;
  std::string_view task_;
  std::uint64_t total_ = 0;
  std::uint64_t done_ = 0;
};

}  // namespace cerium
