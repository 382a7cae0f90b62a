#pragma once
// The evaluator on the GPU: ckks::BasicEvaluator over the CUDA backend, instantiated once in the CUDA library.
//
//   auto evaluator = ckks::CudaEvaluator(context, backend::CudaBackend(context));
//   evaluator.set_relinearization_key(relin);        // host keys are uploaded once, here
//   auto x = evaluator.upload(encryptor.encrypt(pt));  // ciphertexts move to the device explicitly
//   auto y = evaluator.download(evaluator.multiply(x, x));

#include "cerium/backend/cuda_backend.hpp"
#include "cerium/ckks/evaluator.hpp"

namespace cerium::ckks {

// The evaluator over backend::CudaBackend: its operands live in device memory (upload, download).
using CudaEvaluator = BasicEvaluator<backend::CudaBackend>;

extern template class BasicEvaluator<backend::CudaBackend>;

}  // namespace cerium::ckks
