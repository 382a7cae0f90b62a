#pragma once
// What every harness shares: one fixed toy context (tiny N, so that the fuzzer reaches every field quickly) and
// the rule: loading arbitrary bytes may throw a cerium::Error and nothing else. Anything else (another exception,
// a sanitizer report, an allocation beyond libFuzzer's limit) is a finding.

#include <cstddef>
#include <cstdint>
#include <span>

#include "cerium/ckks/context.hpp"
#include "cerium/io/bytes.hpp"

namespace cerium_fuzz {

inline cerium::ckks::CkksConfig fuzz_config() {
  return cerium::ckks::CkksConfig{
      .log_n = 5, .levels = 2, .level_width = 1, .dnum = 2, .insecure_opt_out = true};
}

inline const cerium::ckks::ContextPtr& fuzz_context() {
  static const cerium::ckks::ContextPtr context = cerium::ckks::Context::create(fuzz_config());
  return context;
}

template <class T>
int load_bytes(const std::uint8_t* data, std::size_t size) {
  try {
    (void)cerium::io::from_bytes<T>(std::span<const std::uint8_t>(data, size), fuzz_context());
  } catch (const cerium::Error&) {
    // Rejected input: the expected outcome for almost every mutation.
  }
  return 0;
}

}  // namespace cerium_fuzz

#define CERIUM_FUZZ_TARGET(T)                                                    \
  extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
    return cerium_fuzz::load_bytes<T>(data, size);                              \
  }
