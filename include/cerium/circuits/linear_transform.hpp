#pragma once
// A homomorphic slot-linear map, evaluated baby-step giant-step (circuits/bsgs.hpp): y = sum_g R^g ( sum_b
// diag'_(g,b) * R^b x ), rescaled once. Two ways to run it (LinearTransformConfig::hoisting):
//
//  - single: the baby rotations share one ModUp (rotate_hoisted), each finishing its own key switch; each giant's
//    inner sum is one fused pass per part (the backend's multiply_accumulate_many); each giant is one rotation.
//    The words equal the eager sequence: rotate_hoisted of the babies, per giant the products by the diagonals
//    summed in offset order, rotate by the giant, add the giants in increasing order, rescale.
//  - doubled (double hoisting, Bossuat et al. 2021; circuits/raised_ciphertext.hpp): the babies' key switches stop
//    before ModDown, each giant's inner sum multiplies their Q_l u P parts by the diagonals encoded over Q_l u P
//    (the same integers, more primes) and takes one ModDown per giant instead of one per baby; the giants'
//    rotations stop before ModDown too and share one final ModDown. Baby 0 (x itself) adds diag * c1 to the
//    inner sum's Q part, and giant 0's inner sum is added as it is: both exact, no lift by P. Not the single
//    form's words (a ModDown of a sum rounds once), the same values within the key-switching noise (slightly
//    less of it). It stores each diagonal twice (over Q_l and over Q_l u P).
//
//   circuits::LinearTransform<B> lt(evaluator, circuits::DiagonalMatrix::from_dense(rows), {.level = 5});
//   keys: lt.rotation_steps();  result: lt.apply(evaluator, ct)   (level 5 -> 4, the input's scale kept)
//
// The diagonals come from values (a DiagonalMatrix, compressed diagonals included), from plaintexts (by offset, as
// hoisted babies only; or already in BSGS form by (giant, baby)), or from a function that encodes on demand.
// Hoisting::automatic is doubled for values and functions (a function's plaintexts are lifted to Q_l u P exactly,
// ckks::Encoder::extend) and single for plaintexts given by the user, which are over Q_l only; ask for doubled
// to have them lifted as well (a CRT per coefficient, once, at construction). With cache_plaintexts (the default
// for values and functions) each diagonal is encoded once, at construction, where the evaluator computes (device
// memory for the CUDA backend); otherwise each apply encodes them again and holds only the values. Sizes (slots,
// offsets, levels) are run-time values.

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/backend/cpu_backend.hpp"
#include "cerium/circuits/bsgs.hpp"
#include "cerium/circuits/diagonal_matrix.hpp"
#include "cerium/circuits/hoisting.hpp"
#include "cerium/circuits/raised_ciphertext.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/core/check.hpp"

namespace cerium::circuits {

// How a LinearTransform is encoded and applied.
struct LinearTransformConfig {
  int level = -1;               // where the transform is applied (-1: the top level); inputs above drop to it
  double plaintext_scale = 0;   // of the diagonals; 0: P_level, so that the rescale gives back the input's scale
  std::size_t slots = 0;        // of the inputs; 0: the matrix's (values) or N/2
  bool rescale = true;          // rescale the sum (level - 1); false leaves it at level with scale * plaintext_scale
  bool cache_plaintexts = true;  // encode each diagonal once, at construction; else at every apply
  Hoisting hoisting = Hoisting::automatic;  // resolved at construction: config().hoisting is single or doubled
  BsgsOptions bsgs{};                       // how the baby-step stride is chosen
};

// Encodes diag'_(g,b) = R^-g diag_(g+b) with the given options (level, scale, slots). Called once per (g, b) when
// caching, at every apply otherwise.
using DiagonalEncoder =
    std::function<ckks::Plaintext(std::int64_t giant, std::int64_t baby, const ckks::EncodeOptions& options)>;

// A homomorphic slot-linear map on backend B (see the file comment).
template <backend::PolyBackend B = backend::CpuBackend>
class LinearTransform {
 public:
  using Key = std::pair<std::int64_t, std::int64_t>;  // (giant, baby)

