#pragma once
// Shared by the key, key-switching and encryption tests: fixed seeds, toy parameter sets and centred views of
// polynomials.

#include <cstdint>
#include <vector>

#include "cerium/ckks/parameters.hpp"
#include "cerium/math/chacha20.hpp"
#include "cerium/ring/rns_poly.hpp"

namespace scheme_test {

using cerium::ckks::CkksConfig;
using cerium::ckks::SecretDistribution;

// A fixed seed per tag, for tests that must give the same words on every run.
inline cerium::math::Seed seed_of(std::uint32_t tag) {
  cerium::math::Seed seed;
  for (std::uint32_t i = 0; i < 8; ++i) seed.words[i] = tag * 0x9e3779b9u + i;
  return seed;
}

// Toy parameter sets (insecure by explicit opt-out) covering dnum 1..3, both level widths, full and partial
// digits; index 4 has a sparse (Hamming weight 64) secret.
inline CkksConfig toy_config(int index) {
  switch (index) {
    case 0: return {.log_n = 10, .levels = 2, .level_width = 1, .dnum = 1, .insecure_opt_out = true};
    case 1: return {.log_n = 11, .levels = 3, .level_width = 2, .dnum = 2, .insecure_opt_out = true};
    case 2: return {.log_n = 12, .levels = 4, .level_width = 1, .dnum = 3, .insecure_opt_out = true};
    case 3: return {.log_n = 10, .levels = 4, .level_width = 2, .dnum = 3, .insecure_opt_out = true};
    default:
      return {.log_n = 11, .levels = 2, .level_width = 2, .dnum = 2, .secret = SecretDistribution::hamming_weight,
              .hamming_weight = 64, .insecure_opt_out = true};
  }
}

inline CkksConfig sparse_config() { return toy_config(4); }

// Centered coefficients of x (any form); InvalidArgument when one does not fit in int64.
inline std::vector<std::int64_t> centered(const cerium::ring::RnsPoly& x) {
  cerium::ring::RnsPoly c = x.clone();
  c.to_coeff();
  return c.to_signed();
}

}  // namespace scheme_test
