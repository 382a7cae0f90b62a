#pragma once
// Plaintexts encoded ahead of a run on host threads, for runs that do not cache them (a model whose plaintexts
// fully encoded are larger than the device): worker threads encode the program's plaintext operands in program
// order, at most `window` ahead of the one the run is using, and the run takes each when it reaches its node.
// Encoding is the host's work (an FFT and one NTT per limb); spread over the cores it keeps up with the device
// instead of leaving it idle while one core encodes. The value type is what the host makes per node: a compressed
// encoding (PlaintextStream) or encoding's first half alone (UnscaledStream, finished on the device).

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cerium/ckks/periodic_plaintext.hpp"
#include "cerium/ckks/unscaled_plaintext.hpp"
#include "cerium/core/parallel.hpp"
#include "cerium/graph/node.hpp"

namespace cerium::graph {

// The plaintexts of a run, made by `threads` workers at most `window` nodes ahead of the run (see the file
// comment); T is what the host makes per node.
template <class T>
class EncodedAhead {
 public:
  // Makes one node's T on a worker thread.
  using Encode = std::function<T(NodeId)>;

  // `order`: the plaintext nodes in the order the run reaches them; `encode` must be thread-safe.
  EncodedAhead(std::vector<NodeId> order, Encode encode, unsigned threads, std::size_t window)
      : order_(std::move(order)), encode_(std::move(encode)), ready_(order_.size()), window_(window) {
    // The order is the run's, not the ids' (a sum's products come at its root): size by the largest id.
    position_.assign(order_.empty() ? 0 : *std::max_element(order_.begin(), order_.end()) + 1, order_.size());
    for (std::size_t k = 0; k < order_.size(); ++k) position_[order_[k]] = k;
    for (unsigned t = 0; t < threads; ++t) {
      workers_.emplace_back([this] {
        use_one_cpu_thread_here();  // the workers are the parallelism: no team each
        work();
      });
    }
  }
  // Not copyable (the workers hold `this`). The destructor stops them, each after the plaintext it is making, and
  // joins them.
  EncodedAhead(const EncodedAhead&) = delete;
  EncodedAhead& operator=(const EncodedAhead&) = delete;
  ~EncodedAhead() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  // Whether node id's plaintext comes from this stream (it is in `order`).
  bool streams(NodeId id) const { return id < position_.size() && position_[id] < order_.size(); }

  // The node's host plaintext, waiting for it if need be; each node's is taken once, in order. A failed encoding
  // is rethrown here.
  T take(NodeId id) {
    const std::size_t k = position_.at(id);
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ready_[k].value.has_value() || ready_[k].failure; });
    if (ready_[k].failure) std::rethrow_exception(ready_[k].failure);
    T p = std::move(*ready_[k].value);
    ready_[k].value.reset();
    taken_ = k + 1;
    lock.unlock();
    changed_.notify_all();
    return p;
  }

 private:
  struct Slot {
    std::optional<T> value;
    std::exception_ptr failure;
  };

  void work() {
    for (;;) {
      std::size_t k = 0;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || next_ >= order_.size() || next_ < taken_ + window_; });
        if (stopping_ || next_ >= order_.size()) return;
        k = next_++;
      }
      Slot slot;
      try {
        slot.value = encode_(order_[k]);
      } catch (...) {
        slot.failure = std::current_exception();
      }
      {
        std::lock_guard lock(mutex_);
        ready_[k] = std::move(slot);
      }
      changed_.notify_all();
    }
  }

  std::vector<NodeId> order_;
  std::vector<std::size_t> position_;  // node -> index in order_ (order_.size() for other nodes)
  Encode encode_;
  std::vector<Slot> ready_;
  std::size_t window_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t next_ = 0;   // the next index a worker encodes
  std::size_t taken_ = 0;  // indices below have been taken by the run
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// Compressed encodings, uploaded and expanded where the evaluator computes.
using PlaintextStream = EncodedAhead<ckks::PeriodicPlaintext>;
// Encoding's first half, uploaded and encoded where the evaluator computes.
using UnscaledStream = EncodedAhead<ckks::UnscaledPlaintext>;

}  // namespace cerium::graph