  LinearTransform() = default;

  // From values. Compressed diagonals stay compressed until encoded.
  LinearTransform(const ckks::BasicEvaluator<B>& ev, DiagonalMatrix matrix, LinearTransformConfig config = {})
      : config_(resolve(ev, config, matrix.slots, Hoisting::doubled)) {
    require(matrix.slots == config_.slots,
            "LinearTransform: the matrix is over {} slots and the config says {}; they must agree", matrix.slots,
            config_.slots);
    require(!matrix.diagonals.empty(), "LinearTransform: the matrix has no diagonal");
    plan_ = plan_bsgs(matrix, config_.bsgs);
    auto values = std::make_shared<const DiagonalMatrix>(std::move(matrix));
    matrix_ = values;
    encode_ = values_encoder(ev, values);
    encode_extended_ = values_extended_encoder(ev, values);
    if (config_.cache_plaintexts) cache_all(ev);
  }

  // From a function that encodes diag'_(g,b) for these offsets (any integers mod slots). Doubled hoisting lifts
  // its plaintexts to Q_l u P (ckks::Encoder::extend: exact, a CRT per coefficient; cache them).
  LinearTransform(const ckks::BasicEvaluator<B>& ev, std::span<const std::int64_t> offsets, DiagonalEncoder encode,
                  LinearTransformConfig config = {})
      : config_(resolve(ev, config, 0, Hoisting::doubled)), encode_(std::move(encode)) {
    require(static_cast<bool>(encode_), "LinearTransform: no encoding function given");
    require(!offsets.empty(), "LinearTransform: no diagonal offsets given");
    plan_ = plan_bsgs(offsets, config_.slots, config_.bsgs);
    if (config_.cache_plaintexts) cache_all(ev);
  }

  // From plaintexts of the diagonals by offset, used as given: every offset is a hoisted baby step (no giant, so
  // no pre-rotation). Each plaintext must have the config's slots; level and scale are the plaintexts' (all
  // equal). They are placed where the evaluator computes. Single hoisting unless config.hoisting is doubled
  // (then each is lifted to Q_l u P once, exactly).
  LinearTransform(const ckks::BasicEvaluator<B>& ev, std::map<std::int64_t, ckks::Plaintext> diagonals,
                  LinearTransformConfig config = {}) {
    require(!diagonals.empty(), "LinearTransform: no diagonal plaintext given");
    const ckks::Plaintext& first = diagonals.begin()->second;
    config.level = first.level();
    config.plaintext_scale = first.scale();
    config.bsgs.stride = static_cast<std::int64_t>(first.slots());
    config_ = resolve(ev, config, first.slots(), Hoisting::single);
    std::vector<std::int64_t> offsets;
    for (const auto& [d, pt] : diagonals) offsets.push_back(d);
    plan_ = plan_bsgs(offsets, config_.slots, config_.bsgs);
    for (auto& [d, pt] : diagonals) {
      check_plaintext(pt, d, 0);
      cached_.emplace(Key{0, wrap_offset(d, config_.slots)}, placed(ev, std::move(pt)));
    }
    config_.cache_plaintexts = true;
  }

