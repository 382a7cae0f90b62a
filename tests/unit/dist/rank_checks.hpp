#pragma once
// Checks made on rank threads, asserted on the test's thread: Catch2's assertion macros are not thread-safe.
#include <mutex>
#include <string>
#include <vector>

namespace sharded_test {

class RankChecks {
 public:
  // Records `what` (on which rank) when ok is false.
  void check(bool ok, int rank, const std::string& what) {
    if (ok) return;
    const std::lock_guard lock(mutex_);
    failures_.push_back("rank " + std::to_string(rank) + ": " + what);
  }
  // Every failure, one per line (empty when all held).
  std::string failures() const {
    const std::lock_guard lock(mutex_);
    std::string out;
    for (const auto& f : failures_) out += f + "\n";
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> failures_;
};

}  // namespace sharded_test
