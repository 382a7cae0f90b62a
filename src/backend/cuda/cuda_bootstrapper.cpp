// The explicit instantiation of the bootstrapper for the CUDA backend, from the same member definitions as the
// CPU instantiation (src/ckks/bootstrap/bootstrapper.cpp).

#include "cerium/backend/cuda_bootstrapper.hpp"

#include "ckks/bootstrap/bootstrapper_setup.hpp"
#include "ckks/bootstrap/bootstrapper_stages.hpp"
#include "ckks/bootstrap/eval_mod.hpp"

namespace cerium::ckks {

template class BasicBootstrapper<backend::CudaBackend>;

}  // namespace cerium::ckks
