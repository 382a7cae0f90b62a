#pragma once
// The limb-parallel sharded backend: a backend::PolyBackend whose polynomials are split by limbs over the ranks
// of a device mesh (dist::LimbLayout), each rank computing its own limbs on its device (the host, or one GPU:
// ShardedOptions::device) and exchanging only what an operation couples across limbs. Any scheme code written against the backend concept runs on it unchanged: the
// CKKS evaluator, the circuits and the bootstrapper (ckks/sharded_evaluator.hpp instantiates them), with the
// words of the single-device CPU backend, limb for limb, for any number of ranks.
//
// What crosses ranks (everything else is limb-local):
//  - rescale: the dropped limbs (1 or 2) go to every rank;
//  - ModUp (key switching, hoisting): the input's limbs in coefficient form go to every rank (each digit's
//    conversion reads all of the digit's limbs); each rank then extends every digit to its own limbs of Q_l u P;
//  - the inner product with the key: limb-local (keys are sharded like ciphertexts);
//  - ModDown: P's limbs go to every rank;
//  - ModRaise (bootstrapping): the one or two limbs of level 0 go to every rank;
//  - download: every limb to every rank (a collective: every rank calls it).
// A host polynomial given to place() (an encoding, a fresh encryption, a key) must be the same on every rank:
// each rank keeps its limbs of it. Encrypt with the same seed on every rank, or on one rank and broadcast the
// serialized ciphertext (dist::broadcast_bytes).
//
// Every rank runs the same program, one thread per rank (collectives are matched by order); the sharded backend
// of a rank must not be used from several threads at once. The local limbs are computed by the CPU backend's
// routines on views that borrow the shards' words, or on a GPU rank by the CUDA backend's, one run of consecutive
// limbs at a time; both give the CPU backend's words. On a GPU rank the gathered limbs travel in device memory
// through NCCL (dist/nccl.hpp), or through the host with the in-process and MPI transports (several ranks may then
// share one GPU: how the tests pose as a mesh on one device).

#include <array>
#include <cstdint>
#include <memory>
#include <span>

#include "cerium/backend/backend.hpp"
#include "cerium/core/device.hpp"
#include "cerium/dist/communicator.hpp"
#include "cerium/dist/limb_layout.hpp"

namespace cerium::dist {

// How a ShardedBackend checks and lays out what it is given.
struct ShardedOptions {
  // Check, when a host polynomial or key is placed, that every rank placed the same one (a fingerprint of a
  // sample of its words, one small collective per placement): two ranks encrypting with their own randomness
  // would otherwise compute a silently wrong result. Off: no check and no collective.
  bool verify_placed = true;
  // How limbs are spread (dist/limb_layout.hpp); every rank must use the same.
  LayoutPolicy layout = LayoutPolicy::contiguous;
  // Where this rank holds and computes its limbs: Device::cpu(), or Device::cuda(k) (UnsupportedError where
  // Cerium was built without the CUDA backend). An NCCL communicator needs a CUDA device here.
  Device device = Device::cpu();
};

// backend::PolyBackend over the limbs this rank holds (see the file comment); copies share one state.
class ShardedBackend {
 public:
  // The eDSL's planner folds rescale(sum) into the sum as on the CPU backend.
  static constexpr bool fold_rescale_into_sums = true;

  // comm must outlive the backend (and every copy of it: copies share one state). A collective: every rank checks
  // that all have the same modulus ladder (CommunicationError on every rank otherwise).
  ShardedBackend(Communicator& comm, rlwe::ContextPtr context, ShardedOptions options = {});

  Communicator& communicator() const;       // the transport; it outlives the backend
  const LimbLayout& layout() const;         // which rank holds which limb
  const rlwe::ContextPtr& context() const;  // the context whose primes layout() spreads
  Device device() const;                    // where this rank's limbs live (ShardedOptions::device)
  void synchronize() const;                 // waits for the work this rank queued on its device

  // Storage (as in backend::PolyBackend): a polynomial in this rank's view of the layout, and a deep copy.
  ring::RnsPoly allocate(const ring::RnsBasisPtr& basis, ring::PolyOptions options) const;
  ring::RnsPoly clone(const ring::RnsPoly& y) const;
  // Placement: place() and resident() keep this rank's limbs of a host polynomial or key (the same on every rank,
  // checked when verify_placed); download() gathers every limb to every rank, a collective.
  ring::RnsPoly place(ring::RnsPoly&& x) const;
  ring::RnsPoly download(const ring::RnsPoly& y) const;
  std::shared_ptr<const rlwe::SwitchingKey> resident(std::shared_ptr<const rlwe::SwitchingKey> key) const;

