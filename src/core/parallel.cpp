#include "cerium/core/parallel.hpp"

#include <thread>

#include "cerium/core/check.hpp"

#if CERIUM_HAS_OPENMP
#include <omp.h>
#endif

namespace cerium {

int cpu_threads() {
#if CERIUM_HAS_OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_cpu_threads(int threads) {
  require(threads >= 0, "set_cpu_threads({}): the count must be 0 (one per core) or more", threads);
#if CERIUM_HAS_OPENMP
  omp_set_num_threads(threads == 0 ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : threads);
#endif
}

void use_one_cpu_thread_here() {
#if CERIUM_HAS_OPENMP
  omp_set_num_threads(1);
#endif
}

}  // namespace cerium
