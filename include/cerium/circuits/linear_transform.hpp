#pragma once
// A homomorphic slot-linear map, evaluated baby-step giant-step (circuits/bsgs.hpp): the baby rotations of the
// input share one ModUp (hoisting), each giant's inner sum sum_b diag'_(g,b) * R^b ct is one fused pass per part
// (the backend's multiply_accumulate_many: every rotation and diagonal read once), each giant costs one rotation,
// and the sum is rescaled once.
//
//   circuits::LinearTransform<B> lt(evaluator, circuits::DiagonalMatrix::from_dense(rows), {.level = 5});
//   keys: lt.rotation_steps();  result: lt.apply(evaluator, ct)   (level 5 -> 4, the input's scale kept)
//
// The diagonals come from values (a DiagonalMatrix, compressed diagonals included), from plaintexts (by offset, as
// hoisted babies only; or already in BSGS form by (giant, baby)), or from a function that encodes on demand. With
// cache_plaintexts (the default for values and functions) each plaintext is encoded once, at construction, where
// the evaluator computes (device memory for the CUDA backend); otherwise each apply encodes them again and holds
// only the values. Sizes (slots, offsets, levels) are run-time values.
//
// The words equal the eager sequence: rotate_hoisted of the babies, per giant the products by the diagonals
// summed in offset order, rotate by the giant, add the giants in increasing order, rescale.

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
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/plaintext.hpp"
#include "cerium/core/check.hpp"

namespace cerium::circuits {

struct LinearTransformConfig {
  int level = -1;               // where the transform is applied (-1: the top level); inputs above drop to it
  double plaintext_scale = 0;   // of the diagonals; 0: P_level, so that the rescale gives back the input's scale
  std::size_t slots = 0;        // of the inputs; 0: the matrix's (values) or N/2
  bool rescale = true;          // rescale the sum (level - 1); false leaves it at level with scale * plaintext_scale
  bool cache_plaintexts = true;
  BsgsOptions bsgs{};
};

// Encodes diag'_(g,b) = R^-g diag_(g+b) with the given options (level, scale, slots). Called once per (g, b) when
// caching, at every apply otherwise.
using DiagonalEncoder =
    std::function<ckks::Plaintext(std::int64_t giant, std::int64_t baby, const ckks::EncodeOptions& options)>;

template <backend::PolyBackend B = backend::CpuBackend>
class LinearTransform {
 public:
  using Key = std::pair<std::int64_t, std::int64_t>;  // (giant, baby)

  LinearTransform() = default;

  // From values. Compressed diagonals stay compressed until encoded.
  LinearTransform(const ckks::BasicEvaluator<B>& ev, DiagonalMatrix matrix, LinearTransformConfig config = {})
      : config_(resolve(ev, config, matrix.slots)) {
    require(matrix.slots == config_.slots,
            "LinearTransform: the matrix is over {} slots and the config says {}; they must agree", matrix.slots,
            config_.slots);
    require(!matrix.diagonals.empty(), "LinearTransform: the matrix has no diagonal");
    plan_ = plan_bsgs(matrix, config_.bsgs);
    auto values = std::make_shared<const DiagonalMatrix>(std::move(matrix));
    matrix_ = values;
    encode_ = values_encoder(ev, values);
    if (config_.cache_plaintexts) cache_all(ev);
  }

  // From a function that encodes diag'_(g,b) for these offsets (any integers mod slots).
  LinearTransform(const ckks::BasicEvaluator<B>& ev, std::span<const std::int64_t> offsets, DiagonalEncoder encode,
                  LinearTransformConfig config = {})
      : config_(resolve(ev, config, 0)), encode_(std::move(encode)) {
    require(static_cast<bool>(encode_), "LinearTransform: no encoding function given");
    require(!offsets.empty(), "LinearTransform: no diagonal offsets given");
    plan_ = plan_bsgs(offsets, config_.slots, config_.bsgs);
    if (config_.cache_plaintexts) cache_all(ev);
  }

  // From plaintexts of the diagonals by offset, used as given: every offset is a hoisted baby step (no giant, so
  // no pre-rotation). Each plaintext must have the config's slots; level and scale are the plaintexts' (all
  // equal). They are placed where the evaluator computes.
  LinearTransform(const ckks::BasicEvaluator<B>& ev, std::map<std::int64_t, ckks::Plaintext> diagonals,
                  LinearTransformConfig config = {}) {
    require(!diagonals.empty(), "LinearTransform: no diagonal plaintext given");
    const ckks::Plaintext& first = diagonals.begin()->second;
    config.level = first.level();
    config.plaintext_scale = first.scale();
    config.bsgs.stride = static_cast<std::int64_t>(first.slots());
    config_ = resolve(ev, config, first.slots());
    std::vector<std::int64_t> offsets;
    for (const auto& [d, pt] : diagonals) offsets.push_back(d);
    plan_ = plan_bsgs(offsets, config_.slots, config_.bsgs);
    for (auto& [d, pt] : diagonals) {
      check_plaintext(pt, d, 0);
      cached_.emplace(Key{0, wrap_offset(d, config_.slots)}, ev.upload(std::move(pt)));
    }
    config_.cache_plaintexts = true;
  }

