#include "cerium/dist/in_process.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/core/parallel.hpp"

namespace cerium::dist {

namespace {

// What a rank posted for the current collective.
struct Post {
  Collective kind = Collective::barrier;
  int root = -1;
  const void* source = nullptr;  // the rank's input words
  std::size_t bytes = 0;         // of the input
  std::vector<std::size_t> counts;
};

}  // namespace

class InProcessCommunicator;

struct InProcessGroup::State {
  int size = 1;
  InProcessOptions options;
  std::mutex mutex;
  std::condition_variable changed;
  int arrived = 0;
  std::uint64_t generation = 0;
  bool aborted = false;
  std::string reason;
  std::vector<Post> posts;
  // Point-to-point messages in flight, by (from, to).
  std::map<std::pair<int, int>, std::deque<std::vector<std::uint32_t>>> mailboxes;
  std::vector<std::unique_ptr<InProcessCommunicator>> ranks;

  void abort_locked(std::string why) {
    if (!aborted) {
      aborted = true;
      reason = std::move(why);
    }
    changed.notify_all();
  }
  [[noreturn]] void fail_locked() { throw CommunicationError(reason); }

  // Waits until every rank has arrived (the last one advances the generation).
  void meet(std::unique_lock<std::mutex>& lock, int rank, Collective kind) {
    if (aborted) fail_locked();
    const std::uint64_t mine = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      changed.notify_all();
      return;
    }
    const bool done = changed.wait_for(lock, options.timeout, [&] { return generation != mine || aborted; });
    if (!done) {
      abort_locked(fmt::format("rank {} waited {} ms for the other ranks at a {}: a rank failed, stopped or took "
                               "another path (every rank must call the same collectives in the same order)",
                               rank, options.timeout.count(), to_string(kind)));
    }
    if (aborted) fail_locked();
  }
};

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(int rank, InProcessGroup::State& state) : Communicator(rank, state.size), state_(state) {}
  std::string transport() const override { return "in-process"; }

 protected:
  void do_all_gather(std::span<const std::uint32_t> mine, std::span<std::uint32_t> all,
                     std::span<const std::size_t> counts) override {
    exchange(Post{Collective::all_gather, -1, mine.data(), mine.size_bytes(), {counts.begin(), counts.end()}},
             [&](const std::vector<Post>& posts) {
               std::size_t offset = 0;
               for (const Post& p : posts) {
                 if (p.bytes != 0) std::memcpy(all.data() + offset, p.source, p.bytes);
                 offset += p.bytes / sizeof(std::uint32_t);
               }
             });
  }
  void do_broadcast(std::span<std::byte> bytes, int root) override {
    exchange(Post{Collective::broadcast, root, bytes.data(), bytes.size(), {}}, [&](const std::vector<Post>& posts) {
      if (rank() != root && !bytes.empty()) std::memcpy(bytes.data(), posts[root].source, bytes.size());
    });
  }
  void do_all_reduce_sum(std::span<std::uint64_t> words) override {
    std::vector<std::uint64_t> sum(words.size(), 0);
    exchange(Post{Collective::all_reduce, -1, words.data(), words.size_bytes(), {}},
             [&](const std::vector<Post>& posts) {
               for (const Post& p : posts) {
                 const auto* w = static_cast<const std::uint64_t*>(p.source);
                 for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += w[i];
               }
             });
    std::copy(sum.begin(), sum.end(), words.begin());  // after everyone read this rank's inputs
  }
  void do_send(std::span<const std::uint32_t> words, int peer) override {
    const std::lock_guard lock(state_.mutex);
    if (state_.aborted) state_.fail_locked();
    state_.mailboxes[{rank(), peer}].emplace_back(words.begin(), words.end());
    state_.changed.notify_all();
  }
  void do_receive(std::span<std::uint32_t> words, int peer) override {
    std::unique_lock lock(state_.mutex);
    auto& box = state_.mailboxes[{peer, rank()}];
    const bool arrived = state_.changed.wait_for(lock, state_.options.timeout,
                                                 [&] { return !box.empty() || state_.aborted; });
    if (state_.aborted) state_.fail_locked();
    if (!arrived) {
      state_.abort_locked(fmt::format("rank {} waited {} ms for a message from rank {} that never came", rank(),
                                      state_.options.timeout.count(), peer));
      state_.fail_locked();
    }
    std::vector<std::uint32_t> message = std::move(box.front());
    box.pop_front();
    if (message.size() != words.size()) {
      state_.abort_locked(fmt::format("rank {} expected {} words from rank {} and got {}", rank(), words.size(), peer,
                                      message.size()));
      state_.fail_locked();
    }
    std::copy(message.begin(), message.end(), words.begin());
  }
  void do_barrier() override { exchange(Post{}, [](const std::vector<Post>&) {}); }

 private:
  // Posts this rank's part, meets the others, checks that they called the same collective alike, lets `read`
  // copy from everyone's posts, and meets them again so that no post is reused while someone still reads it.
  template <class Read>
  void exchange(Post post, Read&& read) {
    std::unique_lock lock(state_.mutex);
    const Collective kind = post.kind;
    state_.posts[rank()] = std::move(post);
    state_.meet(lock, rank(), kind);
    const std::string mismatch = compare(state_.posts);
    if (!mismatch.empty()) {
      state_.abort_locked(mismatch);
      state_.fail_locked();
    }
    lock.unlock();
    read(state_.posts);
    lock.lock();
    state_.meet(lock, rank(), kind);
  }

  static std::string compare(const std::vector<Post>& posts) {
    const Post& first = posts[0];
    for (std::size_t r = 1; r < posts.size(); ++r) {
      const Post& p = posts[r];
      if (p.kind != first.kind) {
        return fmt::format("rank 0 called a {} while rank {} called a {}: the ranks' call sequences differ",
                           to_string(first.kind), r, to_string(p.kind));
      }
      if (p.root != first.root) {
        return fmt::format("rank 0 broadcasts from rank {}, rank {} from rank {}", first.root, r, p.root);
      }
      if (p.counts != first.counts) {
        return fmt::format("the ranks passed different counts to an all-gather (rank 0 and rank {})", r);
      }
      // An all-gather's sizes differ by rank (its counts are compared above); the others must be equal.
      const bool sized = p.kind == Collective::broadcast || p.kind == Collective::all_reduce;
      if (sized && p.bytes != first.bytes) {
        return fmt::format("a {} of {} bytes on rank 0 and of {} bytes on rank {}", to_string(p.kind), first.bytes,
                           p.bytes, r);
      }
    }
    return {};
  }

  InProcessGroup::State& state_;
};

