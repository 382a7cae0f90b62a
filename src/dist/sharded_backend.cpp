#include "cerium/dist/sharded_backend.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "cerium/backend/cpu_backend.hpp"
#include "cerium/core/check.hpp"
#include "cerium/math/ntt.hpp"

namespace cerium::dist {

using ring::RnsBasis;
using ring::RnsBasisPtr;
using ring::RnsPoly;
using ring::RnsShard;
using Positions = std::vector<std::size_t>;
using Primes = std::vector<std::uint32_t>;

struct ShardedBackend::State {
  Communicator* comm = nullptr;
  rlwe::ContextPtr context;
  LimbLayout layout;
  ShardedOptions options;
  backend::CpuBackend cpu;

  std::mutex mutex;  // the caches (a rank's backend is driven by one thread; its copies may live elsewhere)
  std::map<Primes, RnsBasisPtr> bases;
  std::map<std::pair<Primes, Primes>, std::shared_ptr<const ring::BasisConverter>> converters;
  std::map<std::tuple<Primes, std::size_t, ring::Rounding>, std::shared_ptr<const ring::Rescaler>> rescalers;
  std::map<std::tuple<Primes, Primes, ring::Rounding>, std::shared_ptr<const ring::ModDown>> mod_downs;

  State(Communicator& c, rlwe::ContextPtr ctx, ShardedOptions opts)
      : comm(&c),
        context(std::move(ctx)),
        layout(*context, c.size(), c.rank(), Device::cpu(), opts.layout),
        options(opts) {}

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

  std::shared_ptr<const ring::BasisConverter> converter(const RnsBasisPtr& from, const RnsBasisPtr& to) {
    const std::lock_guard lock(mutex);
    auto& slot = converters[{Primes(from->primes().begin(), from->primes().end()),
                             Primes(to->primes().begin(), to->primes().end())}];
    if (slot == nullptr) slot = std::make_shared<const ring::BasisConverter>(from, to);
    return slot;
  }
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

  // Whether a host polynomial over this basis must be checked for agreement: only when its limbs go to two or
  // more ranks (a rank-independent fact, so every rank makes the same collective call), and x is a whole host
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

  // Borrowed views of y's limbs at these positions (ascending), grouped in runs within y's shards. The limbs
  // must be held here.
  static std::vector<RnsShard> pieces(const RnsPoly& y, const Positions& positions) {
    std::vector<RnsShard> out;
    const auto shards = y.shards();
    std::size_t s = 0;
    for (std::size_t i = 0; i < positions.size();) {
      const std::size_t p = positions[i];
      while (s < shards.size() && p >= shards[s].first_limb() + shards[s].limb_count()) ++s;
      require(s < shards.size() && p >= shards[s].first_limb(), "limb {} of a polynomial of {} limbs", p,
              y.limb_count());
      const RnsShard& shard = shards[s];
      require<UnsupportedError>(!shard.is_remote(),
                                "limb {} of this polynomial is held by rank {}, but the mesh's layout puts it here: "
                                "the polynomial was sharded over another layout (place it through this backend)",
                                p, shard.device().index);
      std::size_t j = i + 1;
      const std::size_t end = shard.first_limb() + shard.limb_count();
      while (j < positions.size() && positions[j] == positions[j - 1] + 1 && positions[j] < end) ++j;
      out.push_back(shard.borrow(p - shard.first_limb(), j - i));
      i = j;
    }
    return out;
  }

  // This rank's limbs of y as a polynomial over its local basis, borrowing y's words (empty when none are here).
  RnsPoly view(const RnsPoly& y) {
    const Positions positions = layout.local_positions(y.basis());
    if (positions.empty()) return {};
    return RnsPoly::from_shards(basis_of(y.basis(), positions), y.form(), pieces(y, positions));
  }

