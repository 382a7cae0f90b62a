// The counts come from one place (plan/counts.hpp, the lowering's walk, the power basis's schedule): the
// compile-time traits (elementwise_passes_v, key_switches_v) equal what the Tracer records (plan_stats) and what
// a machine records while eval actually runs the expression on the CPU backend (the same table, applied to the
// ciphertexts' real parts and to whether the fused pass really ran), over a range of expressions and every
// polynomial degree the parameters allow.

#include <array>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "cerium/plan/counts.hpp"
#include "cerium/plan/executor.hpp"
#include "cerium/plan/launch_traits.hpp"
#include "cerium/plan/lower.hpp"
#include "cerium/plan/power_basis_count.hpp"
#include "expr_test_support.hpp"
#include "support/catch.hpp"

using namespace expr_test;
using cerium::plan::Counter;
using cerium::plan::PlanStats;
using cerium::plan::Term;
using cerium::plan::TermKind;
using cerium::plan::TermShape;

namespace {

using Backend = cerium::backend::CpuBackend;

// The executor, each operation counted with the planner's table from the ciphertexts it really gets.
class CountingExecutor : public cerium::plan::Executor<Backend> {
 public:
  using Base = cerium::plan::Executor<Backend>;
  using Base::Base;
  Counter counter;

  Value reuse(const Value& v) {
    counter.reuse();
    return Base::reuse(v);
  }
  void add(Value& a, const Value& b) {
    counter.add(parts(a), parts(b));
    Base::add(a, b);
  }
  void sub(Value& a, const Value& b) {
    counter.add(parts(a), parts(b));
    Base::sub(a, b);
  }
  template <class P>
  void add(Value& a, const P& p) {
    counter.add_plain();
    Base::add(a, p);
  }
  template <class P>
  void sub(Value& a, const P& p) {
    counter.add_plain();
    Base::sub(a, p);
  }
  void negate(Value& a) {
    counter.negate(parts(a));
    Base::negate(a);
  }
  Value tensor(const Value& a, const Value& b) {
    counter.tensor();
    return Base::tensor(a, b);
  }
  template <class P>
  void multiply(Value& a, const P& p) {
    counter.multiply(parts(a));
    Base::multiply(a, p);
  }
  void relinearize(Value& a) {
    counter.relinearize(parts(a));
    Base::relinearize(a);
  }
  void rescale(Value& a) {
    counter.rescale();
    Base::rescale(a);
  }
  void relinearize_rescale(Value& a) {
    counter.relinearize_rescale(parts(a));
    Base::relinearize_rescale(a);
  }
  void conjugate(Value& a) {
    counter.key_switch();
    Base::conjugate(a);
  }
  Value rotate(const Value& a, std::int64_t steps) {
    counter.key_switch();  // the tests rotate by nontrivial steps
    return Base::rotate(a, steps);
  }
  template <class X>
  std::vector<Value> rotate_hoisted(const X& x, std::span<const std::int64_t> steps) {
    counter.rotate_hoisted(static_cast<int>(steps.size()));
    return Base::rotate_hoisted(x, steps);
  }
  bool fused_sum(std::span<Term<Value>> terms, Value& out) {
    const auto shapes = shapes_of(terms);
    if (!Base::fused_sum(terms, out)) return false;
    counter.fused_sum(shapes);
    return true;
  }
  bool fused_sum_rescaled(std::span<Term<Value>> terms, Value& out) {
    const auto shapes = shapes_of(terms);
    if (!Base::fused_sum_rescaled(terms, out)) return false;
    counter.fused_sum_rescaled(shapes);
    return true;
  }
  // The power basis's schedule, counted; its result checked against the schedule's level and parts below.
  Value polynomial(const Value& x, std::span<const double> coefficients, bool fuse) {
    cerium::plan::count_polynomial(counter, coefficients.size() - 1, fuse);
    return Base::polynomial(x, coefficients, fuse);
  }

