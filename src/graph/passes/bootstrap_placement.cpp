#include "cerium/graph/passes/bootstrap_placement.hpp"

#include <algorithm>
#include <functional>
#include <future>
#include <limits>
#include <optional>
#include <queue>
#include <span>
#include <utility>
#include <vector>

#include "cerium/core/check.hpp"

namespace cerium::graph {
namespace {

constexpr int kInfinite = std::numeric_limits<int>::max() / 4;

bool can_bootstrap(const LevelProblem& p, const LevelItem& item) {
  return p.bootstrap_level >= 0 && (item.may_bootstrap || item.pinned);
}

void require_valid(const LevelProblem& p) {
  for (std::size_t i = 0; i < p.items.size(); ++i) {
    const LevelItem& item = p.items[i];
    require((item.start >= 0) == item.inputs.empty(),
            "level problem: item {} must be a source with a level or an operation with operands", i);
    for (const auto u : item.inputs) require(u < i, "level problem: item {} reads item {}, which comes later", i, u);
    require(item.cost >= 0, "level problem: item {} has a negative cost", i);
    require(!item.pinned || p.bootstrap_level >= 0,
            "level problem: item {} is a pinned bootstrap but no bootstrap level is given", i);
  }
}

std::vector<std::vector<std::uint32_t>> consumers_of(const LevelProblem& p) {
  std::vector<std::vector<std::uint32_t>> out(p.items.size());
  for (std::uint32_t i = 0; i < p.items.size(); ++i) {
    for (const auto u : p.items[i].inputs) {
      if (out[u].empty() || out[u].back() != i) out[u].push_back(i);
    }
  }
  return out;
}

int level_of(const LevelProblem& p, std::uint32_t i, const std::vector<int>& effective) {
  const LevelItem& item = p.items[i];
  if (item.start >= 0) return item.start;
  int level = kInfinite;
  for (const auto u : item.inputs) level = std::min(level, effective[u]);
  return level - item.cost;
}

Placement finish(const LevelProblem& p, std::vector<bool> bootstrap, bool optimal) {
  Placement out;
  out.bootstrap = std::move(bootstrap);
  out.optimal = optimal;
  out.feasible = is_feasible(p, out.bootstrap, &out.first_failure);
  for (std::size_t i = 0; i < p.items.size(); ++i) out.count += out.bootstrap[i] && !p.items[i].pinned ? 1 : 0;
  return out;
}

// --- forests: dynamic programming over (item, level demanded) ---

Placement place_on_forest(const LevelProblem& p, const std::vector<std::vector<std::uint32_t>>& consumers) {
  const std::size_t n = p.items.size();
  int top = std::max(p.bootstrap_level, 0);
  for (const auto& item : p.items) top = std::max({top, item.start, item.min_level});
  const auto levels = static_cast<std::size_t>(top) + 1;
  // f: fewest bootstraps in the item's subtree for it to carry at least k (not bootstrapped itself);
  // h: the same for it to deliver at least k to its consumer (bootstrapped or not), and which one.
  std::vector<std::vector<int>> f(n, std::vector<int>(levels, kInfinite)), h = f;
  std::vector<std::vector<char>> boot(n, std::vector<char>(levels, 0));
  const auto add = [](int a, int b) { return std::min(a + b, kInfinite); };
  for (std::size_t i = 0; i < n; ++i) {
    const LevelItem& item = p.items[i];
    for (std::size_t k = 0; k < levels; ++k) {
      const int demand = std::max(static_cast<int>(k), item.min_level);
      int best = kInfinite;
      if (item.start >= 0) {
        best = item.start >= demand ? 0 : kInfinite;
      } else if (demand + item.cost <= top) {
        best = 0;
        for (std::size_t j = 0; j < item.inputs.size(); ++j) {
          const auto u = item.inputs[j];
          if (std::find(item.inputs.begin(), item.inputs.begin() + static_cast<std::ptrdiff_t>(j), u) !=
              item.inputs.begin() + static_cast<std::ptrdiff_t>(j)) {
            continue;  // x * x: one operand, counted once
          }
          best = add(best, h[u][static_cast<std::size_t>(demand + item.cost)]);
        }
      }
      f[i][k] = best;
    }
    for (std::size_t k = 0; k < levels; ++k) {
      int stay = item.pinned ? kInfinite : f[i][k];
      int refresh = kInfinite;
      if (can_bootstrap(p, item) && p.bootstrap_level >= static_cast<int>(k)) {
        const auto input_demand = static_cast<std::size_t>(std::min(p.bootstrap_min_input, top));
        refresh = add(item.pinned ? 0 : 1, f[i][input_demand]);
      }
      boot[i][k] = refresh < stay;
      h[i][k] = std::min(stay, refresh);
    }
  }
  std::vector<bool> bootstrap(n, false);
  // Top-down: each root delivers its own demand; each item passes its operands the demand it chose.
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (consumers[i].empty()) stack.emplace_back(i, static_cast<std::size_t>(std::max(p.items[i].min_level, 0)));
  }
  while (!stack.empty()) {
    const auto [i, k] = stack.back();
    stack.pop_back();
    const LevelItem& item = p.items[i];
    std::size_t carry = k;
    if (boot[i][k]) {
      bootstrap[i] = true;
      carry = static_cast<std::size_t>(std::min(p.bootstrap_min_input, top));
    }
    if (item.start >= 0) continue;
    const int demand = std::max(static_cast<int>(carry), item.min_level) + item.cost;
    if (demand > top) continue;  // infeasible: finish() reports where
    for (const auto u : item.inputs) stack.emplace_back(u, static_cast<std::size_t>(demand));
  }
  return finish(p, std::move(bootstrap), true);
}

// --- graphs with cut points: dynamic programming over the cuts ---

// A cut is an item every later item is reached through (no operand edge jumps over it); between two cuts lies a
// small graph (a layer, an activation's polynomial). Bootstrapping only at cuts turns the graph into a chain:
// each segment spends a fixed number of levels (drop) and needs its start to carry enough for its items
// (demand); the fewest refreshes over the chain of cuts is a dynamic program over (cut, level). Not optimal in
// general (a refresh inside a segment may pay), but models are chains of layers, where this is what matters.
std::optional<std::vector<bool>> place_on_cuts(const LevelProblem& p, const std::vector<std::vector<std::uint32_t>>& consumers) {
  const std::size_t n = p.items.size();
  if (p.bootstrap_level < 0 || n == 0) return std::nullopt;
  std::vector<std::uint32_t> cuts;
  std::size_t reach = 0;  // the furthest item read by an item before the current one
  bool sources_done = false;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (p.items[i].start >= 0 && sources_done) return std::nullopt;  // a source after a cut: not a chain
    if (i >= reach && i > 0 && p.items[i].start < 0 && can_bootstrap(p, p.items[i]) && !p.items[i].pinned) {
      cuts.push_back(i);
      sources_done = true;
    }
    for (const auto w : consumers[i]) reach = std::max<std::size_t>(reach, w);
  }
  if (cuts.empty()) return std::nullopt;

