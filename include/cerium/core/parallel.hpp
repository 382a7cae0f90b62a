#pragma once
// How many threads the CPU backend's batched loops use (the NTT over limbs, basis conversion, rescale): OpenMP
// threads when the build has OpenMP (CERIUM_OPENMP), one otherwise. The words never depend on the count: every
// thread owns whole limbs or whole coefficient blocks.

namespace cerium {

// Threads a batched loop may use now (1 without OpenMP).
int cpu_threads();
// For the calling thread's loops (OpenMP's per-thread setting; other threads keep theirs): 0, one per core (the
// default, or OMP_NUM_THREADS). InvalidArgument for a negative count.
void set_cpu_threads(int threads);
// The calling thread's batched loops run on it alone: for the workers of a pool of its own (encoding plaintexts,
// generating keys), so that each worker does not start a team of its own on the same cores.
void use_one_cpu_thread_here();

}  // namespace cerium
