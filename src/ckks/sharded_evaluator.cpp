// The explicit instantiation of the evaluator for the limb-sharded backend (dist/), from the same member
// definitions as the CPU one (evaluator.cpp).

#include "cerium/ckks/sharded_evaluator.hpp"

#include "evaluator_arith.hpp"
#include "evaluator_checks.hpp"
#include "evaluator_out_of_place.hpp"
#include "evaluator_rotation.hpp"

namespace cerium::ckks {

template class BasicEvaluator<dist::ShardedBackend>;

}  // namespace cerium::ckks
