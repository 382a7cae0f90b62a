#pragma once
// Uniformly random RNS polynomials in NTT form, for tests of the ring and RLWE layers.

#include <algorithm>
#include <random>

#include "cerium/ring/rns_poly.hpp"
#include "support/random.hpp"

namespace cerium_test {

inline cerium::ring::RnsPoly random_ntt_poly(const cerium::ring::RnsBasisPtr& basis, std::mt19937_64& rng) {
  cerium::ring::RnsPoly poly(basis, cerium::ring::PolyForm::ntt);
  for (std::size_t i = 0; i < poly.limb_count(); ++i) {
    const auto values = random_residues(rng, poly.n(), basis->prime(i));
    std::copy(values.begin(), values.end(), poly.limb(i).begin());
  }
  return poly;
}

}  // namespace cerium_test
