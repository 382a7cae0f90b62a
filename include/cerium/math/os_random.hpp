#pragma once
// Randomness from the operating system (getrandom(2)): the only source of fresh entropy in Cerium. Everything
// else is expanded from seeds drawn here by ChaCha20.

#include <cstddef>
#include <span>

#include "cerium/math/chacha20.hpp"

namespace cerium::math {

// Fills `out` with bytes from the kernel's CSPRNG, blocking until it is seeded. Retries on EINTR and short
// reads; throws cerium::SystemError (with the errno text) when the system call fails.
void os_random_bytes(std::span<std::byte> out);

// A fresh 256-bit seed from os_random_bytes.
Seed os_random_seed();

}  // namespace cerium::math
