// Must not compile: a polynomial of a plaintext (evaluate it in the clear). With CERIUM_CONTROL defined the same
// code takes a ciphertext and must compile, so the test fails for the right reason only.
#include <array>

#include "cerium/expr/expr.hpp"

int main() {
#ifdef CERIUM_CONTROL
  auto leaf = cerium::expr::CipherLeaf{};
#else
  auto leaf = cerium::expr::PlainLeaf{};
#endif
  auto e = cerium::expr::polynomial(leaf, std::array{1.0, 2.0, 3.0});
  (void)e;
}