  // Natural levels with nothing refreshed: the prefix must stand on its own; each segment's drop and demand
  // follow from the levels relative to its cut (every path into the segment comes through the cut).
  std::vector<bool> none(n, false);
  const std::vector<int> natural = natural_levels(p, none);
  for (std::uint32_t i = 0; i <= cuts.front(); ++i) {
    if (natural[i] < p.items[i].min_level) return std::nullopt;
  }
  const std::size_t k_count = cuts.size();
  std::vector<int> drop(k_count), demand(k_count);  // segment k: (cuts[k], cuts[k + 1]] (the last: to the end)
  for (std::size_t k = 0; k < k_count; ++k) {
    const std::uint32_t first = cuts[k] + 1;
    const std::uint32_t last = k + 1 < k_count ? cuts[k + 1] : static_cast<std::uint32_t>(n - 1);
    demand[k] = 0;
    for (std::uint32_t i = first; i <= last && i < n; ++i) {
      if (p.items[i].pinned) return std::nullopt;  // a pin inside a segment breaks the chain's arithmetic
      const int d = natural[cuts[k]] - natural[i];
      demand[k] = std::max(demand[k], d + p.items[i].min_level);
    }
    drop[k] = k + 1 < k_count ? natural[cuts[k]] - natural[cuts[k + 1]] : 0;
  }
  int top = p.bootstrap_level;
  for (const auto& item : p.items) top = std::max(top, item.start);
  const auto levels = static_cast<std::size_t>(top) + 1;
  // best[k][l]: fewest refreshes up to cut k arriving at level l (before its own decision).
  std::vector<std::vector<int>> best(k_count, std::vector<int>(levels, kInfinite));
  std::vector<std::vector<std::pair<int, char>>> from(k_count, std::vector<std::pair<int, char>>(levels, {-1, 0}));
  if (natural[cuts[0]] >= 0) best[0][static_cast<std::size_t>(natural[cuts[0]])] = 0;
  int end_best = kInfinite, end_level = -1;
  char end_refresh = 0;
  for (std::size_t k = 0; k < k_count; ++k) {
    for (std::size_t l = 0; l < levels; ++l) {
      if (best[k][l] >= kInfinite) continue;
      for (const char refresh : {char{0}, char{1}}) {
        if (refresh && (static_cast<int>(l) < p.bootstrap_min_input || p.bootstrap_level <= static_cast<int>(l))) continue;
        const int carried = refresh ? p.bootstrap_level : static_cast<int>(l);
        if (carried < demand[k]) continue;
        const int count = best[k][l] + refresh;
        if (k + 1 == k_count) {
          if (count < end_best) {
            end_best = count;
            end_level = static_cast<int>(l);
            end_refresh = refresh;
          }
          continue;
        }
        const int next = carried - drop[k];
        if (next < 0 || count >= best[k + 1][static_cast<std::size_t>(next)]) continue;
        best[k + 1][static_cast<std::size_t>(next)] = count;
        from[k + 1][static_cast<std::size_t>(next)] = {static_cast<int>(l), refresh};
      }
    }
  }
  if (end_best >= kInfinite) return std::nullopt;
  std::vector<bool> bootstrap(n, false);
  int level = end_level;
  bootstrap[cuts[k_count - 1]] = end_refresh != 0;
  for (std::size_t k = k_count - 1; k > 0; --k) {
    const auto [previous, refresh] = from[k][static_cast<std::size_t>(level)];
    bootstrap[cuts[k - 1]] = refresh != 0;
    level = previous;
  }
  return bootstrap;
}