  // A result over this rank's local basis of `global` (or empty when none are here) in the layout's view of
  // global: its shards taken over when they match the local runs, else its limbs copied.
  RnsPoly adopt(RnsPoly local, const RnsBasisPtr& global, ring::PolyForm form) const {
    const auto specs = layout.shards(*global);
    const std::size_t n = global->ring_degree();
    std::vector<std::size_t> local_runs;
    for (const auto& spec : specs) {
      if (!spec.device.is_remote()) local_runs.push_back(spec.limb_count);
    }
    std::vector<std::size_t> have;
    if (!local.empty()) {
      for (const auto& shard : local.shards()) have.push_back(shard.limb_count());
      form = local.form();
    }
    if (have != local_runs) {
      RnsPoly out = allocate(global, form, BufferInit::uninitialized);
      const Positions positions = layout.local_positions(*global);
      for (std::size_t j = 0; j < positions.size(); ++j) {
        std::ranges::copy(std::as_const(local).limb(j), out.limb(positions[j]).begin());
      }
      return out;
    }
    std::vector<RnsShard> parts = local.empty() ? std::vector<RnsShard>{} : local.release_shards();
    std::vector<RnsShard> shards;
    std::size_t next = 0;
    for (const auto& spec : specs) {
      if (spec.device.is_remote()) shards.emplace_back(spec.device, 0, spec.limb_count, n, BufferInit::zero);
      else shards.push_back(std::move(parts[next++]));
    }
    return RnsPoly::from_shards(global, form, std::move(shards));
  }

  // This rank's limbs of any polynomial over a basis of the mesh (a full host one, or one in the layout), copied.
  RnsPoly slice(const RnsPoly& x) const {
    RnsPoly out = allocate(x.basis_ptr(), x.form(), BufferInit::uninitialized);
    for (std::size_t p : layout.local_positions(x.basis())) std::ranges::copy(x.limb(p), out.limb(p).begin());
    return out;
  }

  // The limbs at `positions` (ascending) of each of polys (one basis), from their owners onto every rank, in one
  // all-gather: a host polynomial each over `result_basis` (whose primes are those positions' primes).
  std::vector<RnsPoly> gather(std::span<const RnsPoly* const> polys, const Positions& positions,
                              const RnsBasisPtr& result_basis) {
    const RnsBasis& basis = polys[0]->basis();
    const std::size_t n = basis.ring_degree();
    const auto ranks = static_cast<std::size_t>(layout.ranks());
    std::vector<Positions> owned(ranks);
    for (std::size_t i = 0; i < positions.size(); ++i) {
      owned[static_cast<std::size_t>(layout.owner(basis.prime(positions[i])))].push_back(i);
    }
    std::vector<std::size_t> counts(ranks);
    for (std::size_t r = 0; r < ranks; ++r) counts[r] = owned[r].size() * polys.size() * n;
    std::vector<std::uint32_t> mine;
    mine.reserve(counts[static_cast<std::size_t>(layout.rank())]);
    for (const RnsPoly* y : polys) {
      require<MismatchError>(y->basis() == basis, "gathering limbs of polynomials over different bases");
      for (std::size_t i : owned[static_cast<std::size_t>(layout.rank())]) {
        const auto limb = y->limb(positions[i]);
        mine.insert(mine.end(), limb.begin(), limb.end());
      }
    }
    std::vector<std::uint32_t> all(std::accumulate(counts.begin(), counts.end(), std::size_t{0}));
    comm->all_gather(mine, all, counts);
    std::vector<RnsPoly> out;
    for (const RnsPoly* y : polys) {
      out.emplace_back(result_basis, ring::PolyOptions{.form = y->form(), .init = BufferInit::uninitialized});
    }
    const std::uint32_t* from = all.data();
    for (std::size_t r = 0; r < ranks; ++r) {
      for (auto& poly : out) {
        for (std::size_t i : owned[r]) {
          std::copy(from, from + n, poly.limb(i).begin());
          from += n;
        }
      }
    }
    return out;
  }

