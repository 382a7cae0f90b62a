#include "cerium/dist/sharded_backend.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/core/device_memory.hpp"
#include "local_compute.hpp"

namespace cerium::dist {

using ring::RnsBasis;
using ring::RnsBasisPtr;
using ring::RnsPoly;
using ring::RnsShard;
using Positions = std::vector<std::size_t>;
using Primes = std::vector<std::uint32_t>;

namespace {

// `words` words between any two of host memory and one device's (the device's memory hooks order the copy after
// the work queued on that device).
void copy_words(std::uint32_t* dst, Device dst_device, const std::uint32_t* src, Device src_device,
                std::size_t words) {
  if (words == 0) return;
  if (dst_device.host_accessible() && src_device.host_accessible()) {
    std::memcpy(dst, src, words * sizeof(std::uint32_t));
    return;
  }
  const DeviceKind kind = dst_device.host_accessible() ? src_device.kind : dst_device.kind;
  device_memory_hooks(kind).copy(dst, dst_device, src, src_device, words * sizeof(std::uint32_t));
}

// Where limb p of y lies: its shard (which must be held here) and the limbs of that shard from p on.
struct LimbAt {
  const RnsShard* shard = nullptr;
  std::size_t offset = 0;  // p - shard's first limb
  std::size_t left = 0;    // limbs of the shard from p on
  std::uint32_t* words() const { return const_cast<std::uint32_t*>(shard->data()) + offset * shard->stride(); }
};

LimbAt limb_at(const RnsPoly& y, std::size_t p) {
  for (const RnsShard& shard : y.shards()) {
    if (p >= shard.first_limb() && p < shard.first_limb() + shard.limb_count()) {
      require<UnsupportedError>(!shard.is_remote(),
                                "limb {} of this polynomial is held by rank {}, but the mesh's layout puts it here: "
                                "the polynomial was sharded over another layout (place it through this backend)",
                                p, shard.device().index);
      return {&shard, p - shard.first_limb(), shard.first_limb() + shard.limb_count() - p};
    }
  }
  throw InvalidArgument(fmt::format("limb {} of a polynomial of {} limbs", p, y.limb_count()));
}

}  // namespace

struct ShardedBackend::State {
  Communicator* comm = nullptr;
  rlwe::ContextPtr context;
  ShardedOptions options;
  std::unique_ptr<LocalCompute> local;
  LimbLayout layout;

  std::mutex mutex;  // the caches (a rank's backend is driven by one thread; its copies may live elsewhere)
  std::map<Primes, RnsBasisPtr> bases;
  std::map<std::tuple<Primes, std::size_t, ring::Rounding>, std::shared_ptr<const ring::Rescaler>> rescalers;
  std::map<std::tuple<Primes, Primes, ring::Rounding>, std::shared_ptr<const ring::ModDown>> mod_downs;

  State(Communicator& c, rlwe::ContextPtr ctx, ShardedOptions opts)
      : comm(&c),
        context(std::move(ctx)),
        options(opts),
        local(opts.device.is_cuda() ? make_cuda_local_compute(context, opts.device.index) : make_cpu_local_compute()),
        layout(*context, c.size(), c.rank(), local->device(), opts.layout) {
    require<UnsupportedError>(opts.device.is_cpu() || opts.device.is_cuda(),
                              "a rank of a sharded backend computes on the CPU or a CUDA device, not on {}",
                              to_string(opts.device));
    require<UnsupportedError>(!c.device_memory() || local->device().is_cuda(),
                              "the {} communicator moves device memory, and this rank computes on {}: give the "
                              "sharded backend a CUDA device (ShardedOptions::device)",
                              c.transport(), to_string(local->device()));
  }

  // The primes of `global` at these positions as a basis sharing global's per-prime tables; null when empty.
  RnsBasisPtr basis_of(const RnsBasis& global, const Positions& positions) {
    if (positions.empty()) return nullptr;
    Primes primes;
    for (std::size_t p : positions) primes.push_back(global.prime(p));
    const std::lock_guard lock(mutex);
    auto& slot = bases[primes];
    if (slot == nullptr) {
      std::optional<RnsBasis> acc;
      for (std::size_t i = 0; i < positions.size();) {
        std::size_t j = i + 1;
        while (j < positions.size() && positions[j] == positions[j - 1] + 1) ++j;
        RnsBasis run = global.sub_basis(positions[i], j - i);
        acc = acc ? acc->concat(run) : std::move(run);
        i = j;
      }
      slot = ring::make_basis(std::move(*acc));
    }
    return slot;
  }
  RnsBasisPtr local_basis(const RnsBasis& global) { return basis_of(global, layout.local_positions(global)); }

  std::shared_ptr<const ring::Rescaler> rescaler(const RnsBasisPtr& basis, std::size_t dropped,
                                                 ring::Rounding rounding) {
    const std::lock_guard lock(mutex);
    auto& slot = rescalers[{Primes(basis->primes().begin(), basis->primes().end()), dropped, rounding}];
    if (slot == nullptr) slot = std::make_shared<const ring::Rescaler>(basis, dropped, rounding);
    return slot;
  }
  std::shared_ptr<const ring::ModDown> mod_down(const RnsBasisPtr& full, const RnsBasisPtr& kept,
                                                ring::Rounding rounding) {
    const std::lock_guard lock(mutex);
    auto& slot = mod_downs[{Primes(full->primes().begin(), full->primes().end()),
                            Primes(kept->primes().begin(), kept->primes().end()), rounding}];
    if (slot == nullptr) slot = std::make_shared<const ring::ModDown>(full, kept, rounding);
    return slot;
  }

