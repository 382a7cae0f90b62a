#pragma once
// eval(expression, EvalContext{evaluator}): lowers the expression (plan/lower.hpp: hoisted rotations, lazy
// relinearization, fused sums of products) and runs it on the evaluator. The result has 2 parts and is not
// rescaled unless the expression says rescale.

#include "cerium/backend/backend.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/expr/node.hpp"
#include "cerium/plan/executor.hpp"
#include "cerium/plan/lower.hpp"
#include "cerium/plan/options.hpp"

namespace cerium::plan {

// What eval runs on: the evaluator, whose context, keys and backend the plan uses.
template <backend::PolyBackend B = backend::CpuBackend>
struct EvalContext {
  const ckks::BasicEvaluator<B>& evaluator;  // referenced: it must outlive the eval call
};
// EvalContext{evaluator} deduces the backend.
template <backend::PolyBackend B>
EvalContext(const ckks::BasicEvaluator<B>&) -> EvalContext<B>;

// Evaluates e, which must involve a ciphertext: its plan (plan/lower.hpp) run on the evaluator, a 2-part result.
// options: what the planner may do (all of it by default); the words are the same either way.
template <expr::Node E, backend::PolyBackend B>
ckks::Ciphertext eval(const E& e, const EvalContext<B>& context, PlanOptions options = {}) {
  static_assert(E::cipher, "cerium::plan::eval: the expression has no ciphertext; there is nothing to evaluate");
  Executor<B> machine(context.evaluator);
  Lowering<Executor<B>> lowering(machine, options);
  return lowering.lower(e);
}

}  // namespace cerium::plan

namespace cerium {
using plan::EvalContext;
using plan::eval;
using plan::PlanOptions;
}  // namespace cerium
