// Must not compile: a runtime sum of plaintext terms (sum them in the clear, then encode). With CERIUM_CONTROL
// defined the terms are ciphertexts and the code must compile, so the test fails for the right reason only.
#include <vector>

#include "cerium/expr/expr.hpp"

int main() {
#ifdef CERIUM_CONTROL
  using Leaf = cerium::expr::CipherLeaf;
#else
  using Leaf = cerium::expr::PlainLeaf;
#endif
  std::vector<Leaf> terms(2);
  auto e = cerium::expr::sum(std::move(terms));
  (void)e;
}
