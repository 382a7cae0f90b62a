#pragma once
// Bootstrapping on the GPU: ckks::BasicBootstrapper over the CUDA backend, instantiated once in the CUDA library.
// The DFT diagonals, constants and keys live on the device; ModRaise is the backend's kernel; the input and the
// output are device ciphertexts (CudaEvaluator::upload / download).
//
//   auto boot = ckks::CudaBootstrapper(context, config, backend::CudaBackend(context));
//   boot.set_keys(std::make_shared<const ckks::BootstrapKeys>(boot.generate_keys(keygen)));
//   auto fresh = boot.bootstrap(boot.evaluator().upload(ciphertext));

#include "cerium/backend/cuda_backend.hpp"
#include "cerium/backend/cuda_evaluator.hpp"
#include "cerium/ckks/bootstrap/bootstrapper.hpp"

namespace cerium::ckks {

using CudaBootstrapper = BasicBootstrapper<backend::CudaBackend>;

extern template class BasicBootstrapper<backend::CudaBackend>;

}  // namespace cerium::ckks
