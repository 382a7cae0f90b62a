// The explicit instantiation of the bootstrapper for the CUDA backend, from the same member definitions as the
// CPU instantiation (src/boot/bootstrapper.cpp).

#include "cerium/boot/cuda_bootstrapper.hpp"

#include "../bootstrapper_setup.hpp"
#include "../bootstrapper_stages.hpp"

namespace cerium::boot {

template class BasicBootstrapper<backend::CudaBackend>;

}  // namespace cerium::boot
