#pragma once
// The terms of a flattened sum (plan/lower.hpp): a chain of + over ciphertext expressions, or a runtime sum, is
// cut into its terms so that the products among them can be accumulated in one fused pass per polynomial.

#include "cerium/expr/node.hpp"

namespace cerium::plan {

template <class Value>
struct Term {
  enum class Kind {
    value,           // any ciphertext expression, already evaluated into a
    plain_product,   // a * plain (a evaluated, the plaintext leaf by address: it lives in the expression)
    cipher_product,  // a (x) b, both 2-part: a tensor product left at 3 parts
  };
  Kind kind = Kind::value;
  Value a{};
  Value b{};
  const expr::PlainLeaf* plain = nullptr;
};

}  // namespace cerium::plan