  // From plaintexts already in BSGS form for `plan` ((giant, baby) -> R^-g diag_(g+b)). Hoisting as above.
  LinearTransform(const ckks::BasicEvaluator<B>& ev, BsgsPlan plan, std::map<Key, ckks::Plaintext> diagonals,
                  LinearTransformConfig config = {}) {
    require(!diagonals.empty(), "LinearTransform: no diagonal plaintext given");
    const ckks::Plaintext& first = diagonals.begin()->second;
    config.level = first.level();
    config.plaintext_scale = first.scale();
    config_ = resolve(ev, config, plan.slots, Hoisting::single);
    plan_ = std::move(plan);
    for (const auto& [giant, babies] : plan_.giants) {
      for (const auto baby : babies) {
        auto it = diagonals.find({giant, baby});
        require(it != diagonals.end(), "LinearTransform: no plaintext for giant {} baby {} of the plan", giant, baby);
        check_plaintext(it->second, giant + baby, giant);
        cached_.emplace(Key{giant, baby}, placed(ev, std::move(it->second)));
      }
    }
    config_.cache_plaintexts = true;
  }

  const LinearTransformConfig& config() const { return config_; }  // the config as resolved at construction
  Hoisting hoisting() const { return config_.hoisting; }           // single or doubled
  const BsgsPlan& plan() const { return plan_; }                   // the rotations, and which diagonals each giant sums
  int level() const { return config_.level; }                      // inputs above it drop to it
  // level() - 1 when the sum is rescaled, else level().
  int output_level() const { return config_.rescale ? config_.level - 1 : config_.level; }
  std::size_t slots() const { return config_.slots; }  // n, of the input and the result
  // The values, for a transform made from a DiagonalMatrix (null otherwise).
  const std::shared_ptr<const DiagonalMatrix>& matrix() const { return matrix_; }
  // The rotation steps apply needs Galois keys for (the same for both hoistings).
  std::vector<std::int64_t> rotation_steps() const { return plan_.rotation_steps(); }
  // Bytes of the cached plaintexts: over Q_l, and over Q_l u P too for doubled hoisting.
  // What the diagonals take cached (plaintext_bytes() of the same transform with cache_plaintexts), known before
  // any is encoded: one plaintext per diagonal over Q_l, and over Q_l u P for doubled hoisting.
  std::size_t cached_plaintext_bytes(const ckks::Context& context) const {
    std::size_t diagonals = 0;
    for (const auto& [giant, babies] : plan_.giants) diagonals += babies.size();
    std::size_t limbs = context.q_basis(config_.level)->size();
    if (config_.hoisting == Hoisting::doubled) limbs += context.qp_basis(config_.level)->size();
    return diagonals * limbs * context.ring_degree() * sizeof(std::uint32_t);
  }
  std::size_t plaintext_bytes() const {
    std::size_t bytes = 0;
    const auto size = [](const ring::RnsPoly& p) { return p.limb_count() * p.n() * sizeof(std::uint32_t); };
    for (const auto& [key, d] : cached_) bytes += size(d.q.poly()) + (d.extended.empty() ? 0 : size(d.extended));
    return bytes;
  }

  // A ct (at or above level(), config().slots slots, 2 parts) -> the transform of its slots, at output_level(),
  // scale ct.scale() * plaintext_scale / P_level (the input's scale with the default plaintext scale).
  ckks::Ciphertext apply(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& input) const {
    require(!plan_.giants.empty(), "LinearTransform: apply on an empty transform");
    require<LevelError>(input.level() >= config_.level, "LinearTransform: the input is at level {} and the transform "
                        "runs at level {}; make it for a lower level (LinearTransformConfig::level)",
                        input.level(), config_.level);
    require(input.slots() == config_.slots, "LinearTransform: the input has {} slots and the transform {}",
            input.slots(), config_.slots);
    require(input.size() == 2, "LinearTransform: the input has {} parts; relinearize it first", input.size());
    const ckks::Ciphertext ct = ev.level_down(input, config_.level);
    ckks::Ciphertext sum = config_.hoisting == Hoisting::doubled ? apply_doubled(ev, ct) : apply_single(ev, ct);
    if (config_.rescale) ev.rescale_inplace(sum);
    return sum;
  }

