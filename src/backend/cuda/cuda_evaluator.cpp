// The explicit instantiation of the evaluator for the CUDA backend, from the same member definitions as the CPU
// instantiation (src/ckks/evaluator.cpp): one algorithm, two backends.

#include "cerium/backend/cuda_evaluator.hpp"

#include "ckks/evaluator_arith.hpp"
#include "ckks/evaluator_checks.hpp"
#include "ckks/evaluator_rotation.hpp"

namespace cerium::ckks {

template class BasicEvaluator<backend::CudaBackend>;

}  // namespace cerium::ckks
