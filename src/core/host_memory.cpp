#include "cerium/core/host_memory.hpp"

#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "cerium/core/config.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define CERIUM_HOST_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CERIUM_HOST_CACHE 0
#endif
#endif
#ifndef CERIUM_HOST_CACHE
#define CERIUM_HOST_CACHE 1
#endif

namespace cerium {

namespace {

constexpr std::size_t smallest_cached = std::size_t{1} << 20;

void* system_allocate(std::size_t bytes) noexcept {
  return ::operator new(bytes, std::align_val_t{buffer_alignment}, std::nothrow);
}

void system_free(void* block) noexcept { ::operator delete(block, std::align_val_t{buffer_alignment}); }

struct HostCache {
  std::mutex mutex;
  std::unordered_map<std::size_t, std::vector<void*>> free_blocks;  // by size in bytes
  std::size_t bytes = 0;
  std::size_t limit = CERIUM_HOST_CACHE ? std::size_t{1} << 30 : 0;

  // Every block out, the lock held.
  std::vector<std::pair<void*, std::size_t>> take_all() {
    std::vector<std::pair<void*, std::size_t>> all;
    for (auto& [size, blocks] : free_blocks) {
      for (void* b : blocks) all.emplace_back(b, size);
    }
    free_blocks.clear();
    bytes = 0;
    return all;
  }
};

// Never destroyed: buffers freed by other static objects' destructors may still come back at exit.
HostCache& cache() {
  static HostCache* const instance = new HostCache;
  return *instance;
}

}  // namespace

void* allocate_host_block(std::size_t bytes) noexcept {
  if (bytes >= smallest_cached) {
    HostCache& c = cache();
    std::lock_guard lock(c.mutex);
    const auto it = c.free_blocks.find(bytes);
    if (it != c.free_blocks.end() && !it->second.empty()) {
      void* block = it->second.back();
      it->second.pop_back();
      c.bytes -= bytes;
      return block;
    }
  }
  return system_allocate(bytes);
}

void free_host_block(void* block, std::size_t bytes) noexcept {
  if (block == nullptr) return;
  if (bytes >= smallest_cached) {
    HostCache& c = cache();
    std::lock_guard lock(c.mutex);
    if (c.bytes + bytes <= c.limit) {
      try {
        c.free_blocks[bytes].push_back(block);
        c.bytes += bytes;
        return;
      } catch (const std::bad_alloc&) {
        // No room to remember it: it goes back to the system below.
      }
    }
  }
  system_free(block);
}

void set_host_cache_limit(std::size_t bytes) {
  HostCache& c = cache();
  std::vector<std::pair<void*, std::size_t>> dropped;
  {
    std::lock_guard lock(c.mutex);
    c.limit = CERIUM_HOST_CACHE ? bytes : 0;
    if (c.bytes > c.limit) dropped = c.take_all();
  }
  for (const auto& [block, size] : dropped) system_free(block);
}

std::size_t host_cache_bytes() {
  HostCache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.bytes;
}

std::size_t release_unused_host_memory() {
  HostCache& c = cache();
  std::vector<std::pair<void*, std::size_t>> all;
  {
    std::lock_guard lock(c.mutex);
    all = c.take_all();
  }
  std::size_t released = 0;
  for (const auto& [block, size] : all) {
    system_free(block);
    released += size;
  }
  return released;
}

}  // namespace cerium
