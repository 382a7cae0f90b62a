// The explicit instantiation of the evaluator for the CPU backend. The member definitions are split by topic into
// the evaluator_*.hpp files next to this one; a CUDA instantiation would include them the same way.

#include "cerium/ckks/evaluator.hpp"

#include "evaluator_arith.hpp"
#include "evaluator_checks.hpp"
#include "evaluator_out_of_place.hpp"
#include "evaluator_rotation.hpp"

namespace cerium::ckks {

template class BasicEvaluator<backend::CpuBackend>;

}  // namespace cerium::ckks
