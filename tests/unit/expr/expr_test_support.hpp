#pragma once
// Shared set-up of the eDSL tests: the evaluator fixture of the ckks tests, one toy parameter set with the keys
// the tests need, and the eDSL names.

#include "cerium/expr/expr.hpp"
#include "cerium/plan/eval.hpp"
#include "cerium/plan/explain.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

namespace expr_test {

using namespace evaluator_test;
using cerium::expr::CipherLeaf;
using cerium::expr::PlainLeaf;

// N = 2^11, 3 levels of two 28-bit primes (scale 2^56), 2 digits.
inline CkksConfig config() { return toy(11, 3, 2, 2); }

// The precision bound of test_evaluator.cpp for this configuration: log2(scale) - log2(N) - 9 bits.
inline double bound() { return 28.0 * 2 - 11 - 9; }

inline Fixture& fixture() {
  static Fixture f(config(), {.relinearization = true, .rotations = {1, 2, 3, -3, 4, 8, 12}, .conjugation = true});
  return f;
}

}  // namespace expr_test
