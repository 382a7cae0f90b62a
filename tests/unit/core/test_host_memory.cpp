// The host block cache (core/host_memory.hpp): a freed large block comes back for the next request of its size,
// the limit bounds what waits, release_unused_host_memory empties it, and AlignedBuffer's words survive the reuse.
// Builds with AddressSanitizer keep no cache (every block goes back at once), which these checks allow.

#include <cstdint>
#include <cstring>

#include "cerium/core/aligned_buffer.hpp"
#include "cerium/core/host_memory.hpp"
#include "support/catch.hpp"

using namespace cerium;

TEST_CASE("large host blocks are reused by size, within the cache's limit", "[core][host_memory]") {
  const std::size_t limit = host_cache_limit();
  release_unused_host_memory();
  set_host_cache_limit(std::size_t{64} << 20);
  const std::size_t bytes = std::size_t{3} << 20;  // on huge pages where the kernel offers them
  void* first = allocate_host_block(bytes);
  REQUIRE(first != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(first) % buffer_alignment == 0);
  std::memset(first, 0x5a, bytes);
  free_host_block(first, bytes);
  const bool caching = host_cache_bytes() == bytes;  // false only where the build keeps no cache (ASan)
  if (caching) {
    void* again = allocate_host_block(bytes);
    CHECK(again == first);
    CHECK(host_cache_bytes() == 0);
    free_host_block(again, bytes);
    // Another size does not take it.
    void* other = allocate_host_block(bytes + buffer_alignment);
    CHECK(other != first);
    free_host_block(other, bytes + buffer_alignment);
    CHECK(host_cache_bytes() == 2 * bytes + buffer_alignment);
    CHECK(release_unused_host_memory() == 2 * bytes + buffer_alignment);
  }
  CHECK(host_cache_bytes() == 0);
  // A limit below the block: it goes back to the system at once.
  set_host_cache_limit(bytes - 1);
  void* block = allocate_host_block(bytes);
  free_host_block(block, bytes);
  CHECK(host_cache_bytes() == 0);
  // Small blocks never wait.
  set_host_cache_limit(std::size_t{64} << 20);
  void* small = allocate_host_block(4096);
  free_host_block(small, 4096);
  CHECK(host_cache_bytes() == 0);
  // A reused buffer starts zeroed when asked to.
  {
    AlignedBuffer<std::uint32_t> dirty(bytes / 4, BufferInit::uninitialized);
    std::memset(dirty.data(), 0xff, bytes);
  }
  AlignedBuffer<std::uint32_t> clean(bytes / 4);
  bool zero = true;
  for (const std::uint32_t w : clean.span()) zero = zero && w == 0;
  CHECK(zero);
  CHECK(available_host_memory() > 0);
  release_unused_host_memory();
  set_host_cache_limit(limit);
}
