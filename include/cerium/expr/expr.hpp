#pragma once
// The eDSL in one include. `using namespace cerium;` brings the builders; the operators are found through the
// node types (argument-dependent lookup).

#include "cerium/expr/node.hpp"
#include "cerium/expr/operators.hpp"
#include "cerium/expr/traits.hpp"

namespace cerium {
using expr::conjugate;
using expr::constant;
using expr::integer;
using expr::polynomial;
using expr::sum;
using expr::level_down;
using expr::lift;
using expr::relinearize;
using expr::rescale;
using expr::rotate;
using expr::sum_rotations;
}  // namespace cerium