  // A polynomial over basis in this rank's view of the layout: local shards allocated, the others remote.
  RnsPoly allocate(const RnsBasisPtr& basis, ring::PolyForm form, BufferInit init) const {
    return RnsPoly(basis, ring::PolyOptions{.form = form, .shards = layout.shards(*basis), .init = init});
  }
  // A polynomial over basis in one shard on `device`.
  static RnsPoly allocate_on(Device device, const RnsBasisPtr& basis, ring::PolyForm form) {
    return RnsPoly(basis, ring::PolyOptions{.form = form, .shards = {{device, basis->size()}},
                                            .init = BufferInit::uninitialized});
  }

  // Whether a host polynomial over this basis must be checked for agreement: only when its limbs go to two or
  // more ranks (a rank-independent fact, so every rank makes the same collective call), and x is a whole
  // polynomial (no limb held elsewhere: with two or more owners, a placed polynomial has remote limbs everywhere).
  bool needs_agreement(const RnsPoly& x) const {
    if (!options.verify_placed || comm->size() == 1) return false;
    const auto counts = layout.counts(x.basis());
    if (std::count_if(counts.begin(), counts.end(), [](std::size_t c) { return c != 0; }) < 2) return false;
    return std::none_of(x.shards().begin(), x.shards().end(), [](const RnsShard& s) { return s.is_remote(); });
  }

  bool in_layout(const RnsPoly& x) const {
    const auto have = x.shard_layout();
    const auto want = layout.shards(x.basis());
    return std::equal(have.begin(), have.end(), want.begin(), want.end(), [](const auto& a, const auto& b) {
      return a.device == b.device && a.limb_count == b.limb_count;
    });
  }

  // The groups of local positions of basis that one local call takes: all of them at once where the local
  // compute takes views of scattered limbs, else each local shard's run of consecutive limbs.
  std::vector<Positions> runs(const RnsBasis& basis) const {
    std::vector<Positions> out;
    if (local->multi_shard()) {
      Positions all = layout.local_positions(basis);
      if (!all.empty()) out.push_back(std::move(all));
      return out;
    }
    std::size_t first = 0;
    for (const auto& spec : layout.shards(basis)) {
      if (!spec.device.is_remote()) out.push_back(consecutive(first, spec.limb_count));
      first += spec.limb_count;
    }
    return out;
  }

  // Borrowed views of y's limbs at these positions (ascending), grouped in runs within y's shards. The limbs
  // must be held here.
  static std::vector<RnsShard> pieces(const RnsPoly& y, const Positions& positions) {
    std::vector<RnsShard> out;
    for (std::size_t i = 0; i < positions.size();) {
      const LimbAt at = limb_at(y, positions[i]);
      std::size_t j = i + 1;
      while (j < positions.size() && positions[j] == positions[j - 1] + 1 && j - i < at.left) ++j;
      out.push_back(at.shard->borrow(at.offset, j - i));
      i = j;
    }
    return out;
  }

  // y's limbs at these positions as a polynomial over their primes, borrowing y's words.
  RnsPoly piece(const RnsPoly& y, const Positions& positions) {
    return RnsPoly::from_shards(basis_of(y.basis(), positions), y.form(), pieces(y, positions));
  }

  // dst's limbs at dst_positions := src's at src_positions (pairwise; runs that are consecutive on both sides and
  // within one shard of each go in one copy).
  static void copy_limbs(RnsPoly& dst, const Positions& dst_positions, const RnsPoly& src,
                         const Positions& src_positions) {
    require(dst_positions.size() == src_positions.size(), "copying {} limbs into {}", src_positions.size(),
            dst_positions.size());
    const std::size_t n = src.n();
    for (std::size_t i = 0; i < dst_positions.size();) {
      const LimbAt to = limb_at(dst, dst_positions[i]);
      const LimbAt from = limb_at(src, src_positions[i]);
      std::size_t j = i + 1;
      if (to.shard->stride() == n && from.shard->stride() == n) {
        while (j < dst_positions.size() && j - i < to.left && j - i < from.left &&
               dst_positions[j] == dst_positions[j - 1] + 1 && src_positions[j] == src_positions[j - 1] + 1) {
          ++j;
        }
      }
      copy_words(to.words(), to.shard->device(), from.words(), from.shard->device(),
                 (j - i - 1) * to.shard->stride() + n);
      i = j;
    }
  }
  // The positions first, first + 1, ..., first + count - 1.
  static Positions consecutive(std::size_t first, std::size_t count) {
    Positions out(count);
    std::iota(out.begin(), out.end(), first);
    return out;
  }

