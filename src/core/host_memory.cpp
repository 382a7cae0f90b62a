#include "cerium/core/host_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <new>
#include <string>
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
// Blocks of this size and more sit on transparent huge pages where the kernel offers them (madvise mode): one
// fault and one zeroing per 2 MiB instead of per 4 KiB page.
constexpr std::size_t huge_page = std::size_t{2} << 20;

std::size_t alignment_for(std::size_t bytes) { return bytes >= huge_page ? huge_page : buffer_alignment; }

void* system_allocate(std::size_t bytes) noexcept {
  const std::size_t alignment = alignment_for(bytes);
  const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* block = ::operator new(rounded, std::align_val_t{alignment}, std::nothrow);
#ifdef MADV_HUGEPAGE
  if (block != nullptr && alignment == huge_page) madvise(block, rounded, MADV_HUGEPAGE);  // a hint: may fail
#endif
  return block;
}

void system_free(void* block, std::size_t bytes) noexcept {
  ::operator delete(block, std::align_val_t{alignment_for(bytes)});
}

// An eighth of the physical memory, at most 4 GiB, or CERIUM_HOST_CACHE_MIB from the environment. A bootstrap at
// N = 2^16 on two threads: 25 s with 1 GiB, 20.3 s with 2.9 GiB, 19.0 s with 8 GiB (a 23 GiB machine).
std::size_t initial_limit() {
  if (const char* env = std::getenv("CERIUM_HOST_CACHE_MIB"); env != nullptr && *env != '\0') {
    return static_cast<std::size_t>(std::strtoull(env, nullptr, 10)) << 20;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const std::size_t physical =
      pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
  return std::min(physical / 8, std::size_t{4} << 30);
}

struct HostCache {
  std::mutex mutex;
  std::unordered_map<std::size_t, std::vector<void*>> free_blocks;  // by size in bytes
  std::size_t bytes = 0;
  std::size_t limit = CERIUM_HOST_CACHE ? initial_limit() : 0;

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
  system_free(block, bytes);
}

void set_host_cache_limit(std::size_t bytes) {
  HostCache& c = cache();
  std::vector<std::pair<void*, std::size_t>> dropped;
  {
    std::lock_guard lock(c.mutex);
    c.limit = CERIUM_HOST_CACHE ? bytes : 0;
    if (c.bytes > c.limit) dropped = c.take_all();
  }
  for (const auto& [block, size] : dropped) system_free(block, size);
}

std::size_t host_cache_limit() {
  HostCache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.limit;
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
    system_free(block, size);
    released += size;
  }
  return released;
}

std::size_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

}  // namespace cerium