 private:
  // A cached diagonal: over Q_l, and over Q_l u P (same integers; empty for single hoisting).
  struct Diagonal {
    ckks::Plaintext q;
    ring::RnsPoly extended;
  };
  // Encodes diag'_(g,b) over Q_l u P (values only; functions go through encode_ and Encoder::extend).
  using ExtendedEncoder =
      std::function<ring::RnsPoly(std::int64_t giant, std::int64_t baby, const ckks::EncodeOptions& options)>;

  ckks::Ciphertext apply_single(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& ct) const {
    const std::vector<ckks::Ciphertext> rotated = ev.rotate_hoisted(ct, plan_.babies);
    std::map<std::int64_t, const ckks::Ciphertext*> by_baby;
    for (std::size_t i = 0; i < plan_.babies.size(); ++i) by_baby[plan_.babies[i]] = &rotated[i];

    ckks::Ciphertext sum;
    const B& backend = ev.backend();
    const auto& basis = ev.context()->q_basis(config_.level);
    for (const auto& [giant, babies] : plan_.giants) {
      std::vector<Diagonal> scratch(babies.size());
      std::array<std::vector<const ring::RnsPoly*>, 2> left;
      std::vector<const ring::RnsPoly*> right;
      for (std::size_t i = 0; i < babies.size(); ++i) {
        const ckks::Ciphertext& rotated_ct = *by_baby.at(babies[i]);
        left[0].push_back(&rotated_ct.part(0));
        left[1].push_back(&rotated_ct.part(1));
        right.push_back(&diagonal(ev, giant, babies[i], scratch[i]).q.poly());
      }
      std::vector<ring::RnsPoly> parts;
      for (std::size_t p = 0; p < 2; ++p) {
        parts.push_back(backend.allocate(basis, ring::PolyOptions{.form = ring::PolyForm::ntt,
                                                                  .init = BufferInit::uninitialized}));
        backend.multiply_accumulate_many(parts.back(), left[p], right, false);
      }
      // Every diagonal has the config's level, slots and scale (check_plaintext).
      ckks::Ciphertext inner(ev.context(), std::move(parts), config_.level, ct.scale() * config_.plaintext_scale,
                             ct.slots());
      if (giant != 0) inner = ev.rotate(inner, giant);
      if (sum.empty()) {
        sum = std::move(inner);
      } else {
        ev.add_inplace(sum, inner);
      }
    }
    return sum;
  }

  // Double hoisting (circuits/raised_ciphertext.hpp): babies raised once, one ModDown per giant's inner sum, the
  // giants' rotations raised and summed, one ModDown at the end.
  ckks::Ciphertext apply_doubled(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& ct) const {
    // Every giant's key first, so that a missing one fails before any work (the babies' are looked up next).
    for (const auto& [giant, babies] : plan_.giants)
      if (giant % static_cast<std::int64_t>(config_.slots) != 0) (void)ev.rotation_key(giant, config_.slots);
    const std::vector<RaisedCiphertext> rotated = rotate_raised(ev, ct, plan_.babies);
    std::map<std::int64_t, const RaisedCiphertext*> by_baby;
    for (std::size_t i = 0; i < plan_.babies.size(); ++i) by_baby[plan_.babies[i]] = &rotated[i];

    const double scale = ct.scale() * config_.plaintext_scale;
    RaisedCiphertext sum;
    for (const auto& [giant, babies] : plan_.giants) {
      std::vector<Diagonal> scratch(babies.size());
      std::vector<const RaisedCiphertext*> terms;
      std::vector<const ring::RnsPoly*> q_weights, extended_weights;
      for (std::size_t i = 0; i < babies.size(); ++i) {
        const Diagonal& d = diagonal(ev, giant, babies[i], scratch[i]);
        terms.push_back(by_baby.at(babies[i]));
        q_weights.push_back(&d.q.poly());
        extended_weights.push_back(&d.extended);
      }
      ckks::Ciphertext inner = lower(ev, weighted_sum<B>(ev, terms, q_weights, extended_weights, scale));
      if (giant % static_cast<std::int64_t>(config_.slots) == 0) {
        add_raised(ev, sum, raise(std::move(inner)));
      } else {
        const std::int64_t step[] = {giant};
        add_raised(ev, sum, std::move(rotate_raised(ev, inner, step).front()));
      }
    }
    return lower(ev, std::move(sum));
  }

