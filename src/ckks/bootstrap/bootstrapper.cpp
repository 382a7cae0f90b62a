// The explicit instantiation of the bootstrapper for the CPU backend. The member definitions are split by stage
// into the *.hpp files next to this one; a CUDA instantiation would include them the same way.

#include "cerium/ckks/bootstrap/bootstrapper.hpp"

#include "bootstrapper_setup.hpp"
#include "bootstrapper_stages.hpp"
#include "eval_mod.hpp"

namespace cerium::ckks {

template class BasicBootstrapper<backend::CpuBackend>;

}  // namespace cerium::ckks