// --- general graphs: branch and bound ---

struct Search {
  Search(const LevelProblem& problem, std::size_t step_limit) : p(problem), limit(step_limit) {}
  const LevelProblem& p;
  std::size_t limit;
  std::size_t steps = 0;
  bool exhausted = false;
  std::vector<int> effective;
  std::vector<bool> current, best;
  int best_count = kInfinite;

  // Depth-first over the items, each either kept or refreshed, with an explicit stack: programs have hundreds of
  // thousands of items, far deeper than the thread's stack would allow recursion to go.
  void run(std::uint32_t first, int first_count) {
    struct Frame {
      std::uint32_t i;
      int count;
      int stage;  // 0: enter; 1: the kept branch returned; 2: the refreshed (or pinned) branch returned
      int level = 0;
      bool refreshable = false;
    };
    std::vector<Frame> stack{{first, first_count, 0}};
    // Item f.i kept (at its level) or refreshed, then on to the next item; f comes back at `stage` after.
    const auto descend = [&](std::size_t top, Frame f, bool refresh, int stage, int count) {
      current[f.i] = refresh;
      effective[f.i] = refresh ? p.bootstrap_level : f.level;
      f.stage = stage;
      stack[top] = f;
      stack.push_back({f.i + 1, count, 0});
    };
    while (!stack.empty()) {
      const std::size_t top = stack.size() - 1;
      Frame f = stack[top];
      if (f.stage == 1) {  // the kept branch is done: the refreshed one, where it can be and helps
        if (f.refreshable && f.level < p.bootstrap_level) descend(top, f, true, 2, f.count + 1);
        else stack.pop_back();
        continue;
      }
      if (f.stage == 2) {
        current[f.i] = false;
        stack.pop_back();
        continue;
      }
      if (f.count >= best_count) {
        stack.pop_back();
        continue;
      }
      if (++steps > limit) {
        exhausted = true;  // the search ends here; `best` holds the best found
        return;
      }
      if (f.i == p.items.size()) {
        best_count = f.count;
        best = current;
        stack.pop_back();
        continue;
      }
      const LevelItem& item = p.items[f.i];
      f.level = level_of(p, f.i, effective);
      f.refreshable = can_bootstrap(p, item) && f.level >= p.bootstrap_min_input;
      if (f.level < item.min_level || (item.pinned && !f.refreshable)) {
        stack.pop_back();
      } else if (item.pinned) {
        descend(top, f, true, 2, f.count);
      } else {
        descend(top, f, false, 1, f.count);
      }
    }
  }
};