  static LinearTransformConfig resolve(const ckks::BasicEvaluator<B>& ev, LinearTransformConfig config,
                                       std::size_t matrix_slots, Hoisting automatic) {
    const auto& context = *ev.context();
    if (config.level < 0) config.level = context.max_level();
    require<LevelError>(config.level <= context.max_level(),
                        "LinearTransform: level {} is above the parameters' top level {}", config.level,
                        context.max_level());
    require<LevelError>(!config.rescale || config.level >= 1,
                        "LinearTransform: level 0 leaves no level for the rescale; apply it higher or set rescale = "
                        "false");
    if (config.slots == 0) config.slots = matrix_slots != 0 ? matrix_slots : context.parameters().max_slots();
    require(std::has_single_bit(config.slots) && config.slots <= context.parameters().max_slots(),
            "LinearTransform: {} slots; a power of two up to N/2 = {}", config.slots,
            context.parameters().max_slots());
    if (config.plaintext_scale == 0) config.plaintext_scale = config.level >= 1 ? ev.level_prime_product(config.level)
                                                                                : context.parameters().default_scale_at(0);
    require(std::isfinite(config.plaintext_scale) && config.plaintext_scale > 0,
            "LinearTransform: plaintext_scale {} must be finite and positive", config.plaintext_scale);
    if (config.hoisting == Hoisting::automatic) config.hoisting = automatic;
    return config;
  }

  ckks::EncodeOptions encode_options() const {
    return ckks::EncodeOptions{.level = config_.level, .scale = config_.plaintext_scale, .slots = config_.slots};
  }

  void check_plaintext(const ckks::Plaintext& pt, std::int64_t offset, std::int64_t giant) const {
    require(pt.slots() == config_.slots && pt.level() == config_.level && pt.scale() == config_.plaintext_scale,
            "LinearTransform: the plaintext of offset {} (giant {}) has {} slots, level {}, scale {}; the others "
            "have {}, {}, {}",
            offset, giant, pt.slots(), pt.level(), pt.scale(), config_.slots, config_.level, config_.plaintext_scale);
  }

  static DiagonalEncoder values_encoder(const ckks::BasicEvaluator<B>& ev,
                                        std::shared_ptr<const DiagonalMatrix> values) {
    ckks::Encoder encoder(ev.context());
    return [values, encoder](std::int64_t giant, std::int64_t baby, const ckks::EncodeOptions& options) {
      const auto full = tile(bsgs_diagonal(*values, giant, baby), options.slots);
      return encoder.encode(std::span<const Complex>(full), options);
    };
  }

  static ExtendedEncoder values_extended_encoder(const ckks::BasicEvaluator<B>& ev,
                                                 std::shared_ptr<const DiagonalMatrix> values) {
    ckks::Encoder encoder(ev.context());
    return [values, encoder](std::int64_t giant, std::int64_t baby, const ckks::EncodeOptions& options) {
      const auto full = tile(bsgs_diagonal(*values, giant, baby), options.slots);
      return encoder.encode_extended(std::span<const Complex>(full), options);
    };
  }

  // A user's plaintext placed where the evaluator computes, lifted to Q_l u P for doubled hoisting.
  Diagonal placed(const ckks::BasicEvaluator<B>& ev, ckks::Plaintext&& pt) const {
    Diagonal d;
    if (config_.hoisting == Hoisting::doubled) {
      const ckks::Encoder encoder(ev.context());
      d.extended = ev.backend().place(pt.poly().host_accessible() ? encoder.extend(pt)
                                                                  : encoder.extend(ev.download(pt)));
    }
    d.q = ev.upload(std::move(pt));
    return d;
  }

