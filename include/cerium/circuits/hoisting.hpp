#pragma once
// How a linear transform shares the work of its key switches (circuits/linear_transform.hpp), in a header of its
// own so that configurations (boot::BootstrapConfig) name it without the transform's templates.

namespace cerium::circuits {

// How the rotations of a linear transform share their key switches' ModUps and ModDowns.
enum class Hoisting {
  automatic,  // doubled for diagonals from values or a function, single for plaintexts given by the user
  single,     // one ModUp for the babies, a ModDown per rotation
  doubled,    // one ModUp for the babies, a ModDown per giant and one for all giants
};

}  // namespace cerium::circuits
