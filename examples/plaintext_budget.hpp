#pragma once
// How much of a model's plaintexts an example keeps encoded where it computes, and how much unscaled
// (graph::ExecutorOptions::plaintext_cache_bytes and keep_rest_unscaled): on a GPU, everything encoded when it
// fits beside the keys with room for the run, else what fits beside the rest kept unscaled (2 doubles a slot of a
// plaintext's period, whatever its level); on the CPU, none encoded ahead (host memory would hold every level's
// limbs), all unscaled: each use then rounds and transforms without an FFT.

#include <cstddef>
#include <set>
#include <span>
#include <type_traits>
#include <utility>

#include "cerium/backend/backend.hpp"
#include "cerium/graph/planner.hpp"
#if CERIUM_HAS_CUDA
#include "cerium/backend/cuda/memory.hpp"
#include "cerium/backend/cuda_backend.hpp"
#endif

// The bytes of a plan's plaintext operands kept unscaled: each vector once per slot count (as the executor holds
// them: a layer's diagonals are shared by every ciphertext it multiplies).
inline std::size_t unscaled_plaintext_bytes(const cerium::graph::Plan& plan) {
  std::size_t bytes = 0;
  std::set<std::pair<const void*, std::size_t>> held;
  for (cerium::graph::NodeId id = 0; id < plan.program.size(); ++id) {
    const cerium::graph::Node& node = plan.program.node(id);
    if (node.op != cerium::graph::Op::multiply_plain && node.op != cerium::graph::Op::add_plain) continue;
    if (held.emplace(node.plain.storage(), node.slots).second) bytes += 2 * node.plain.period() * sizeof(double);
  }
  return bytes;
}

// The cache bound for plans that will all be held at once (0: no bound; 1 byte: none encoded).
template <cerium::backend::PolyBackend B>
std::size_t plaintext_cache_bytes(std::span<const cerium::graph::Plan> plans) {
#if CERIUM_HAS_CUDA
  if constexpr (std::is_same_v<B, cerium::backend::CudaBackend>) {
    std::size_t encoded = 0, unscaled = 0, peak = 0;
    for (const auto& plan : plans) {
      encoded += plan.plaintext_encoded_bytes;
      unscaled += unscaled_plaintext_bytes(plan);
      peak = std::max(peak, plan.memory.peak_bytes);
    }
    const std::size_t room = (std::size_t{16} << 30) + peak;  // the live ciphertexts and the bootstrapper's work
    const std::size_t free = cerium::cuda::memory_available();
    if (encoded + room <= free) return 0;
    return free > room + unscaled ? free - room - unscaled : 1;
  }
#endif
  return 1;
}

// graph::ExecutorOptions::unscaled_period_limit for plans at this ring degree: on a GPU, the periods whose unscaled
// plaintexts encode in one launch (CudaBackend::sparse_encoding_period) stay unscaled, so the cache's room goes to
// the plaintexts that would cost a full NTT at each use (BERT-Base on the H100: 5.4 s a layer with its row-period
// weights unscaled, 6.7-6.9 s with the first 1,200 of them cached encoded); elsewhere none (0).
template <cerium::backend::PolyBackend B>
std::size_t unscaled_period_limit([[maybe_unused]] std::size_t ring_degree) {
#if CERIUM_HAS_CUDA
  if constexpr (std::is_same_v<B, cerium::backend::CudaBackend>) {
    return cerium::backend::CudaBackend::sparse_encoding_period(ring_degree);
  }
#endif
  return 0;
}