// --- the greedy rule: refresh a value at the last level it can be, when what follows needs more ---

struct GreedyRule {
  std::vector<int> need;   // the level an item must carry if nothing after it is bootstrapped
  std::vector<int> ahead;  // the most levels spent after it before a path reaches an item that may be refreshed
                           // (or the level such an item must keep above a bootstrap's input)

  GreedyRule(const LevelProblem& problem, const std::vector<std::vector<std::uint32_t>>& consumers)
      : need(problem.items.size(), 0), ahead(problem.items.size(), 0) {
    for (std::size_t r = problem.items.size(); r-- > 0;) {
      need[r] = std::max(problem.items[r].min_level, 0);
      for (const auto w : consumers[r]) {
        const LevelItem& next = problem.items[w];
        need[r] = std::max(need[r], next.cost + (next.pinned ? problem.bootstrap_min_input : need[w]));
        // An item whose followers may not be refreshed (kept exact, or an output) is its path's last chance
        // earlier: by what they spend, and by the level such a follower must keep.
        const int beyond = can_bootstrap(problem, next)
                               ? 0
                               : std::max(ahead[w], next.min_level - problem.bootstrap_min_input);
        ahead[r] = std::max(ahead[r], next.cost + beyond);
      }
    }
  }
  // Whether item i, at `level`, is refreshed.
  bool refreshes(const LevelProblem& problem, std::uint32_t i, int level) const {
    const LevelItem& item = problem.items[i];
    const bool last_chance = level < problem.bootstrap_min_input + ahead[i];
    const bool refreshable = can_bootstrap(problem, item) && level >= problem.bootstrap_min_input;
    return item.pinned || (refreshable && last_chance && level < need[i] && problem.bootstrap_level > level);
  }
};

// --- refreshing fan-out points: one bootstrap for a value instead of one for each of its readers ---

// A placement improved where a value read by several consumers is refreshed once in place of the bootstraps
// below it (the greedy rule refreshes each reader's path where it runs out: after a softmax, every masked piece of
// its output). Each candidate is tried on the items its levels can reach (up to the next bootstraps) and kept when
// it removes at least two; the whole pass is bounded by `budget` item visits.
class FanOutRefresh {
 public:
  FanOutRefresh(const LevelProblem& p, const std::vector<std::vector<std::uint32_t>>& consumers,
                const GreedyRule& rule, std::vector<bool> bootstrap, std::size_t budget)
      : p_(p), consumers_(consumers), rule_(rule), bootstrap_(std::move(bootstrap)), budget_(budget),
        natural_(natural_levels(p, bootstrap_)), effective_(p.items.size()), mark_(p.items.size(), 0) {
    for (std::size_t i = 0; i < effective_.size(); ++i) effective_[i] = bootstrap_[i] ? p.bootstrap_level : natural_[i];
  }

