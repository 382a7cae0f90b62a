// Must not compile: rotating a plaintext (rotate it in the clear before encoding). With CERIUM_CONTROL defined
// the same code rotates a ciphertext and must compile, so the test fails for the right reason only.
#include "cerium/expr/expr.hpp"

int main() {
#ifdef CERIUM_CONTROL
  auto leaf = cerium::expr::CipherLeaf{};
#else
  auto leaf = cerium::expr::PlainLeaf{};
#endif
  auto e = cerium::expr::rotate(leaf, 1);
  (void)e;
}