  // A global polynomial in the layout from local results that hold this rank's limbs of global in order (one
  // per run, or one over all of them): their shards taken over where they match the layout's local shards, else
  // their limbs copied.
  RnsPoly assemble(std::vector<RnsPoly> results, const RnsBasisPtr& global, ring::PolyForm form) {
    const auto specs = layout.shards(*global);
    if (!results.empty()) form = results[0].form();
    std::vector<std::size_t> have, want;
    for (const auto& r : results) {
      for (const auto& shard : r.shards()) have.push_back(shard.limb_count());
    }
    for (const auto& spec : specs) {
      if (!spec.device.is_remote()) want.push_back(spec.limb_count);
    }
    if (have != want) {
      RnsPoly out = allocate(global, form, BufferInit::uninitialized);
      const Positions local_positions = layout.local_positions(*global);
      std::size_t offset = 0;
      for (const auto& r : results) {
        const Positions to(local_positions.begin() + static_cast<std::ptrdiff_t>(offset),
                           local_positions.begin() + static_cast<std::ptrdiff_t>(offset + r.limb_count()));
        copy_limbs(out, to, r, consecutive(0, r.limb_count()));
        offset += r.limb_count();
      }
      require(offset == local_positions.size(), "{} local limbs computed for {} held here", offset,
              local_positions.size());
      return out;
    }
    std::vector<RnsShard> parts;
    for (auto& r : results) {
      for (auto& shard : r.release_shards()) parts.push_back(std::move(shard));
    }
    std::vector<RnsShard> shards;
    std::size_t next = 0;
    const std::size_t n = global->ring_degree();
    for (const auto& spec : specs) {
      if (spec.device.is_remote()) shards.emplace_back(spec.device, 0, spec.limb_count, n, BufferInit::zero);
      else shards.push_back(std::move(parts[next++]));
    }
    return RnsPoly::from_shards(global, form, std::move(shards));
  }

  // This rank's limbs of any polynomial over a basis of the mesh (a full host one, or one in the layout), copied
  // into a polynomial in the layout on this rank's device.
  RnsPoly slice(const RnsPoly& x) const {
    RnsPoly out = allocate(x.basis_ptr(), x.form(), BufferInit::uninitialized);
    const Positions local_positions = layout.local_positions(x.basis());
    copy_limbs(out, local_positions, x, local_positions);
    return out;
  }

  // The limbs at `positions` (ascending) of each of polys (one basis), from their owners onto every rank, in one
  // all-gather: a polynomial each over `result_basis` (whose primes are those positions' primes) in one shard on
  // `target` (this rank's device, or the host for a download). The words travel in device memory where the
  // transport takes it (NCCL), else through the host.
  std::vector<RnsPoly> gather(std::span<const RnsPoly* const> polys, const Positions& positions,
                              const RnsBasisPtr& result_basis, Device target) {
    const RnsBasis& basis = polys[0]->basis();
    const std::size_t stride = ring::limb_stride(basis.ring_degree());
    const auto ranks = static_cast<std::size_t>(layout.ranks());
    const auto me = static_cast<std::size_t>(layout.rank());
    std::vector<Positions> owned(ranks);  // indices into positions, by owner
    for (std::size_t i = 0; i < positions.size(); ++i) {
      owned[static_cast<std::size_t>(layout.owner(basis.prime(positions[i])))].push_back(i);
    }
    std::vector<std::size_t> counts(ranks);
    for (std::size_t r = 0; r < ranks; ++r) counts[r] = owned[r].size() * polys.size() * stride;
    const Device wire = comm->device_memory() ? local->device() : Device::cpu();
    // The indices.size() limbs at words + at, viewed as a polynomial over their primes (of `basis` at positions[i],
    // or of the result basis at i).
    const auto packed = [&](DeviceWords& words, std::size_t at, const RnsBasis& of, const Positions& indices,
                            ring::PolyForm form) {
      Positions at_positions;
      for (std::size_t i : indices) at_positions.push_back(&of == &basis ? positions[i] : i);
      return RnsPoly(basis_of(of, at_positions), form,
                     DeviceWords::borrow(wire, words.data() + at, indices.size() * stride));
    };

    // This rank's limbs, packed poly by poly, in a buffer of wire's memory (runs of limbs in one copy each).
    DeviceWords mine(wire, std::max<std::size_t>(counts[me], 1), BufferInit::uninitialized);
    Positions mine_positions;  // of `basis`
    for (std::size_t i : owned[me]) mine_positions.push_back(positions[i]);
    std::size_t at = 0;
    for (const RnsPoly* y : polys) {
      require<MismatchError>(y->basis() == basis, "gathering limbs of polynomials over different bases");
      if (owned[me].empty()) continue;
      RnsPoly piece = packed(mine, at, basis, owned[me], y->form());
      copy_limbs(piece, consecutive(0, owned[me].size()), *y, mine_positions);
      at += owned[me].size() * stride;
    }
    const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
    DeviceWords all(wire, std::max<std::size_t>(total, 1), BufferInit::uninitialized);
    // The packing copies are queued on the device's work stream; the transport's own stream must see them done.
    if (wire.is_cuda()) local->synchronize();
    comm->all_gather(std::span<const std::uint32_t>(mine.data(), counts[me]), std::span(all.data(), total), counts);

    std::vector<RnsPoly> out;
    for (const RnsPoly* y : polys) out.push_back(allocate_on(target, result_basis, y->form()));
    at = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      if (owned[r].empty()) continue;
      for (auto& poly : out) {
        const RnsPoly piece = packed(all, at, *result_basis, owned[r], poly.form());
        copy_limbs(poly, owned[r], piece, consecutive(0, owned[r].size()));
        at += owned[r].size() * stride;
      }
    }
    return out;
  }

  // A polynomial over basis_of(y.basis(), kept + the gathered positions) holding y's limbs at kept (held here)
  // followed by the gathered limbs: borrowing y's words where the local compute takes several shards, else
  // copied into one shard on this rank's device.
  RnsPoly joined(const RnsPoly& y, const Positions& kept, RnsPoly gathered, const RnsBasisPtr& basis) {
    if (local->multi_shard()) {
      std::vector<RnsShard> shards = pieces(y, kept);
      for (auto& s : gathered.release_shards()) shards.push_back(std::move(s));
      return RnsPoly::from_shards(basis, y.form(), std::move(shards));
    }
    RnsPoly work = allocate_on(local->device(), basis, y.form());
    copy_limbs(work, consecutive(0, kept.size()), y, kept);
    copy_limbs(work, consecutive(kept.size(), gathered.limb_count()), gathered,
               consecutive(0, gathered.limb_count()));
    return work;
  }