  // The diagonal of (giant, baby) from the values or the function, checked (a function may return another shape:
  // InvalidArgument rather than a silently wrong sum) and placed where the evaluator computes.
  Diagonal encoded(const ckks::BasicEvaluator<B>& ev, std::int64_t giant, std::int64_t baby) const {
    if constexpr (backend::SlotTransform<B> && backend::CoefficientEncoding<B>) {
      // A device that transforms and encodes gets the diagonal's slot values (a few hundred KiB at N = 2^16)
      // and makes the plaintexts itself: the host encoder's words without its FFT, its NTT of every limb and the
      // copy of them (a bootstrapper's set-up was seconds of those).
      if (matrix_) return encoded_on_device(ev, giant, baby);
    }
    if (config_.hoisting == Hoisting::doubled && encode_extended_) {
      // One encoding: the Q_l plaintext is the Q_l limbs of the extended one (encode's words).
      ring::RnsPoly extended = encode_extended_(giant, baby, encode_options());
      const ring::RnsBasisPtr& q_basis = ev.context()->q_basis(config_.level);
      ring::RnsPoly q(q_basis, ring::PolyOptions{.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized});
      for (std::size_t i = 0; i < q_basis->size(); ++i) std::ranges::copy(extended.limb(i), q.limb(i).begin());
      Diagonal d;
      d.q = ev.upload(ckks::Plaintext(ev.context(), std::move(q), config_.level, config_.plaintext_scale,
                                      config_.slots));
      d.extended = ev.backend().place(std::move(extended));
      return d;
    }
    ckks::Plaintext pt = encode_(giant, baby, encode_options());
    check_plaintext(pt, giant + baby, giant);
    return placed(ev, std::move(pt));
  }

  // encoded's words from the values, encoded where the evaluator computes (ckks::BasicEvaluator::unscaled, then
  // encode or encode_extended of the same integers; the Q_l plaintext is the extended one's first limbs).
  Diagonal encoded_on_device(const ckks::BasicEvaluator<B>& ev, std::int64_t giant, std::int64_t baby) const {
    const auto full = tile(bsgs_diagonal(*matrix_, giant, baby), config_.slots);
    const ckks::UnscaledPlaintext unscaled = ev.unscaled(std::span<const Complex>(full), config_.slots);
    Diagonal d;
    if (config_.hoisting == Hoisting::doubled) {
      d.extended = ev.encode_extended(unscaled, encode_options());
      d.q = ckks::Plaintext(ev.context(), ev.backend().prefix(d.extended, ev.context()->q_basis(config_.level)),
                            config_.level, config_.plaintext_scale, config_.slots);
    } else {
      d.q = ev.encode(unscaled, encode_options());
    }
    return d;
  }

  void cache_all(const ckks::BasicEvaluator<B>& ev) {
    for (const auto& [giant, babies] : plan_.giants)
      for (const auto baby : babies) cached_.emplace(Key{giant, baby}, encoded(ev, giant, baby));
  }

  // The cached diagonal of (giant, baby), or one encoded into scratch.
  const Diagonal& diagonal(const ckks::BasicEvaluator<B>& ev, std::int64_t giant, std::int64_t baby,
                           Diagonal& scratch) const {
    if (auto it = cached_.find({giant, baby}); it != cached_.end()) return it->second;
    require(static_cast<bool>(encode_), "LinearTransform: no plaintext for giant {} baby {}", giant, baby);
    scratch = encoded(ev, giant, baby);
    return scratch;
  }

  LinearTransformConfig config_;
  BsgsPlan plan_;
  std::shared_ptr<const DiagonalMatrix> matrix_;
  DiagonalEncoder encode_;
  ExtendedEncoder encode_extended_;  // values only
  std::map<Key, Diagonal> cached_;
};

}  // namespace cerium::circuits
