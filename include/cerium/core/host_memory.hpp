#pragma once
// Host memory for AlignedBuffer (cerium::buffer_alignment-aligned). Large blocks (1 MiB and more) come back for
// reuse: a freed one waits in a cache, by size, for the next request of that size. A CKKS program allocates
// polynomials of a few sizes over and over, and without the cache each large block returns to the kernel when freed
// and comes back zeroed page by page (a ninth of a multiplication at N = 2^16 on one thread; on two, the threads
// also queue on the kernel's page-table lock). Blocks of 2 MiB and more are 2 MiB-aligned and asked to sit on
// transparent huge pages (madvise), so that the first touch faults once per 2 MiB. Builds with AddressSanitizer
// keep no cache, so that it still sees every use after free.

#include <cstddef>

namespace cerium {

// `bytes` (a multiple of buffer_alignment, not 0), aligned to buffer_alignment; nullptr when the host has no memory.
void* allocate_host_block(std::size_t bytes) noexcept;
// Gives back a block of allocate_host_block(bytes).
void free_host_block(void* block, std::size_t bytes) noexcept;

// At most `bytes` wait in the cache (default: an eighth of the physical memory, at most 4 GiB, or
// CERIUM_HOST_CACHE_MIB from the environment; 0: none); blocks beyond go back to the system at once.
void set_host_cache_limit(std::size_t bytes);
// The limit now.
std::size_t host_cache_limit();
// Bytes waiting in the cache now.
std::size_t host_cache_bytes();
// Returns every cached block to the system; the bytes returned.
std::size_t release_unused_host_memory();

// Host memory a program may still take without swapping (Linux's MemAvailable; the free pages elsewhere).
std::size_t available_host_memory();

}  // namespace cerium