  // Applies `call(run, piece of x at run)` for each run of x's local limbs.
  template <class Call>
  void each_run(const RnsPoly& x, Call call) {
    for (const Positions& run : runs(x.basis())) call(run, piece(x, run));
  }
};

namespace {

// FNV-1a over 32-bit words.
struct Fingerprint {
  std::uint64_t value = 0xcbf29ce484222325ull;
  void add(std::uint64_t word) {
    for (int b = 0; b < 8; ++b) {
      value ^= (word >> (8 * b)) & 0xff;
      value *= 0x100000001b3ull;
    }
  }
};

// A sample of a whole polynomial's words (32 per limb) with its basis and form: different randomness or values
// show up in it with overwhelming probability.
void add_sample(Fingerprint& f, const RnsPoly& x) {
  if (!x.host_accessible()) {
    add_sample(f, x.copy_to(Device::cpu()));
    return;
  }
  f.add(static_cast<std::uint64_t>(x.form()));
  const std::size_t n = x.n();
  for (std::size_t i = 0; i < x.limb_count(); ++i) {
    f.add(x.basis().prime(i));
    const auto limb = x.limb(i);
    for (std::size_t k = 0; k < 16 && k < n; ++k) f.add(limb[k]);
    for (std::size_t k = 0; k < 16; ++k) f.add(limb[(k * n / 16 + 7) % n]);
  }
}

std::vector<std::uint32_t> local_scalars(std::span<const std::uint32_t> per_limb, std::size_t limbs,
                                         const Positions& positions) {
  require(per_limb.size() % limbs == 0, "{} per-limb scalars for {} limbs", per_limb.size(), limbs);
  std::vector<std::uint32_t> out;
  for (std::size_t u = 0; u < per_limb.size() / limbs; ++u) {
    for (std::size_t p : positions) out.push_back(per_limb[u * limbs + p]);
  }
  return out;
}

// The pieces of a list of factors at one run, and pointers to them.
struct PieceList {
  std::vector<RnsPoly> pieces;
  std::vector<const RnsPoly*> pointers;
  PieceList(ShardedBackend::State& s, std::span<const RnsPoly* const> factors, const Positions& run) {
    pieces.reserve(factors.size());
    for (const RnsPoly* f : factors) {
      require(f != nullptr, "a null factor");
      pieces.push_back(s.piece(*f, run));
    }
    for (const auto& v : pieces) pointers.push_back(&v);
  }
};

}  // namespace

ShardedBackend::ShardedBackend(Communicator& comm, rlwe::ContextPtr context, ShardedOptions options) {
  require(context != nullptr, "a sharded backend needs a context");
  state_ = std::make_shared<State>(comm, std::move(context), options);
  if (comm.size() > 1) {
    Fingerprint f;
    const auto& ladder = state_->context->ladder();
    f.add(ladder.ring_degree);
    for (auto q : ladder.q_primes) f.add(q);
    for (auto p : ladder.p_primes) f.add(p ^ 0x5050505050505050ull);
    for (auto l : ladder.level_limbs) f.add(l);
    f.add(static_cast<std::uint64_t>(options.layout));
    require_same_on_all_ranks(comm, f.value, "the modulus ladder (" + state_->context->describe() + " here)");
  }
}

Communicator& ShardedBackend::communicator() const { return *state_->comm; }
const LimbLayout& ShardedBackend::layout() const { return state_->layout; }
const rlwe::ContextPtr& ShardedBackend::context() const { return state_->context; }
Device ShardedBackend::device() const { return state_->local->device(); }
void ShardedBackend::synchronize() const { state_->local->synchronize(); }

RnsPoly ShardedBackend::allocate(const RnsBasisPtr& basis, ring::PolyOptions options) const {
  require(basis != nullptr, "allocate: no basis");
  return state_->allocate(basis, options.form, options.init);
}

RnsPoly ShardedBackend::clone(const RnsPoly& y) const { return state_->in_layout(y) ? y.clone() : state_->slice(y); }

RnsPoly ShardedBackend::place(RnsPoly&& x) const {
  if (state_->needs_agreement(x)) {
    Fingerprint f;
    add_sample(f, x);
    require_same_on_all_ranks(*state_->comm, f.value,
                              "the host polynomial placed (a ciphertext, plaintext or key must be the same on every "
                              "rank: encrypt from one seed, or on one rank and broadcast it)");
  }
  if (state_->in_layout(x)) return std::move(x);
  return state_->slice(x);
}

RnsPoly ShardedBackend::download(const RnsPoly& y) const {
  const RnsPoly* polys[] = {&y};
  return std::move(state_->gather(polys, State::consecutive(0, y.limb_count()), y.basis_ptr(), Device::cpu())[0]);
}

