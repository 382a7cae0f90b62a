// Must not compile: adding two plain operands (no ciphertext: fold them in the clear). With CERIUM_CONTROL
// defined one side is a ciphertext and it must compile.
#include "cerium/expr/expr.hpp"

int main() {
#ifdef CERIUM_CONTROL
  auto a = cerium::expr::CipherLeaf{};
#else
  auto a = cerium::expr::PlainLeaf{};
#endif
  auto e = a + cerium::expr::PlainLeaf{};
  (void)e;
}
