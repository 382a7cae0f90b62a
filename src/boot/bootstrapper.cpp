// The explicit instantiation of the bootstrapper for the CPU backend. The member definitions are split by stage
// into the *.hpp files next to this one; the CUDA instantiation (cuda/cuda_bootstrapper.cpp) includes them too.

#include "cerium/boot/bootstrapper.hpp"

#include "bootstrapper_setup.hpp"
#include "bootstrapper_stages.hpp"

namespace cerium::boot {

template class BasicBootstrapper<backend::CpuBackend>;

}  // namespace cerium::boot