  // From plaintexts already in BSGS form for `plan` ((giant, baby) -> R^-g diag_(g+b)).
  LinearTransform(const ckks::BasicEvaluator<B>& ev, BsgsPlan plan, std::map<Key, ckks::Plaintext> diagonals,
                  LinearTransformConfig config = {}) {
    require(!diagonals.empty(), "LinearTransform: no diagonal plaintext given");
    const ckks::Plaintext& first = diagonals.begin()->second;
    config.level = first.level();
    config.plaintext_scale = first.scale();
    config_ = resolve(ev, config, plan.slots);
    plan_ = std::move(plan);
    for (const auto& [giant, babies] : plan_.giants) {
      for (const auto baby : babies) {
        auto it = diagonals.find({giant, baby});
        require(it != diagonals.end(), "LinearTransform: no plaintext for giant {} baby {} of the plan", giant, baby);
        check_plaintext(it->second, giant + baby, giant);
        cached_.emplace(Key{giant, baby}, ev.upload(std::move(it->second)));
      }
    }
    config_.cache_plaintexts = true;
  }

  const LinearTransformConfig& config() const { return config_; }
  const BsgsPlan& plan() const { return plan_; }
  int level() const { return config_.level; }
  int output_level() const { return config_.rescale ? config_.level - 1 : config_.level; }
  std::size_t slots() const { return config_.slots; }
  // The values, for a transform made from a DiagonalMatrix (null otherwise).
  const std::shared_ptr<const DiagonalMatrix>& matrix() const { return matrix_; }
  // The rotation steps apply needs Galois keys for.
  std::vector<std::int64_t> rotation_steps() const { return plan_.rotation_steps(); }
  // Bytes of the cached plaintexts.
  std::size_t plaintext_bytes() const {
    std::size_t bytes = 0;
    for (const auto& [key, pt] : cached_) bytes += pt.poly().limb_count() * pt.poly().n() * sizeof(std::uint32_t);
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
    const std::vector<ckks::Ciphertext> rotated = ev.rotate_hoisted(ct, plan_.babies);
    std::map<std::int64_t, const ckks::Ciphertext*> by_baby;
    for (std::size_t i = 0; i < plan_.babies.size(); ++i) by_baby[plan_.babies[i]] = &rotated[i];

    ckks::Ciphertext sum;
    const B& backend = ev.backend();
    const auto& basis = ev.context()->q_basis(config_.level);
    for (const auto& [giant, babies] : plan_.giants) {
      std::vector<ckks::Plaintext> scratch(babies.size());
      std::array<std::vector<const ring::RnsPoly*>, 2> left;
      std::vector<const ring::RnsPoly*> right;
      for (std::size_t i = 0; i < babies.size(); ++i) {
        const ckks::Ciphertext& rotated_ct = *by_baby.at(babies[i]);
        left[0].push_back(&rotated_ct.part(0));
        left[1].push_back(&rotated_ct.part(1));
        right.push_back(&plaintext(ev, giant, babies[i], scratch[i]).poly());
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
    if (config_.rescale) ev.rescale_inplace(sum);
    return sum;
  }

 private:
  static LinearTransformConfig resolve(const ckks::BasicEvaluator<B>& ev, LinearTransformConfig config,
                                       std::size_t matrix_slots) {
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
                                                                                : context.parameters().default_scale();
    require(std::isfinite(config.plaintext_scale) && config.plaintext_scale > 0,
            "LinearTransform: plaintext_scale {} must be finite and positive", config.plaintext_scale);
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

  // encode_'s plaintext of (giant, baby), checked (a function may return another shape: InvalidArgument rather
  // than a silently wrong sum) and placed where the evaluator computes.
  ckks::Plaintext encoded(const ckks::BasicEvaluator<B>& ev, std::int64_t giant, std::int64_t baby) const {
    ckks::Plaintext pt = encode_(giant, baby, encode_options());
    check_plaintext(pt, giant + baby, giant);
    return ev.upload(std::move(pt));
  }

  void cache_all(const ckks::BasicEvaluator<B>& ev) {
    for (const auto& [giant, babies] : plan_.giants)
      for (const auto baby : babies) cached_.emplace(Key{giant, baby}, encoded(ev, giant, baby));
  }

  // The cached plaintext of (giant, baby), or one encoded into scratch.
  const ckks::Plaintext& plaintext(const ckks::BasicEvaluator<B>& ev, std::int64_t giant, std::int64_t baby,
                                   ckks::Plaintext& scratch) const {
    if (auto it = cached_.find({giant, baby}); it != cached_.end()) return it->second;
    require(static_cast<bool>(encode_), "LinearTransform: no plaintext for giant {} baby {}", giant, baby);
    scratch = encoded(ev, giant, baby);
    return scratch;
  }

  LinearTransformConfig config_;
  BsgsPlan plan_;
  std::shared_ptr<const DiagonalMatrix> matrix_;
  DiagonalEncoder encode_;
  std::map<Key, ckks::Plaintext> cached_;
};

}  // namespace cerium::circuits
