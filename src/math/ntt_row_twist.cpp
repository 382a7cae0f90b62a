#include "cerium/math/ntt_row_twist.hpp"

#include <cstdint>

#include "cerium/core/check.hpp"
#include "cerium/math/ntt_butterfly.hpp"

namespace cerium::math {

std::vector<ShoupConstant> ntt_row_twists(const NttTables& tables, const NttRowSplit& split, bool inverse) {
  const int log_n = tables.log_degree();
  require(split.direct_stages > 0 && split.direct_stages <= split.log_row && split.log_row < log_n,
          "an NTT row split of 2^{} words with {} direct stages does not fit N = 2^{}", split.log_row,
          split.direct_stages, log_n);
  const std::uint32_t q = tables.modulus();
  const int log_rows = log_n - split.log_row;
  const std::size_t rows = std::size_t{1} << log_rows;
  const std::size_t period = std::size_t{1} << split.log_twist_period();
  const auto psi = static_cast<u32>(inverse ? inv_mod(tables.psi(), q) : tables.psi());
  std::vector<ShoupConstant> twists;
  twists.reserve(rows * period);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint64_t beta = pow_mod(psi, 2 * u64{bit_reverse(static_cast<u32>(r), log_rows)}, q);
    std::uint64_t power = 1;
    for (std::size_t k = 0; k < period; ++k) {
      twists.emplace_back(static_cast<u32>(power), q);
      power = power * beta % q;
    }
  }
  return twists;
}

}  // namespace cerium::math
