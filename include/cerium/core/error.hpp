#pragma once
// The error hierarchy. Every failure Cerium reports is a cerium::Error; the subclass says what kind of
// mistake it is so that callers can catch what they can handle. Messages name the user's call, the values
// involved and what to do about them. No standard-library exception escapes the public API (the "[misuse]"
// tests drive it with random out-of-range arguments).
//
// One class per kind of problem:
//  - LevelError: a level outside 0..max_level (encode, level_down, level_prime_product, tracer inputs, plan
//    options), an operation with no level left (rescale or multiply by a constant at level 0, bootstrap of a
//    level-0 input), a program deeper than the levels, and a valid (positive, finite) scale that the level cannot
//    carry (below 1, too little headroom for a product, beyond adjust_scale's reach).
//  - MismatchError: operands that do not fit together: two contexts mixed (ciphertexts, plaintexts, keys,
//    evaluators, executors), other slot counts (binary operations, bootstrap inputs, executor inputs), values of
//    another tracer or never traced, and empty (default-constructed or moved-from) objects, which have no context.
//  - MissingKeyError: a key or key set an operation needs and was not given (relinearization, a rotation step,
//    conjugation, bootstrapping keys, rotations outside PlanOptions::available_rotations).
//  - InvalidArgument: a value outside its domain: slot counts that are not a power of two up to N/2, too many
//    values, NaN or infinite values, constants or scales, non-positive scales, encodings whose integers overflow
//    Q_level ("scale overflow": values times scale), wrong part counts, wrong input counts, empty lists, even
//    Galois elements, a spent tracer.
//  - ParameterError: configurations (CkksConfig, BootstrapConfig) that are structurally wrong.

#include <stdexcept>
#include <string>

namespace cerium {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A function argument outside its documented domain (sizes, indices, degrees, moduli).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// Parameter sets that are structurally wrong (N not a power of two, too few primes, primes not NTT-friendly).
class ParameterError : public Error {
 public:
  using Error::Error;
};

// Parameter sets that fail the security check.
class SecurityError : public ParameterError {
 public:
  using ParameterError::ParameterError;
};

// Operands that do not fit together: different contexts, bases, keys, forms or levels.
class MismatchError : public Error {
 public:
  using Error::Error;
};

// Levels and scales: multiply at the last level, scale out of bounds, levels that cannot be aligned.
class LevelError : public Error {
 public:
  using Error::Error;
};

// A key that an operation needs is missing (e.g. the rotation key for a step).
class MissingKeyError : public Error {
 public:
  using Error::Error;
};

// Serialized data that is corrupted, truncated, of another version or for other parameters.
class SerializationError : public Error {
 public:
  using Error::Error;
};

// The operating system failed us (randomness, files).
class SystemError : public Error {
 public:
  using Error::Error;
};

// A device (GPU) call failed; the message names the call, the code and the place.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// A device allocation failed; existing objects stay valid and the caller may free memory and retry.
class OutOfMemoryError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

// A numerical method that did not reach its answer: an iteration that did not converge within its limit, or a
// result that fails its own checks (the message names the method, its inputs and what to change).
class NumericalError : public Error {
 public:
  using Error::Error;
};

// A collective of a device mesh (dist/) that could not complete: a rank failed or timed out, or the ranks disagree
// (different parameters, keys or call sequences). Every rank of the mesh gets one, never a hang.
class CommunicationError : public Error {
 public:
  using Error::Error;
};

// A feature that was not compiled in (e.g. the CUDA backend in a CPU-only build).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

}  // namespace cerium
