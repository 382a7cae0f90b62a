// The explicit instantiation of the bootstrapper for the limb-sharded backend (dist/), from the same member
// definitions as the CPU instantiation (bootstrapper.cpp).

#include "cerium/boot/sharded_bootstrapper.hpp"

#include "bootstrapper_setup.hpp"
#include "bootstrapper_stages.hpp"

namespace cerium::boot {

template class BasicBootstrapper<dist::ShardedBackend>;

}  // namespace cerium::boot