  std::vector<bool> run() {
    for (std::uint32_t v = 0; v < p_.items.size() && budget_ > 0; ++v) {
      const LevelItem& item = p_.items[v];
      if (bootstrap_[v] || !can_bootstrap(p_, item) || consumers_[v].size() < 2) continue;
      if (natural_[v] < p_.bootstrap_min_input || natural_[v] >= p_.bootstrap_level) continue;
      try_refresh(v);
    }
    return std::move(bootstrap_);
  }

 private:
  struct Saved {
    std::uint32_t item;
    int natural, effective;
    bool bootstrap;
  };

  // The items whose levels follow from `starts` (sorted, starts included): their consumers, transitively, through
  // items that are not bootstrapped (a bootstrapped one is included, not passed). Empty when larger than `limit`.
  std::vector<std::uint32_t> region(std::span<const std::uint32_t> starts, std::size_t limit) {
    std::vector<std::uint32_t> out, stack(starts.begin(), starts.end());
    ++stamp_;
    std::uint32_t lowest = std::numeric_limits<std::uint32_t>::max(), highest = 0;
    for (const auto s : starts) mark_[s] = stamp_;
    while (!stack.empty()) {
      const std::uint32_t i = stack.back();
      stack.pop_back();
      out.push_back(i);
      lowest = std::min(lowest, i);
      highest = std::max(highest, i);
      if (out.size() > limit) {
        budget_ -= std::min(budget_, out.size());
        return {};
      }
      if (bootstrap_[i]) continue;
      for (const auto w : consumers_[i]) {
        if (mark_[w] != stamp_) {
          mark_[w] = stamp_;
          stack.push_back(w);
        }
      }
    }
    budget_ -= std::min(budget_, out.size());
    if (out.size() > 1 && highest - lowest < 8 * out.size()) {  // dense (programs are traced in order): a scan
      std::size_t k = 0;
      for (std::uint32_t i = lowest; i <= highest; ++i) {
        if (mark_[i] == stamp_) out[k++] = i;
      }
    } else {
      std::sort(out.begin(), out.end());
    }
    return out;
  }

  void save(std::span<const std::uint32_t> items, std::vector<Saved>& saved) const {
    for (const auto i : items) saved.push_back({i, natural_[i], effective_[i], bootstrap_[i]});
  }
  void restore(std::vector<Saved>& saved, std::size_t down_to) {
    while (saved.size() > down_to) {
      const Saved& s = saved.back();
      natural_[s.item] = s.natural;
      effective_[s.item] = s.effective;
      bootstrap_[s.item] = s.bootstrap;
      saved.pop_back();
    }
  }
  // Levels of a region recomputed in order.
  void recompute(std::span<const std::uint32_t> items) {
    for (const auto i : items) {
      natural_[i] = level_of(p_, i, effective_);
      effective_[i] = bootstrap_[i] ? p_.bootstrap_level : natural_[i];
    }
  }

  void try_refresh(std::uint32_t v) {
    const std::vector<std::uint32_t> below = region(consumers_[v], kBelowLimit);
    std::size_t candidates = 0;  // the bootstraps the region ends at
    for (const auto i : below) candidates += bootstrap_[i] && !p_.items[i].pinned ? 1 : 0;
    if (candidates < 2) return;
    std::vector<Saved> saved;
    const std::uint32_t at_v[] = {v};
    save(at_v, saved);
    save(below, saved);
    bootstrap_[v] = true;
    effective_[v] = p_.bootstrap_level;
    recompute(below);  // levels only rise
    // The bootstraps v's refresh lifts: those whose value arrives higher now. One that another path still holds
    // low (a residual sum's other operand) keeps its refresh: freeing it too would leave that path without one.
    std::vector<std::uint32_t> refreshed;
    for (std::size_t k = 0; k < below.size(); ++k) {
      const std::uint32_t i = below[k];
      if (bootstrap_[i] && !p_.items[i].pinned && natural_[i] > saved[k + 1].natural) refreshed.push_back(i);
    }
    if (refreshed.size() < 2) {
      restore(saved, 0);
      return;
    }
    // All together, the greedy rule deciding again below them: their paths often meet (a sum of the pieces), where
    // one refresh serves them all. (One by one, each kept where what follows it has the level to spare, finds
    // fewer: a quarter Llama block 573 bootstraps against 426, in 1.5 times the time.)
    if (!remove_together(refreshed, saved)) restore(saved, 0);
  }

