#pragma once
// Automorphisms in NTT form on the device: the words of ring::Automorphism::apply_ntt on every limb, one
// launch. The permutation (it depends only on N and the Galois element) is uploaded once.

#include <cstddef>
#include <cstdint>

#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/ring/automorphism.hpp"

namespace cerium::cuda {

class AutomorphismPlan {
 public:
  // N >= 4. Uploads automorphism.ntt_permutation().
  explicit AutomorphismPlan(const ring::Automorphism& automorphism, Stream stream = {});

  std::size_t degree() const { return n_; }
  std::uint32_t galois_element() const { return galois_element_; }
  // The device table: out[j] = in[permutation[j]]; kernels that fuse the automorphism into their loads read it.
  const std::uint32_t* device_permutation() const { return permutation_.data(); }

  // limbs limbs of in (NTT form) to out; out must not overlap in.
  void apply(const std::uint32_t* in, std::uint32_t* out, std::size_t limbs, const Stream& stream) const;

 private:
  std::size_t n_ = 0;
  int log_n_ = 0;
  std::uint32_t galois_element_ = 1;
  DeviceBuffer permutation_;
};

}  // namespace cerium::cuda