std::shared_ptr<const rlwe::SwitchingKey> ShardedBackend::resident(
    std::shared_ptr<const rlwe::SwitchingKey> key) const {
  if (key == nullptr || key->digit_count() == 0) return key;
  if (state_->needs_agreement(key->b(0))) {
    Fingerprint f;
    for (std::size_t d = 0; d < key->digit_count(); ++d) add_sample(f, key->b(d));
    require_same_on_all_ranks(*state_->comm, f.value,
                              "the switching key placed (make keys from one seed on every rank, or broadcast them)");
  }
  const bool local_a = [&] {
    for (std::size_t d = 0; d < key->digit_count(); ++d) {
      if (key->stored_a(d) == nullptr) return false;
    }
    return true;
  }();
  if (state_->in_layout(key->b(0)) && local_a) return key;
  // Each rank keeps its limbs of b_d and a_d; a seeded a_d expands only those limbs (on the host).
  const RnsBasis& key_basis = key->b(0).basis();
  const Positions local_positions = state_->layout.local_positions(key_basis);
  std::vector<std::array<RnsPoly, 2>> digits;
  for (std::size_t d = 0; d < key->digit_count(); ++d) {
    RnsPoly b = state_->in_layout(key->b(d)) ? key->b(d).clone() : state_->slice(key->b(d));
    RnsPoly a;
    if (const RnsPoly* stored = key->stored_a(d)) {
      a = state_->in_layout(*stored) ? stored->clone() : state_->slice(*stored);
    } else {
      // This rank's limbs of a_d expanded into host shards of the layout, then onto this rank's device.
      std::vector<ring::ShardSpec> host_specs = state_->layout.shards(key_basis);
      for (auto& spec : host_specs) {
        if (!spec.device.is_remote()) spec.device = Device::cpu();
      }
      RnsPoly host(key->b(d).basis_ptr(), ring::PolyOptions{.form = ring::PolyForm::ntt, .shards = host_specs,
                                                            .init = BufferInit::uninitialized});
      for (std::size_t p : local_positions) key->a_limb(d, p, host.limb(p));
      a = state_->allocate(key->b(d).basis_ptr(), ring::PolyForm::ntt, BufferInit::uninitialized);
      State::copy_limbs(a, local_positions, host, local_positions);
    }
    digits.push_back({std::move(b), std::move(a)});
  }
  return std::make_shared<const rlwe::SwitchingKey>(key->context(), std::move(digits), rlwe::KeyStorage::expanded,
                                                    key->seed(), key->base_stream());
}

// --- limb-local arithmetic: the local compute on each run of this rank's limbs ---

void ShardedBackend::add(RnsPoly& x, const RnsPoly& y) const {
  ring::require_compatible(x, y, "add");
  state_->each_run(x, [&](const Positions& run, RnsPoly vx) { state_->local->add(vx, state_->piece(y, run)); });
}
void ShardedBackend::sub(RnsPoly& x, const RnsPoly& y) const {
  ring::require_compatible(x, y, "subtract");
  state_->each_run(x, [&](const Positions& run, RnsPoly vx) { state_->local->sub(vx, state_->piece(y, run)); });
}
void ShardedBackend::negate(RnsPoly& x) const {
  state_->each_run(x, [&](const Positions&, RnsPoly vx) { state_->local->negate(vx); });
}
void ShardedBackend::multiply(RnsPoly& x, const RnsPoly& y) const {
  ring::require_compatible(x, y, "multiply");
  state_->each_run(x, [&](const Positions& run, RnsPoly vx) { state_->local->multiply(vx, state_->piece(y, run)); });
}
void ShardedBackend::multiply_accumulate(RnsPoly& x, const RnsPoly& y, const RnsPoly& z) const {
  ring::require_compatible(x, y, "multiply-accumulate");
  ring::require_compatible(x, z, "multiply-accumulate");
  state_->each_run(x, [&](const Positions& run, RnsPoly vx) {
    state_->local->multiply_accumulate(vx, state_->piece(y, run), state_->piece(z, run));
  });
}
void ShardedBackend::multiply_accumulate_many(RnsPoly& out, std::span<const RnsPoly* const> a,
                                              std::span<const RnsPoly* const> b, bool accumulate) const {
  state_->each_run(out, [&](const Positions& run, RnsPoly v) {
    const PieceList va(*state_, a, run), vb(*state_, b, run);
    state_->local->multiply_accumulate_many(v, va.pointers, vb.pointers, accumulate);
  });
}
void ShardedBackend::linear_combination(RnsPoly& out, std::span<const RnsPoly* const> a,
                                        std::span<const RnsPoly* const> b, std::span<const RnsPoly* const> c,
                                        std::span<const std::uint32_t> scalars, bool accumulate) const {
  require(scalars.size() == c.size() * out.limb_count(), "linear combination: {} scalars for {} scaled terms of {} limbs",
          scalars.size(), c.size(), out.limb_count());
  state_->each_run(out, [&](const Positions& run, RnsPoly v) {
    const PieceList va(*state_, a, run), vb(*state_, b, run), vc(*state_, c, run);
    const auto local = c.empty() ? std::vector<std::uint32_t>{} : local_scalars(scalars, out.limb_count(), run);
    state_->local->linear_combination(v, va.pointers, vb.pointers, vc.pointers, local, accumulate);
  });
}
void ShardedBackend::linear_combination_rescaled(const ring::Rescaler& rescaler, RnsPoly& out,
                                                 std::span<const RnsPoly* const> a, std::span<const RnsPoly* const> b,
                                                 std::span<const RnsPoly* const> c,
                                                 std::span<const std::uint32_t> scalars) const {
  require(!a.empty() || !c.empty(), "rescaled linear combination: no terms");
  RnsPoly sum = allocate((a.empty() ? c[0] : a[0])->basis_ptr(), ring::PolyOptions{.form = ring::PolyForm::ntt});
  linear_combination(sum, a, b, c, scalars, false);
  rescale(rescaler, sum);
  out = std::move(sum);
}

