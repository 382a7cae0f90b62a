#pragma once
// The error hierarchy. Every failure Cerium reports is a cerium::Error; the subclass says what kind of
// mistake it is so that callers can catch what they can handle. Messages name the values involved and what
// to do about them.

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

// A feature that was not compiled in (e.g. the CUDA backend in a CPU-only build).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

}  // namespace cerium
