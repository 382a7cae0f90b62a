#include "cerium/math/os_random.hpp"

#include <fmt/format.h>
#include <sys/random.h>

#include <cerrno>
#include <system_error>

#include "cerium/core/error.hpp"

namespace cerium::math {

void os_random_bytes(std::span<std::byte> out) {
  std::size_t filled = 0;
  while (filled < out.size()) {
    // Requests above 256 bytes may come back short, and a signal may interrupt the call: loop until full.
    const ssize_t got = getrandom(out.data() + filled, out.size() - filled, 0);
    if (got < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      throw SystemError(fmt::format("getrandom failed after {} of {} bytes: {} (errno {})", filled, out.size(),
                                    std::system_category().message(error), error));
    }
    filled += static_cast<std::size_t>(got);
  }
}

Seed os_random_seed() {
  Seed seed;
  os_random_bytes(std::as_writable_bytes(std::span(seed.words)));
  return seed;
}

}  // namespace cerium::math