std::array<RnsPoly, 2> ShardedBackend::tensor(RnsPoly& x0, const RnsPoly& x1, const RnsPoly& y0,
                                              const RnsPoly& y1) const {
  std::vector<RnsPoly> d1, d2;
  state_->each_run(x0, [&](const Positions& run, RnsPoly v0) {
    auto [e1, e2] = state_->local->tensor(v0, state_->piece(x1, run), state_->piece(y0, run), state_->piece(y1, run));
    d1.push_back(std::move(e1));
    d2.push_back(std::move(e2));
  });
  return {state_->assemble(std::move(d1), x0.basis_ptr(), x0.form()),
          state_->assemble(std::move(d2), x0.basis_ptr(), x0.form())};
}

RnsPoly ShardedBackend::sum(const RnsPoly& y, const RnsPoly& z) const {
  RnsPoly out = state_->slice(y);
  add(out, z);
  return out;
}
RnsPoly ShardedBackend::difference(const RnsPoly& y, const RnsPoly& z) const {
  RnsPoly out = state_->slice(y);
  sub(out, z);
  return out;
}
RnsPoly ShardedBackend::product(const RnsPoly& y, const RnsPoly& z) const {
  RnsPoly out = state_->slice(y);
  multiply(out, z);
  return out;
}
RnsPoly ShardedBackend::negation(const RnsPoly& y) const {
  RnsPoly out = state_->slice(y);
  negate(out);
  return out;
}
RnsPoly ShardedBackend::scalar_product(const RnsPoly& y, std::span<const std::uint32_t> per_limb) const {
  RnsPoly out = state_->slice(y);
  multiply_scalar(out, per_limb);
  return out;
}
std::array<RnsPoly, 3> ShardedBackend::tensor_product(const RnsPoly& x0, const RnsPoly& x1, const RnsPoly& y0,
                                                      const RnsPoly& y1) const {
  RnsPoly d0 = state_->slice(x0);
  auto [d1, d2] = tensor(d0, x1, y0, y1);
  return {std::move(d0), std::move(d1), std::move(d2)};
}

RnsPoly ShardedBackend::prefix(const RnsPoly& y, const RnsBasisPtr& basis) const {
  require<MismatchError>(basis != nullptr && basis->size() <= y.limb_count() &&
                             std::equal(basis->primes().begin(), basis->primes().end(), y.basis().primes().begin()),
                         "prefix: {} is not a prefix of the polynomial's {}",
                         basis ? ring::describe(*basis) : std::string("no basis"), ring::describe(y.basis()));
  RnsPoly out = state_->allocate(basis, y.form(), BufferInit::uninitialized);
  const Positions local_positions = state_->layout.local_positions(*basis);
  State::copy_limbs(out, local_positions, y, local_positions);
  return out;
}

void ShardedBackend::multiply_scalar(RnsPoly& x, std::span<const std::uint32_t> per_limb) const {
  require(per_limb.size() == x.limb_count(), "{} scalars for a polynomial of {} limbs", per_limb.size(),
          x.limb_count());
  state_->each_run(x, [&](const Positions& run, RnsPoly v) {
    state_->local->multiply_scalar(v, local_scalars(per_limb, x.limb_count(), run));
  });
}
void ShardedBackend::add_scalar(RnsPoly& x, std::span<const std::uint32_t> per_limb) const {
  require(per_limb.size() == x.limb_count(), "{} scalars for a polynomial of {} limbs", per_limb.size(),
          x.limb_count());
  state_->each_run(x, [&](const Positions& run, RnsPoly v) {
    state_->local->add_scalar(v, local_scalars(per_limb, x.limb_count(), run));
  });
}
void ShardedBackend::multiply_integer(RnsPoly& x, std::int64_t integer) const {
  state_->each_run(x, [&](const Positions&, RnsPoly v) { state_->local->multiply_integer(v, integer); });
}

void ShardedBackend::to_ntt(RnsPoly& x) const {
  if (x.form() == ring::PolyForm::ntt) return;
  state_->each_run(x, [&](const Positions&, RnsPoly v) { state_->local->to_ntt(v); });
  x.set_form(ring::PolyForm::ntt);
}
void ShardedBackend::to_coeff(RnsPoly& x) const {
  if (x.form() == ring::PolyForm::coefficient) return;
  state_->each_run(x, [&](const Positions&, RnsPoly v) { state_->local->to_coeff(v); });
  x.set_form(ring::PolyForm::coefficient);
}

void ShardedBackend::drop_to(RnsPoly& x, const RnsBasisPtr& basis) const { x.drop_to(basis); }

RnsPoly ShardedBackend::automorphism(const ring::Automorphism& automorphism, const RnsPoly& y) const {
  std::vector<RnsPoly> results;
  state_->each_run(y, [&](const Positions&, RnsPoly v) {
    results.push_back(state_->local->automorphism(automorphism, v));
  });
  return state_->assemble(std::move(results), y.basis_ptr(), y.form());
}

// --- operations that couple limbs ---

void ShardedBackend::rescale(const ring::Rescaler& rescaler, RnsPoly& x) const {
  rescale(rescaler, std::span<RnsPoly>(&x, 1));
}