  // The bootstraps `freed` (sorted) removed and the levels recomputed in order from them, onward only where an
  // item's level changed (so the walk ends where the old levels come back, not at the next bootstraps); the
  // greedy rule decides again where a level fell. Kept when every item keeps what it must and at least two fewer
  // bootstraps were added than removed (one pays for the fan-out point's); otherwise restored.
  bool remove_together(std::span<const std::uint32_t> freed, std::vector<Saved>& saved) {
    const std::size_t mark = saved.size();
    save(freed, saved);  // restored last: refreshed again
    for (const auto u : freed) bootstrap_[u] = false;
    const auto is_freed = [&](std::uint32_t i) { return std::binary_search(freed.begin(), freed.end(), i); };
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> pending(freed.begin(), freed.end());
    ++stamp_;
    for (const auto u : freed) mark_[u] = stamp_;
    std::size_t visited = 0, added = 0;
    bool feasible = true;
    while (!pending.empty() && feasible) {
      const std::uint32_t i = pending.top();  // consumers come after their operands: ids in order
      pending.pop();
      if (++visited > kAfterLimit) break;
      save(std::span<const std::uint32_t>(&i, 1), saved);
      const int level = level_of(p_, i, effective_);
      const bool fixed = bootstrap_[i] || p_.items[i].pinned || is_freed(i);
      if (!fixed && level < natural_[i] && rule_.refreshes(p_, i, level)) {
        bootstrap_[i] = true;
        ++added;
      }
      const int before = effective_[i];
      natural_[i] = level;
      effective_[i] = bootstrap_[i] ? p_.bootstrap_level : level;
      feasible = level >= p_.items[i].min_level && (!bootstrap_[i] || level >= p_.bootstrap_min_input);
      if (effective_[i] == before) continue;
      for (const auto w : consumers_[i]) {
        if (mark_[w] != stamp_) {
          mark_[w] = stamp_;
          pending.push(w);
        }
      }
    }
    budget_ -= std::min(budget_, visited);
    if (pending.empty() && feasible && added + 2 <= freed.size()) return true;
    restore(saved, mark);
    return false;
  }

  // Items a candidate may visit: below the fan-out point up to its bootstraps, and past them where levels change.
  static constexpr std::size_t kBelowLimit = std::size_t{1} << 15, kAfterLimit = std::size_t{1} << 20;
  const LevelProblem& p_;
  const std::vector<std::vector<std::uint32_t>>& consumers_;
  const GreedyRule& rule_;
  std::vector<bool> bootstrap_;
  std::size_t budget_;
  std::vector<int> natural_, effective_;
  std::vector<std::uint32_t> mark_;
  std::uint32_t stamp_ = 0;
};

}  // namespace

std::vector<int> natural_levels(const LevelProblem& problem, const std::vector<bool>& bootstrap) {
  require(bootstrap.size() == problem.items.size(), "level problem: {} decisions for {} items", bootstrap.size(),
          problem.items.size());
  std::vector<int> natural(problem.items.size()), effective(problem.items.size());
  for (std::uint32_t i = 0; i < problem.items.size(); ++i) {
    natural[i] = level_of(problem, i, effective);
    effective[i] = bootstrap[i] ? problem.bootstrap_level : natural[i];
  }
  return natural;
}

bool is_feasible(const LevelProblem& problem, const std::vector<bool>& bootstrap, std::uint32_t* failure) {
  const std::vector<int> levels = natural_levels(problem, bootstrap);
  for (std::uint32_t i = 0; i < problem.items.size(); ++i) {
    const LevelItem& item = problem.items[i];
    bool ok = levels[i] >= item.min_level && (!item.pinned || bootstrap[i]);
    if (bootstrap[i]) ok = ok && can_bootstrap(problem, item) && levels[i] >= problem.bootstrap_min_input;
    if (!ok) {
      if (failure != nullptr) *failure = i;
      return false;
    }
  }
  return true;
}