  // The local limbs at kept (positions of y, held here) followed by the gathered limbs, as one polynomial
  // (borrowing y's words, owning the gathered ones).
  RnsPoly joined(const RnsPoly& y, const Positions& kept, RnsPoly gathered, const RnsBasisPtr& basis) {
    std::vector<RnsShard> shards = pieces(y, kept);
    for (auto& s : gathered.release_shards()) shards.push_back(std::move(s));
    return RnsPoly::from_shards(basis, y.form(), std::move(shards));
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

// A sample of a host polynomial's words (32 per limb) with its basis and form: different randomness or values
// show up in it with overwhelming probability.
void add_sample(Fingerprint& f, const RnsPoly& x) {
  f.add(static_cast<std::uint64_t>(x.form()));
  const std::size_t n = x.n();
  for (std::size_t i = 0; i < x.limb_count(); ++i) {
    f.add(x.basis().prime(i));
    const auto limb = x.limb(i);
    for (std::size_t k = 0; k < 16 && k < n; ++k) f.add(limb[k]);
    for (std::size_t k = 0; k < 16; ++k) f.add(limb[(k * n / 16 + 7) % n]);
  }
}

// Both operands of an elementwise operation over this rank's limbs.
void require_sharded_pair(const RnsPoly& x, const RnsPoly& y, const char* operation) {
  ring::require_compatible(x, y, operation);
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

// Views of a list of factors, and pointers to them.
struct ViewList {
  std::vector<RnsPoly> views;
  std::vector<const RnsPoly*> pointers;
  ViewList(ShardedBackend::State& s, std::span<const RnsPoly* const> factors) {
    views.reserve(factors.size());
    for (const RnsPoly* f : factors) {
      require(f != nullptr, "a null factor");
      views.push_back(s.view(*f));
    }
    for (const auto& v : views) pointers.push_back(&v);
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
  Positions all(y.limb_count());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const RnsPoly* polys[] = {&y};
  return std::move(state_->gather(polys, all, y.basis_ptr())[0]);
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
  if (state_->in_layout(key->b(0))) return key;
  std::vector<std::array<RnsPoly, 2>> digits;
  for (std::size_t d = 0; d < key->digit_count(); ++d) {
    const RnsPoly* a = key->stored_a(d);
    digits.push_back({state_->slice(key->b(d)), a != nullptr ? state_->slice(*a) : RnsPoly()});
  }
  return std::make_shared<const rlwe::SwitchingKey>(key->context(), std::move(digits), key->storage(), key->seed(),
                                                    key->base_stream());
}

// --- limb-local arithmetic: the CPU backend on views ---

void ShardedBackend::add(RnsPoly& x, const RnsPoly& y) const {
  require_sharded_pair(x, y, "add");
  RnsPoly vx = state_->view(x);
  if (!vx.empty()) state_->cpu.add(vx, state_->view(y));
}
void ShardedBackend::sub(RnsPoly& x, const RnsPoly& y) const {
  require_sharded_pair(x, y, "subtract");
  RnsPoly vx = state_->view(x);
  if (!vx.empty()) state_->cpu.sub(vx, state_->view(y));
}
void ShardedBackend::negate(RnsPoly& x) const {
  RnsPoly vx = state_->view(x);
  if (!vx.empty()) state_->cpu.negate(vx);
}
void ShardedBackend::multiply(RnsPoly& x, const RnsPoly& y) const {
  require_sharded_pair(x, y, "multiply");
  RnsPoly vx = state_->view(x);
  if (!vx.empty()) state_->cpu.multiply(vx, state_->view(y));
}
void ShardedBackend::multiply_accumulate(RnsPoly& x, const RnsPoly& y, const RnsPoly& z) const {
  require_sharded_pair(x, y, "multiply-accumulate");
  require_sharded_pair(x, z, "multiply-accumulate");
  RnsPoly vx = state_->view(x);
  if (!vx.empty()) state_->cpu.multiply_accumulate(vx, state_->view(y), state_->view(z));
}
void ShardedBackend::multiply_accumulate_many(RnsPoly& out, std::span<const RnsPoly* const> a,
                                              std::span<const RnsPoly* const> b, bool accumulate) const {
  RnsPoly v = state_->view(out);
  if (v.empty()) return;
  const ViewList va(*state_, a), vb(*state_, b);
  state_->cpu.multiply_accumulate_many(v, va.pointers, vb.pointers, accumulate);
}
void ShardedBackend::linear_combination(RnsPoly& out, std::span<const RnsPoly* const> a,
                                        std::span<const RnsPoly* const> b, std::span<const RnsPoly* const> c,
                                        std::span<const std::uint32_t> scalars, bool accumulate) const {
  require(scalars.size() == c.size() * out.limb_count(), "linear combination: {} scalars for {} scaled terms of {} limbs",
          scalars.size(), c.size(), out.limb_count());
  RnsPoly v = state_->view(out);
  if (v.empty()) return;
  const ViewList va(*state_, a), vb(*state_, b), vc(*state_, c);
  const auto local = c.empty() ? std::vector<std::uint32_t>{}
                               : local_scalars(scalars, out.limb_count(), state_->layout.local_positions(out.basis()));
  state_->cpu.linear_combination(v, va.pointers, vb.pointers, vc.pointers, local, accumulate);
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
  RnsPoly v0 = state_->view(x0);
  if (v0.empty()) {
    return {state_->adopt({}, x0.basis_ptr(), x0.form()), state_->adopt({}, x0.basis_ptr(), x0.form())};
  }
  auto [d1, d2] = state_->cpu.tensor(v0, state_->view(x1), state_->view(y0), state_->view(y1));
  return {state_->adopt(std::move(d1), x0.basis_ptr(), x0.form()),
          state_->adopt(std::move(d2), x0.basis_ptr(), x0.form())};
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
  for (std::size_t p : state_->layout.local_positions(*basis)) std::ranges::copy(y.limb(p), out.limb(p).begin());
  return out;
}

void ShardedBackend::multiply_scalar(RnsPoly& x, std::span<const std::uint32_t> per_limb) const {
  require(per_limb.size() == x.limb_count(), "{} scalars for a polynomial of {} limbs", per_limb.size(),
          x.limb_count());
  RnsPoly v = state_->view(x);
  if (!v.empty()) {
    state_->cpu.multiply_scalar(v, local_scalars(per_limb, x.limb_count(), state_->layout.local_positions(x.basis())));
  }
}
void ShardedBackend::add_scalar(RnsPoly& x, std::span<const std::uint32_t> per_limb) const {
  require(per_limb.size() == x.limb_count(), "{} scalars for a polynomial of {} limbs", per_limb.size(),
          x.limb_count());
  RnsPoly v = state_->view(x);
  if (!v.empty()) {
    state_->cpu.add_scalar(v, local_scalars(per_limb, x.limb_count(), state_->layout.local_positions(x.basis())));
  }
}
void ShardedBackend::multiply_integer(RnsPoly& x, std::int64_t integer) const {
  RnsPoly v = state_->view(x);
  if (!v.empty()) state_->cpu.multiply_integer(v, integer);
}

void ShardedBackend::to_ntt(RnsPoly& x) const {
  if (x.form() == ring::PolyForm::ntt) return;
  RnsPoly v = state_->view(x);
  if (!v.empty()) state_->cpu.to_ntt(v);
  x.set_form(ring::PolyForm::ntt);
}
void ShardedBackend::to_coeff(RnsPoly& x) const {
  if (x.form() == ring::PolyForm::coefficient) return;
  RnsPoly v = state_->view(x);
  if (!v.empty()) state_->cpu.to_coeff(v);
  x.set_form(ring::PolyForm::coefficient);
}

void ShardedBackend::drop_to(RnsPoly& x, const RnsBasisPtr& basis) const { x.drop_to(basis); }

RnsPoly ShardedBackend::automorphism(const ring::Automorphism& automorphism, const RnsPoly& y) const {
  RnsPoly v = state_->view(y);
  return state_->adopt(v.empty() ? RnsPoly() : automorphism.apply(v), y.basis_ptr(), y.form());
}

// --- operations that couple limbs ---

void ShardedBackend::rescale(const ring::Rescaler& rescaler, RnsPoly& x) const {
  rescale(rescaler, std::span<RnsPoly>(&x, 1));
}

void ShardedBackend::rescale(const ring::Rescaler& rescaler, std::span<RnsPoly> parts) const {
  if (parts.empty()) return;
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
  auto gathered = state_->gather(polys, dropped, state_->basis_of(basis, dropped));
  Positions local;
  for (std::size_t p : state_->layout.local_positions(basis)) {
    if (p < kept) local.push_back(p);
  }
  if (!local.empty()) {
    Positions joined_positions = local;
    joined_positions.insert(joined_positions.end(), dropped.begin(), dropped.end());
    const RnsBasisPtr work_basis = state_->basis_of(basis, joined_positions);
    const auto local_rescaler = state_->rescaler(work_basis, rescaler.dropped(), rescaler.rounding());
    for (std::size_t k = 0; k < parts.size(); ++k) {
      RnsPoly work = state_->joined(parts[k], local, std::move(gathered[k]), work_basis);
      local_rescaler->apply_in_place(work);
    }
  }
  for (auto& part : parts) part.drop_to(rescaler.kept_ptr());
}

RnsPoly ShardedBackend::mod_raise(const RnsPoly& y, const RnsBasisPtr& basis) const {
  const RnsPoly whole = download(y);
  const RnsBasisPtr local = state_->local_basis(*basis);
  return state_->adopt(local ? state_->cpu.mod_raise(whole, local) : RnsPoly(), basis, ring::PolyForm::ntt);
}

rlwe::DecomposedPoly ShardedBackend::mod_up(const rlwe::Context& context, const RnsPoly& y, int level) const {
  rlwe::require_key_switch_input(context, y, level);
  // Every digit's conversion reads all of the digit's limbs in coefficient form: each rank turns its own limbs
  // to coefficient form and they go to every rank.
  RnsPoly coefficients = state_->slice(y);
  to_coeff(coefficients);
  const RnsPoly whole = download(coefficients);

  const RnsBasisPtr& qp = context.qp_basis(level);
  const std::size_t q_limbs = context.limbs_at(level);
  const Positions local = state_->layout.local_positions(*qp);
  rlwe::DecomposedPoly out{level, {}};
  for (std::size_t d = 0; d < context.digit_count(level); ++d) {
    const std::size_t first = context.digit_first_prime(d);
    const std::size_t last = std::min(first + context.alpha(), q_limbs);
    RnsPoly digit = state_->allocate(qp, ring::PolyForm::ntt, BufferInit::uninitialized);
    Positions converted;
    for (std::size_t t : local) {
      if (t >= first && t < last) std::ranges::copy(y.limb(t), digit.limb(t).begin());  // the digit's own limbs
      else converted.push_back(t);
    }
    if (!converted.empty()) {
      Positions digit_positions;
      for (std::size_t i = first; i < last; ++i) digit_positions.push_back(i);
      const auto converter = state_->converter(state_->basis_of(*qp, digit_positions), state_->basis_of(*qp, converted));
      std::vector<std::span<const std::uint32_t>> in;
      for (std::size_t i = first; i < last; ++i) in.push_back(whole.limb(i));
      std::vector<std::span<std::uint32_t>> targets;
      for (std::size_t t : converted) targets.push_back(digit.limb(t));
      converter->convert(in, targets);
      for (std::size_t j = 0; j < converted.size(); ++j) math::ntt_forward(targets[j], qp->ntt(converted[j]));
    }
    out.digits.push_back(std::move(digit));
  }
  return out;
}

std::array<RnsPoly, 2> ShardedBackend::key_switch_inner_product(const rlwe::Context& context,
                                                                const rlwe::DecomposedPoly& decomposed,
                                                                const rlwe::SwitchingKey& key,
                                                                const ring::Automorphism* automorphism) const {
  const RnsBasisPtr& qp = context.qp_basis(decomposed.level);
  std::array<RnsPoly, 2> sum{state_->allocate(qp, ring::PolyForm::ntt, BufferInit::uninitialized),
                             state_->allocate(qp, ring::PolyForm::ntt, BufferInit::uninitialized)};
  // The key's limbs of this rank's primes are held here too.
  rlwe::key_switch_inner_product_limbs(context, decomposed, key, automorphism, state_->layout.local_positions(*qp),
                                       sum);
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
  auto gathered = s.gather(polys, dropped, s.basis_of(full, dropped));
  std::vector<RnsPoly> out;
  if (local.empty()) {
    for (const RnsPoly* y : polys) out.push_back(s.adopt({}, mod_down.kept_ptr(), y->form()));
    return out;
  }
  Positions joined_positions = local;
  joined_positions.insert(joined_positions.end(), dropped.begin(), dropped.end());
  const RnsBasisPtr work_basis = s.basis_of(full, joined_positions);
  const auto local_mod_down = s.mod_down(work_basis, s.basis_of(full, local), mod_down.rounding());
  for (std::size_t k = 0; k < polys.size(); ++k) {
    const RnsPoly work = s.joined(*polys[k], local, std::move(gathered[k]), work_basis);
    out.push_back(s.adopt(local_mod_down->apply(work), mod_down.kept_ptr(), polys[k]->form()));
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
