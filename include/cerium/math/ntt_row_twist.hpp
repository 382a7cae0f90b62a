#pragma once
// Twist factors that let the rows of a two-pass NTT share one set of twiddles.
//
// A transform of N = 2^logN words split into 2^c = N / 2^log_row rows runs its first c stages over columns
// and its last log_row stages within each row. Row r's stages would use N - 2^c distinct twiddles per limb
// in all, one per word, which the GPU reads as 8 bytes per 4-byte word. They factor: row r's twiddle at row
// stage s equals row 0's times beta_r^t, t = 2^(log_row - 1 - s) the stage's butterfly distance and
// beta_r = psi^(2 bitrev_c(r)). So, after its first `direct_stages` stages (run with row r's own twiddles),
// a row whose word k is multiplied by beta_r^(k mod 2^(log_row - direct_stages)) finishes with row 0's
// twiddles, and gives the same words. The inverse runs row 0's inverse twiddles first, multiplies by
// beta_r^-(k mod ...), then its last direct_stages stages with row r's. The table is 2^(logN - direct_stages)
// entries instead of N, and the twiddles left are one row's, shared by all rows.

#include <cstddef>
#include <vector>

#include "cerium/math/modarith.hpp"
#include "cerium/math/ntt.hpp"

namespace cerium::math {

// How a two-pass NTT splits its N words into rows, and which row stages run with the row's own twiddles.
struct NttRowSplit {
  int log_row = 11;       // words per row: 2^log_row
  int direct_stages = 3;  // first row stages run with the row's own twiddles
  // log_row - direct_stages: the twist table holds 2^this entries per row.
  int log_twist_period() const { return log_row - direct_stages; }
};

// Row-major: entry r 2^log_twist_period + k is beta_r^k (inverse: beta_r^-k) with its Shoup quotient, for the
// N / 2^log_row rows. Throws InvalidArgument unless 0 < direct_stages <= log_row < log2(N).
std::vector<ShoupConstant> ntt_row_twists(const NttTables& tables, const NttRowSplit& split, bool inverse);

}  // namespace cerium::math