InProcessGroup::InProcessGroup(int size, InProcessOptions options) : state_(std::make_shared<State>()) {
  require(size >= 1 && size <= 1024, "an in-process group of {} ranks (1 to 1024)", size);
  state_->size = size;
  state_->options = options;
  state_->posts.resize(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) state_->ranks.push_back(std::make_unique<InProcessCommunicator>(r, *state_));
}

InProcessGroup::~InProcessGroup() = default;

int InProcessGroup::size() const { return state_->size; }

Communicator& InProcessGroup::communicator(int rank) {
  require(rank >= 0 && rank < state_->size, "rank {} of an in-process group of {}", rank, state_->size);
  return *state_->ranks[static_cast<std::size_t>(rank)];
}

void InProcessGroup::abort(const std::string& reason) {
  const std::lock_guard lock(state_->mutex);
  state_->abort_locked(reason);
}

void InProcessGroup::run(const std::function<void(Communicator&)>& body) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(state_->size));
  std::vector<std::thread> threads;
  threads.reserve(errors.size());
  for (int r = 0; r < state_->size; ++r) {
    threads.emplace_back([&, r] {
      try {
        use_one_cpu_thread_here();
        body(communicator(r));
      } catch (const CommunicationError&) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        abort(fmt::format("rank {} failed: {}", r, e.what()));
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        abort(fmt::format("rank {} failed", r));
      }
    });
  }
  for (auto& t : threads) t.join();
  // A rank's own failure first, then the communication errors it caused elsewhere.
  for (const auto& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const CommunicationError&) {
      continue;
    } catch (...) {
      throw;
    }
  }
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace cerium::dist