 private:
  static std::vector<TermShape> shapes_of(std::span<const Term<Value>> terms) {
    std::vector<TermShape> out;
    for (const auto& t : terms)
      out.push_back({t.kind, t.kind == TermKind::cipher_product ? 3 : static_cast<int>(t.first().size()), t.negated});
    return out;
  }
};

// eval(e) on the CPU with the counting machine: the stats and the result.
template <class E>
std::pair<PlanStats, Ciphertext> run_counted(const Fixture& f, const E& e) {
  CountingExecutor machine(f.evaluator);
  cerium::plan::Lowering<CountingExecutor> lowering(machine);
  Ciphertext out = lowering.lower(e);
  return {machine.counter.stats, std::move(out)};
}

// The traits, the Tracer and the counted run agree on e.
template <class E>
void check_counts(const Fixture& f, const E& e) {
  const PlanStats traced = cerium::plan::plan_stats(e);
  const auto [ran, out] = run_counted(f, e);
  INFO(cerium::plan::explain(e));
  CHECK(traced.elementwise_passes == cerium::plan::elementwise_passes_v<E>);
  CHECK(ran.elementwise_passes == cerium::plan::elementwise_passes_v<E>);
  CHECK(traced.key_switches == cerium::expr::key_switches_v<E>);
  CHECK(ran.key_switches == traced.key_switches);
  CHECK(ran.relinearizations == traced.relinearizations);
  CHECK(ran.tensor_products == traced.tensor_products);
  CHECK(ran.rescales == traced.rescales);
  CHECK(ran.fused_sums == traced.fused_sums);
  CHECK(ran.folded_rescales == traced.folded_rescales);
  CHECK(out.size() == 2);
}

Fixture& deep_fixture() {  // 6 two-prime levels: polynomials up to degree 16 (depth 5)
  static Fixture f(toy(11, 6, 2, 2), {.relinearization = true});
  return f;
}

template <std::size_t Degree>
void check_polynomial(const Fixture& f, const Ciphertext& ct) {
  std::array<double, Degree + 1> c{};
  for (std::size_t k = 0; k <= Degree; ++k) c[k] = (k % 2 == 0 ? 0.5 : -0.5) / static_cast<double>(k + 1);
  const auto p = polynomial(lift(ct), c);
  INFO("degree " << Degree);
  check_counts(f, p);
  // The schedule's levels are the ones the run reaches.
  const auto [ran, out] = run_counted(f, p);
  CHECK(out.level() == ct.level() - cerium::expr::depth_v<decltype(p)>);
  CHECK(ran.relinearizations == cerium::expr::power_basis::key_switches(Degree, true));
}

template <std::size_t... D>
void check_polynomials(const Fixture& f, const Ciphertext& ct, std::index_sequence<D...>) {
  (check_polynomial<D + 1>(f, ct), ...);
}

}  // namespace

TEST_CASE("compile-time counts equal the traced plan and the counted run", "[expr][traits][counts]") {
  Fixture& f = fixture();
  auto rng = cerium_test::make_rng(18);
  const Values v = random_real(rng, f.max_slots());
  auto x = lift(f.encrypt(v)), y = lift(f.encrypt(v)), z = lift(f.encrypt(v)), u = lift(f.encrypt(v));
  auto w = lift(f.encoder.encode(v)), w2 = lift(f.encoder.encode(v));

  check_counts(f, x + y);
  check_counts(f, -(x + y) * w + z * w2 + 0.25);
  check_counts(f, 0.5 - x);
  check_counts(f, rescale(x * y + z * u - x * u));
  check_counts(f, x * y - z * u);
  check_counts(f, x * 0.5 + y * 0.25 - z * 0.125);
  check_counts(f, rescale(x * 0.5 + y * 0.25 - z * 0.125));
  check_counts(f, rescale(x * w + y * w2));
  check_counts(f, rescale(x * w - y * w2));
  check_counts(f, x * integer(2) - y * integer(3) + z);
  check_counts(f, sum_rotations(rescale(x * w), 1, 2, 3));
  check_counts(f, rescale(x * w + rotate(x, 1) * w2 + rotate(x, 2) * w));
  check_counts(f, conjugate(level_down(x, 1)) + level_down(rotate(y, 1), 1));
  check_counts(f, rescale(rescale(x * y) * rescale(z * u)));
  check_counts(f, rotate(rescale(x * y), 1) + rescale(z * u));
  check_counts(f, rescale(x * y) * 0.5 + rescale(z * u) * 0.25);
  check_counts(f, polynomial(rescale(x * y), std::array{0.1, 0.2, 0.3}));
  check_counts(f, polynomial(x, std::array{0.1, 0.2, 0.3, 0.4, 0.5}));
}

TEST_CASE("polynomial counts follow the power basis's schedule at every degree", "[expr][poly][counts]") {
  Fixture& f = deep_fixture();
  auto rng = cerium_test::make_rng(19);
  const Values v = random_real(rng, f.max_slots());
  check_polynomials(f, f.encrypt(v), std::make_index_sequence<16>{});
}
