#pragma once
// Host threads that split one node's slots among them (graph/simulate.cpp). A node is short (about 20 us at 2^15
// slots on one core), so the workers spin between nodes rather than sleep, and the caller works too: a fork and
// join costs well under a microsecond while every thread has a core of its own. On a loaded machine spinning
// threads take cores from others: PlanOptions::simulation_threads is 1 unless a user asks.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace cerium::graph {

class SlotPool {
 public:
  // threads - 1 workers (0 for threads <= 1: run() then calls the body once, on the caller's thread).
  explicit SlotPool(std::size_t threads);
  ~SlotPool();
  SlotPool(const SlotPool&) = delete;
  SlotPool& operator=(const SlotPool&) = delete;

  std::size_t threads() const { return workers_.size() + 1; }
  // body(part, begin, end) for the parts of [0, size), each once, on every thread; returns when all are done
  // (the first exception a part throws is rethrown here). parts(size) says how many parts there are.
  template <class Body>
  void run(std::size_t size, Body& body) {
    if (workers_.empty() || size < kSmallest) {
      body(0, 0, size);
      return;
    }
    dispatch(size, &body, [](void* b, std::size_t part, std::size_t begin, std::size_t end) {
      (*static_cast<Body*>(b))(part, begin, end);
    });
  }
  std::size_t parts(std::size_t size) const;

 private:
  using Call = void (*)(void*, std::size_t, std::size_t, std::size_t);
  static constexpr std::size_t kSmallest = 4096;  // below this many slots, one thread does the node
  void dispatch(std::size_t size, void* body, Call call);
  void work_parts();  // claims parts until none is left
  void worker();

  std::vector<std::thread> workers_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> next_part_{0}, done_parts_{0};
  std::size_t size_ = 0, part_size_ = 0, parts_ = 0;
  void* body_ = nullptr;
  Call call_ = nullptr;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

}  // namespace cerium::graph
