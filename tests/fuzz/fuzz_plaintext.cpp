// libFuzzer harness: io::from_bytes<ckks::Plaintext> on arbitrary bytes.

#include "fuzz_common.hpp"

CERIUM_FUZZ_TARGET(cerium::ckks::Plaintext)