namespace {

// With refresh_sources, every source that arrives below the bootstrap level (and may be refreshed) is
// bootstrapped first: a model's stage whose inputs arrive low (the previous stage's outputs) is often better off
// refreshing them once than each path below them, which the greedy rule alone does. More levels between
// bootstraps make that likelier (BERT-Base with narrow levels: a later layer 48-60 -> see bench/RESULTS.md).
Placement greedy_placement(const LevelProblem& problem, const GreedyRule& rule, bool refresh_sources = false) {
  const std::size_t n = problem.items.size();
  std::vector<bool> bootstrap(n, false);
  std::vector<int> effective(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const int level = level_of(problem, i, effective);
    const LevelItem& item = problem.items[i];
    const bool low_source = refresh_sources && item.start >= 0 && item.may_bootstrap &&
                            problem.bootstrap_level >= 0 && level >= problem.bootstrap_min_input &&
                            level < problem.bootstrap_level;
    bootstrap[i] = low_source || rule.refreshes(problem, i, level);
    effective[i] = bootstrap[i] ? problem.bootstrap_level : level;
  }
  return finish(problem, std::move(bootstrap), false);
}

}  // namespace

Placement place_bootstraps_greedy(const LevelProblem& problem) {
  require_valid(problem);
  return greedy_placement(problem, GreedyRule(problem, consumers_of(problem)));
}

Placement place_bootstraps(const LevelProblem& problem, const PlacementOptions& options) {
  require_valid(problem);
  const auto consumers = consumers_of(problem);
  const bool forest = std::all_of(consumers.begin(), consumers.end(), [](const auto& c) { return c.size() <= 1; });
  if (forest) return place_on_forest(problem, consumers);

  const GreedyRule rule(problem, consumers);
  // Seeds: the greedy rule, the same after refreshing the low sources first, and the chain of cuts when the graph
  // has one; each then with fan-out points refreshed in place of their readers' bootstraps where that saves
  // some. The search starts from the best.
  std::vector<Placement> seeds;
  seeds.push_back(greedy_placement(problem, rule));
  seeds.push_back(greedy_placement(problem, rule, /*refresh_sources=*/true));
  if (const auto on_cuts = place_on_cuts(problem, consumers)) seeds.push_back(finish(problem, *on_cuts, false));
  Placement greedy = seeds.front();  // the greedy rule's, feasible or not: the failure to report without better
  // Each seed's fan-out pass on a thread of its own (they share only what they read): seconds each on a
  // transformer block, the planner's longest serial step.
  std::vector<std::future<Placement>> refreshed(seeds.size());
  for (std::size_t s = 0; s < seeds.size(); ++s) {
    if (!seeds[s].feasible) continue;
    refreshed[s] = std::async(std::launch::async, [&, s] {
      FanOutRefresh pass(problem, consumers, rule, seeds[s].bootstrap, options.refresh_budget);
      return finish(problem, pass.run(), false);
    });
  }
  for (std::size_t s = 0; s < seeds.size(); ++s) {
    if (!refreshed[s].valid()) continue;
    Placement better = refreshed[s].get();  // first: the pass reads its seed
    Placement seed = std::move(seeds[s]);
    if (better.feasible && better.count < seed.count) seed = std::move(better);
    if (!greedy.feasible || seed.count < greedy.count) greedy = std::move(seed);
  }
  Search search{problem, options.search_limit};
  search.effective.assign(problem.items.size(), 0);
  search.current.assign(problem.items.size(), false);
  if (greedy.feasible) {
    search.best = greedy.bootstrap;
    search.best_count = greedy.count;
  }
  search.run(0, 0);
  if (search.best_count == kInfinite) {
    // Nothing feasible found: report where the greedy placement fails.
    return finish(problem, std::move(greedy.bootstrap), !search.exhausted);
  }
  return finish(problem, std::move(search.best), !search.exhausted);
}

}  // namespace cerium::graph
