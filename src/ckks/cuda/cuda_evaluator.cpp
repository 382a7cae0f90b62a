// The explicit instantiation of the evaluator for the CUDA backend, from the same member definitions as the CPU
// instantiation (src/ckks/evaluator.cpp): one algorithm, two backends.

#include "cerium/ckks/cuda_evaluator.hpp"

#include "../evaluator_arith.hpp"
#include "../evaluator_checks.hpp"
#include "../evaluator_out_of_place.hpp"
#include "../evaluator_rotation.hpp"

namespace cerium::ckks {

template class BasicEvaluator<backend::CudaBackend>;

}  // namespace cerium::ckks
