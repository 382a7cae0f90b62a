#include "slot_pool.hpp"

#include <algorithm>

namespace cerium::graph {

namespace {

// A few hundred pauses, then the core is offered to others: a worker waiting on a serial stretch of the caller
// (a plaintext's diagonal made, an allocation) does not keep a loaded core from them.
void relax(unsigned& spins) {
  if (++spins < 512) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    std::this_thread::yield();
  }
}

}  // namespace

SlotPool::SlotPool(std::size_t threads) {
  for (std::size_t t = 1; t < threads; ++t) workers_.emplace_back([this] { worker(); });
}

SlotPool::~SlotPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  for (std::thread& t : workers_) t.join();
}

std::size_t SlotPool::parts(std::size_t size) const {
  if (workers_.empty() || size < kSmallest) return 1;
  // Two parts a thread evens out a thread that starts late; parts of whole cache lines of complex doubles.
  const std::size_t wanted = 2 * threads();
  const std::size_t part = std::max<std::size_t>(64, (size + wanted - 1) / wanted / 64 * 64);
  return (size + part - 1) / part;
}

void SlotPool::dispatch(std::size_t size, void* body, Call call) {
  parts_ = parts(size);
  part_size_ = (size + parts_ - 1) / parts_;
  size_ = size;
  body_ = body;
  call_ = call;
  failed_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  done_parts_.store(0, std::memory_order_relaxed);
  // Released: a worker late from the last run that claims a part now sees this run's fields.
  next_part_.store(0, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  work_parts();
  unsigned spins = 0;
  while (done_parts_.load(std::memory_order_acquire) < parts_) relax(spins);
  if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(error_);
}

void SlotPool::work_parts() {
  for (std::size_t part = next_part_.fetch_add(1, std::memory_order_acq_rel); part < parts_;
       part = next_part_.fetch_add(1, std::memory_order_acq_rel)) {
    const std::size_t begin = part * part_size_, end = std::min(size_, begin + part_size_);
    try {
      call_(body_, part, begin, end);
    } catch (...) {
      if (!failed_.exchange(true, std::memory_order_acq_rel)) error_ = std::current_exception();
    }
    done_parts_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void SlotPool::worker() {
  // From the generation at construction, not a fresh load: a worker that starts after the first run (or after
  // the destructor's signal) must still see that one.
  std::uint64_t seen = 0;
  for (;;) {
    unsigned spins = 0;
    std::uint64_t now;
    while ((now = generation_.load(std::memory_order_acquire)) == seen) relax(spins);
    seen = now;
    if (stop_.load(std::memory_order_acquire)) return;
    work_parts();
  }
}

}  // namespace cerium::graph
