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
#include <string>
#include <utility>
#include <vector>

#include "cerium/graph/chain_ops.hpp"
#include "cerium/graph/planner.hpp"

namespace cerium::graph {

template <backend::PolyBackend B>
class Eager {
 public:
  using Value = ckks::Ciphertext;

  Eager(const ckks::BasicEvaluator<B>& evaluator, const boot::BasicBootstrapper<B>* bootstrapper = nullptr)
      : ops_(evaluator,
             program_chain(*evaluator.context(),
                           bootstrapper ? std::optional<BootstrapSpec>(bootstrap_spec(*bootstrapper)) : std::nullopt),
             bootstrapper) {}

  ckks::EncodeOptions encoding(int level, std::size_t slots) const {
    return ckks::EncodeOptions{.level = level, .scale = ops_.chain().at(level), .slots = slots};
  }
  // A ciphertext made ready for the operations below (placed where the evaluator computes, scale snapped);
  // LevelError when its scale is not the chain's at its level.
  Value input(const ckks::Ciphertext& c) const { return ops_.on_chain(ops_.evaluator().upload(c)); }

  Value add(const Value& a, const Value& b) const { return ops_.add(a, b); }
  Value sub(const Value& a, const Value& b) const { return ops_.sub(a, b); }
  Value negate(const Value& a) const { return ops_.negate(a); }
  Value multiply(const Value& a, const Value& b) const { return ops_.multiply(a, b); }
  Value multiply(const Value& a, const PlainVector& p) const { return ops_.multiply(a, p); }
  Value multiply(const Value& a, double constant) const { return ops_.multiply(a, constant); }
  Value add(const Value& a, const PlainVector& p) const { return ops_.add(a, p); }
  Value add(const Value& a, std::complex<double> constant) const { return ops_.add(a, constant); }
  Value add(const Value& a, double constant) const { return ops_.add(a, std::complex<double>(constant, 0)); }
  Value sub(const Value& a, double constant) const { return ops_.add(a, std::complex<double>(-constant, 0)); }
  Value rotate(const Value& a, std::int64_t steps) const {
    const auto slots = static_cast<std::int64_t>(a.slots());
    const std::int64_t reduced = ((steps % slots) + slots) % slots;
    return reduced == 0 ? a.clone() : ops_.rotate(a, reduced);
  }
  Value conjugate(const Value& a) const { return ops_.conjugate(a); }
  Value bootstrap(const Value& a) const { return ops_.bootstrap(a); }
  void output(const Value& a, std::string name) {
    outputs_.push_back(a.clone());
    names_.push_back(std::move(name));
  }
  void label(const Value&, const std::string&) const {}

  std::vector<ckks::Ciphertext>& outputs() { return outputs_; }
  const std::vector<std::string>& output_names() const { return names_; }

 private:
  ChainOps<B> ops_;
  std::vector<ckks::Ciphertext> outputs_;
  std::vector<std::string> names_;
};

}  // namespace cerium::graph
