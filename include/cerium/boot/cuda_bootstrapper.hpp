#pragma once
// Bootstrapping on the GPU: boot::BasicBootstrapper over the CUDA backend, instantiated once in the CUDA library.
// The DFT diagonals, constants and keys live on the device; ModRaise is the backend's kernel; the input and the
// output are device ciphertexts (CudaEvaluator::upload / download).
//
//   auto boot = boot::CudaBootstrapper(context, config, backend::CudaBackend(context));
//   boot.set_keys(std::make_shared<const boot::BootstrapKeys>(boot.generate_keys(keygen)));
//   auto fresh = boot.bootstrap(boot.evaluator().upload(ciphertext));

#include "cerium/backend/cuda_backend.hpp"
#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"

namespace cerium::boot {

// The bootstrapper on the CUDA backend: device ciphertexts in and out.
using CudaBootstrapper = BasicBootstrapper<backend::CudaBackend>;

extern template class BasicBootstrapper<backend::CudaBackend>;

}  // namespace cerium::boot
