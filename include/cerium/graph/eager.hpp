#pragma once
// The eager twin of graph::Tracer: the same operations on ciphertexts, computed at once with the executor's
// lowering (graph::ChainOps), so one model written as a template over its "ops" object runs either way:
//
//   template <class Ops> typename Ops::Value model(Ops& ops, typename Ops::Value x) {
//     return ops.add(ops.multiply(x, x), ops.rotate(x, 1));
//   }
//   model(tracer, tracer.input("x"));          // traces a graph to plan and run later
//   model(eager, ciphertext);                  // computes now: the same words as the planned run
//
// Eager runs place no bootstraps (only the ones the code pins with bootstrap()); a program that needs more is
// traced and planned. Inputs must be on the program's scale chain (Eager::encoding(level, slots) says how to
// encode them; the same as a plan's input_encoding).

#include <complex>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/graph/chain_ops.hpp"
#include "cerium/graph/planner.hpp"

namespace cerium::graph {

// The ops object that computes at once on ciphertexts on backend B (see the file comment).
template <backend::PolyBackend B>
class Eager {
 public:
  using Value = ckks::Ciphertext;  // what the operations take and return

  // Values live on the program's scale chain (program_chain): through the bootstrapper's output, or through level 0
  // without one. bootstrap() needs the bootstrapper.
  Eager(const ckks::BasicEvaluator<B>& evaluator, const boot::BasicBootstrapper<B>* bootstrapper = nullptr)
      : ops_(evaluator,
             program_chain(*evaluator.context(),
                           bootstrapper ? std::optional<BootstrapSpec>(bootstrap_spec(*bootstrapper)) : std::nullopt),
             bootstrapper) {}

  // How to encode an input at `level` over `slots` slots: the chain's scale there (as a plan's input_encoding).
  ckks::EncodeOptions encoding(int level, std::size_t slots) const {
    return ckks::EncodeOptions{.level = level, .scale = ops_.chain().at(level), .slots = slots};
  }
  // A ciphertext made ready for the operations below (placed where the evaluator computes, scale snapped);
  // LevelError when its scale is not the chain's at its level.
  Value input(const ckks::Ciphertext& c) const { return ops_.on_chain(ops_.evaluator().upload(c)); }

  // The operations of graph::Tracer, computed now: sums and differences of ciphertexts, and the negation.
  Value add(const Value& a, const Value& b) const { return ops_.add(a, b); }
  Value sub(const Value& a, const Value& b) const { return ops_.sub(a, b); }
  Value negate(const Value& a) const { return ops_.negate(a); }
  // Products: two ciphertexts (relinearized and rescaled), a ciphertext and a plaintext vector, a real constant.
  Value multiply(const Value& a, const Value& b) const { return ops_.multiply(a, b); }
  Value multiply(const Value& a, const PlainVector& p) const { return ops_.multiply(a, p); }
  Value multiply(const Value& a, double constant) const { return ops_.multiply(a, constant); }
  // sum_i a[i] b[i], relinearized and rescaled once (graph::Tracer::product_sum).
  Value product_sum(std::span<const Value> a, std::span<const Value> b) const {
    require<MismatchError>(!a.empty() && a.size() == b.size(), "product_sum: {} and {} factors", a.size(), b.size());
    std::vector<const Value*> pa, pb;
    for (std::size_t i = 0; i < a.size(); ++i) {
      pa.push_back(&a[i]);
      pb.push_back(&b[i]);
    }
    return ops_.product_sum(pa, pb);
  }
  // Sums with a plaintext vector or a constant (a subtracted constant is added negated).
  Value add(const Value& a, const PlainVector& p) const { return ops_.add(a, p); }
  Value add(const Value& a, std::complex<double> constant) const { return ops_.add(a, constant); }
  Value add(const Value& a, double constant) const { return ops_.add(a, std::complex<double>(constant, 0)); }
  Value sub(const Value& a, double constant) const { return ops_.add(a, std::complex<double>(-constant, 0)); }
  // Slots rotated left by `steps`, taken mod the slots (0: a copy).
  Value rotate(const Value& a, std::int64_t steps) const {
    const auto slots = static_cast<std::int64_t>(a.slots());
    const std::int64_t reduced = ((steps % slots) + slots) % slots;
    return reduced == 0 ? a.clone() : ops_.rotate(a, reduced);
  }
  // Complex conjugation of the slots.
  Value conjugate(const Value& a) const { return ops_.conjugate(a); }
  // A bootstrap by the bootstrapper given at construction; LevelError without one.
  Value bootstrap(const Value& a) const { return ops_.bootstrap(a); }
  // Keeps a copy of a as a result named `name` (outputs(), output_names()).
  void output(const Value& a, std::string name) {
    outputs_.push_back(a.clone());
    names_.push_back(std::move(name));
  }
  // Labels are for traced graphs: nothing to do here.
  void label(const Value&, const std::string&) const {}

  // The results, in the order output() was called, and their names.
  std::vector<ckks::Ciphertext>& outputs() { return outputs_; }
  const std::vector<std::string>& output_names() const { return names_; }

 private:
  ChainOps<B> ops_;
  std::vector<ckks::Ciphertext> outputs_;
  std::vector<std::string> names_;
};

}  // namespace cerium::graph