void ShardedBackend::rescale(const ring::Rescaler& rescaler, std::span<RnsPoly> parts) const {
  if (parts.empty()) return;
  State& s = *state_;
  const RnsBasis& basis = rescaler.basis();
  const std::size_t kept = rescaler.kept().size();
  std::vector<const RnsPoly*> polys;
  for (const auto& part : parts) {
    require<MismatchError>(part.basis() == basis, "rescale: a polynomial over {} with a rescaler over {}",
                           ring::describe(part.basis()), ring::describe(basis));
    polys.push_back(&part);
  }
  // The dropped limbs go to every rank; each rank divides its own kept limbs.
  Positions dropped;
  for (std::size_t i = kept; i < basis.size(); ++i) dropped.push_back(i);
  auto gathered = s.gather(polys, dropped, s.basis_of(basis, dropped), s.local->device());
  Positions local;
  for (std::size_t p : s.layout.local_positions(basis)) {
    if (p < kept) local.push_back(p);
  }
  if (!local.empty()) {
    Positions joined_positions = local;
    joined_positions.insert(joined_positions.end(), dropped.begin(), dropped.end());
    const RnsBasisPtr work_basis = s.basis_of(basis, joined_positions);
    const auto local_rescaler = s.rescaler(work_basis, rescaler.dropped(), rescaler.rounding());
    for (std::size_t k = 0; k < parts.size(); ++k) {
      RnsPoly work = s.joined(parts[k], local, std::move(gathered[k]), work_basis);
      s.local->rescale(*local_rescaler, work);
      // A borrowed view divided its limbs in place; a copy goes back.
      if (!s.local->multi_shard()) State::copy_limbs(parts[k], local, work, State::consecutive(0, local.size()));
    }
  }
  for (auto& part : parts) part.drop_to(rescaler.kept_ptr());
}

RnsPoly ShardedBackend::mod_raise(const RnsPoly& y, const RnsBasisPtr& basis) const {
  State& s = *state_;
  const RnsPoly whole = s.local->place(download(y));
  const RnsBasisPtr local = s.local_basis(*basis);
  std::vector<RnsPoly> results;
  if (local != nullptr) results.push_back(s.local->mod_raise(whole, local));
  return s.assemble(std::move(results), basis, ring::PolyForm::ntt);
}

rlwe::DecomposedPoly ShardedBackend::mod_up(const rlwe::Context& context, const RnsPoly& y, int level) const {
  rlwe::require_key_switch_input(context, y, level);
  State& s = *state_;
  // Every digit's conversion reads all of the digit's limbs in coefficient form: each rank turns its own limbs
  // to coefficient form and they go to every rank (onto this rank's device).
  RnsPoly coefficients = s.slice(y);
  to_coeff(coefficients);
  const RnsPoly* polys[] = {&coefficients};
  RnsPoly whole = std::move(
      s.gather(polys, State::consecutive(0, y.limb_count()), y.basis_ptr(), s.local->device())[0]);

  const RnsBasisPtr& qp = context.qp_basis(level);
  const std::size_t q_limbs = context.limbs_at(level);
  const Positions local = s.layout.local_positions(*qp);
  rlwe::DecomposedPoly out{level, {}};
  for (std::size_t d = 0; d < context.digit_count(level); ++d) {
    const std::size_t first = context.digit_first_prime(d);
    const std::size_t last = std::min(first + context.alpha(), q_limbs);
    RnsPoly digit = s.allocate(qp, ring::PolyForm::ntt, BufferInit::uninitialized);
    Positions own, converted;
    for (std::size_t t : local) (t >= first && t < last ? own : converted).push_back(t);
    State::copy_limbs(digit, own, y, own);  // the digit's own limbs, as they are (NTT form)
    if (!converted.empty()) {
      RnsPoly extended =
          s.local->convert_basis(s.piece(whole, State::consecutive(first, last - first)), s.basis_of(*qp, converted));
      s.local->to_ntt(extended);
      State::copy_limbs(digit, converted, extended, State::consecutive(0, converted.size()));
    }
    out.digits.push_back(std::move(digit));
  }
  return out;
}

std::array<RnsPoly, 2> ShardedBackend::key_switch_inner_product(const rlwe::Context& context,
                                                                const rlwe::DecomposedPoly& decomposed,
                                                                const rlwe::SwitchingKey& key,
                                                                const ring::Automorphism* automorphism) const {
  State& s = *state_;
  const RnsBasisPtr& qp = context.qp_basis(decomposed.level);
  std::array<RnsPoly, 2> sum{s.allocate(qp, ring::PolyForm::ntt, BufferInit::uninitialized),
                             s.allocate(qp, ring::PolyForm::ntt, BufferInit::uninitialized)};
  const std::shared_ptr<const rlwe::SwitchingKey> held =
      resident(std::shared_ptr<const rlwe::SwitchingKey>(&key, [](const rlwe::SwitchingKey*) {}));
  const RnsBasis& key_basis = held->b(0).basis();
  const std::size_t digits = decomposed.digits.size();
  require<MismatchError>(digits <= held->digit_count(), "key switching: {} digits and a key of {}", digits,
                         held->digit_count());
  // sum_j = sum_d digit_d key_{d,j} at each run of this rank's limbs of Q_l u P, with the key's limbs of those
  // primes. Below the top level the key's P limbs do not follow its Q_l limbs: a device run splits there.
  std::vector<Positions> groups;
  for (const Positions& run : s.runs(*qp)) {
    groups.emplace_back();
    for (std::size_t i = 0; i < run.size(); ++i) {
      const auto key_position = [&](std::size_t k) { return *key_basis.index_of(qp->prime(run[k])); };
      const bool jump = i > 0 && key_position(i) != key_position(i - 1) + 1;
      if (jump && !s.local->multi_shard()) groups.emplace_back();
      groups.back().push_back(run[i]);
    }
  }
  for (const Positions& run : groups) {
    Positions key_positions;
    for (std::size_t p : run) key_positions.push_back(*key_basis.index_of(qp->prime(p)));
    std::vector<RnsPoly> digit_pieces, b_pieces, a_pieces;
    for (std::size_t d = 0; d < digits; ++d) {
      RnsPoly piece = s.piece(decomposed.digits[d], run);
      digit_pieces.push_back(automorphism != nullptr ? s.local->automorphism(*automorphism, piece) : std::move(piece));
      b_pieces.push_back(s.piece(held->b(d), key_positions));
      a_pieces.push_back(s.piece(*held->stored_a(d), key_positions));
    }
    std::vector<const RnsPoly*> dp, bp, ap;
    for (std::size_t d = 0; d < digits; ++d) {
      dp.push_back(&digit_pieces[d]);
      bp.push_back(&b_pieces[d]);
      ap.push_back(&a_pieces[d]);
    }
    RnsPoly out0 = s.piece(sum[0], run), out1 = s.piece(sum[1], run);
    // The key's limbs are over the key's primes; the sums' pieces take the digits' (the same primes in order).
    s.local->multiply_accumulate_many(out0, dp, bp, false);
    s.local->multiply_accumulate_many(out1, dp, ap, false);
  }
  return sum;
}