  // Elementwise arithmetic (as in backend::PolyBackend): each rank on its own limbs, no collective.
  void add(ring::RnsPoly& x, const ring::RnsPoly& y) const;
  void sub(ring::RnsPoly& x, const ring::RnsPoly& y) const;
  void negate(ring::RnsPoly& x) const;
  void multiply(ring::RnsPoly& x, const ring::RnsPoly& y) const;
  void multiply_accumulate(ring::RnsPoly& x, const ring::RnsPoly& y, const ring::RnsPoly& z) const;
  void multiply_accumulate_many(ring::RnsPoly& out, std::span<const ring::RnsPoly* const> a,
                                std::span<const ring::RnsPoly* const> b, bool accumulate) const;
  void linear_combination(ring::RnsPoly& out, std::span<const ring::RnsPoly* const> a,
                          std::span<const ring::RnsPoly* const> b, std::span<const ring::RnsPoly* const> c,
                          std::span<const std::uint32_t> scalars, bool accumulate) const;
  // The rescaled sum: linear_combination, then rescale (the dropped limbs go to every rank).
  void linear_combination_rescaled(const ring::Rescaler& rescaler, ring::RnsPoly& out,
                                   std::span<const ring::RnsPoly* const> a, std::span<const ring::RnsPoly* const> b,
                                   std::span<const ring::RnsPoly* const> c,
                                   std::span<const std::uint32_t> scalars) const;
  // The tensor products, out-of-place forms, prefix and scalar operations (as in backend::PolyBackend): limb-local.
  std::array<ring::RnsPoly, 2> tensor(ring::RnsPoly& x0, const ring::RnsPoly& x1, const ring::RnsPoly& y0,
                                      const ring::RnsPoly& y1) const;
  ring::RnsPoly sum(const ring::RnsPoly& y, const ring::RnsPoly& z) const;
  ring::RnsPoly difference(const ring::RnsPoly& y, const ring::RnsPoly& z) const;
  ring::RnsPoly product(const ring::RnsPoly& y, const ring::RnsPoly& z) const;
  ring::RnsPoly negation(const ring::RnsPoly& y) const;
  ring::RnsPoly scalar_product(const ring::RnsPoly& y, std::span<const std::uint32_t> per_limb) const;
  std::array<ring::RnsPoly, 3> tensor_product(const ring::RnsPoly& x0, const ring::RnsPoly& x1,
                                              const ring::RnsPoly& y0, const ring::RnsPoly& y1) const;
  ring::RnsPoly prefix(const ring::RnsPoly& y, const ring::RnsBasisPtr& basis) const;
  void multiply_scalar(ring::RnsPoly& x, std::span<const std::uint32_t> per_limb) const;
  void add_scalar(ring::RnsPoly& x, std::span<const std::uint32_t> per_limb) const;
  void multiply_integer(ring::RnsPoly& x, std::int64_t integer) const;

  // Domain changes, limb by limb.
  void to_ntt(ring::RnsPoly& x) const;
  void to_coeff(ring::RnsPoly& x) const;

  // Levels: rescale sends the dropped limbs (1 or 2) to every rank; drop_to is local.
  void rescale(const ring::Rescaler& rescaler, ring::RnsPoly& x) const;
  void rescale(const ring::Rescaler& rescaler, std::span<ring::RnsPoly> parts) const;
  void drop_to(ring::RnsPoly& x, const ring::RnsBasisPtr& basis) const;
  // ModRaise: level 0's limbs go to every rank, and each raises them to its own limbs of basis.
  ring::RnsPoly mod_raise(const ring::RnsPoly& y, const ring::RnsBasisPtr& basis) const;
  // X -> X^k: a permutation within each limb, limb-local.
  ring::RnsPoly automorphism(const ring::Automorphism& automorphism, const ring::RnsPoly& y) const;

  // Hybrid key switching (as in backend::PolyBackend): ModUp sends the input's limbs to every rank, the inner product
  // is limb-local, ModDown sends P's limbs to every rank (dist/traffic_model.hpp predicts the bytes).
  rlwe::DecomposedPoly mod_up(const rlwe::Context& context, const ring::RnsPoly& y, int level) const;
  std::array<ring::RnsPoly, 2> key_switch_apply(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                                const rlwe::SwitchingKey& key,
                                                const ring::Automorphism* automorphism) const;
  std::array<ring::RnsPoly, 2> key_switch_apply(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                                const rlwe::SwitchingKey& key, const ring::Automorphism* automorphism,
                                                std::array<const ring::RnsPoly*, 2> addends) const;
  std::array<ring::RnsPoly, 2> key_switch_apply(const rlwe::Context& context, const rlwe::DecomposedPoly& decomposed,
                                                const rlwe::SwitchingKey& key, const ring::Automorphism* automorphism,
                                                std::array<const ring::RnsPoly*, 2> addends,
                                                const ring::Rescaler& rescaler) const;
  std::array<ring::RnsPoly, 2> key_switch_inner_product(const rlwe::Context& context,
                                                        const rlwe::DecomposedPoly& decomposed,
                                                        const rlwe::SwitchingKey& key,
                                                        const ring::Automorphism* automorphism) const;
  ring::RnsPoly mod_down(const ring::ModDown& mod_down, const ring::RnsPoly& y) const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

static_assert(backend::PolyBackend<ShardedBackend>, "ShardedBackend must provide every operation of PolyBackend");

}  // namespace cerium::dist