namespace {

// ModDown of several polynomials over one full basis, their P limbs gathered in one all-gather.
std::vector<RnsPoly> mod_down_all(ShardedBackend::State& s, const ring::ModDown& mod_down,
                                  std::span<const RnsPoly* const> polys) {
  const RnsBasis& full = mod_down.full();
  const RnsBasis& kept = mod_down.kept();
  for (const RnsPoly* y : polys) {
    require<MismatchError>(y->basis() == full, "ModDown: a polynomial over {} for a ModDown from {}",
                           ring::describe(y->basis()), ring::describe(full));
  }
  // P's limbs go to every rank; each rank divides its own kept limbs.
  Positions dropped, local;
  for (std::size_t i = 0; i < full.size(); ++i) {
    if (!kept.contains(full.prime(i))) dropped.push_back(i);
  }
  for (std::size_t i = 0; i < kept.size(); ++i) {
    if (s.layout.is_local(kept.prime(i))) local.push_back(*full.index_of(kept.prime(i)));
  }
  auto gathered = s.gather(polys, dropped, s.basis_of(full, dropped), s.local->device());
  std::vector<RnsPoly> out;
  if (local.empty()) {
    for (const RnsPoly* y : polys) out.push_back(s.assemble({}, mod_down.kept_ptr(), y->form()));
    return out;
  }
  Positions joined_positions = local;
  joined_positions.insert(joined_positions.end(), dropped.begin(), dropped.end());
  const RnsBasisPtr work_basis = s.basis_of(full, joined_positions);
  const RnsBasisPtr local_kept = s.basis_of(full, local);
  const auto local_mod_down = s.mod_down(work_basis, local_kept, mod_down.rounding());
  for (std::size_t k = 0; k < polys.size(); ++k) {
    const RnsPoly work = s.joined(*polys[k], local, std::move(gathered[k]), work_basis);
    std::vector<RnsPoly> results;
    results.push_back(s.local->mod_down(*local_mod_down, work));
    out.push_back(s.assemble(std::move(results), mod_down.kept_ptr(), polys[k]->form()));
  }
  return out;
}

}  // namespace

RnsPoly ShardedBackend::mod_down(const ring::ModDown& mod_down, const RnsPoly& y) const {
  const RnsPoly* polys[] = {&y};
  return std::move(mod_down_all(*state_, mod_down, polys)[0]);
}

std::array<RnsPoly, 2> ShardedBackend::key_switch_apply(const rlwe::Context& context,
                                                        const rlwe::DecomposedPoly& decomposed,
                                                        const rlwe::SwitchingKey& key,
                                                        const ring::Automorphism* automorphism) const {
  const auto sum = key_switch_inner_product(context, decomposed, key, automorphism);
  const RnsPoly* polys[] = {&sum[0], &sum[1]};
  auto down = mod_down_all(*state_, context.mod_down(decomposed.level), polys);
  return {std::move(down[0]), std::move(down[1])};
}

std::array<RnsPoly, 2> ShardedBackend::key_switch_apply(const rlwe::Context& context,
                                                        const rlwe::DecomposedPoly& decomposed,
                                                        const rlwe::SwitchingKey& key,
                                                        const ring::Automorphism* automorphism,
                                                        std::array<const RnsPoly*, 2> addends) const {
  auto sums = key_switch_apply(context, decomposed, key, automorphism);
  for (std::size_t i = 0; i < 2; ++i) {
    if (addends[i] != nullptr) add(sums[i], *addends[i]);
  }
  return sums;
}

std::array<RnsPoly, 2> ShardedBackend::key_switch_apply(const rlwe::Context& context,
                                                        const rlwe::DecomposedPoly& decomposed,
                                                        const rlwe::SwitchingKey& key,
                                                        const ring::Automorphism* automorphism,
                                                        std::array<const RnsPoly*, 2> addends,
                                                        const ring::Rescaler& rescaler) const {
  // The words of ModDown, the additions and the rescale in sequence (rlwe::key_switch_apply_rescaled's).
  auto sums = key_switch_apply(context, decomposed, key, automorphism, addends);
  rescale(rescaler, std::span<RnsPoly>(sums));
  return sums;
}

}  // namespace cerium::dist
