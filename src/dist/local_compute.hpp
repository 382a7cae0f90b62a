#pragma once
// Where a rank of a sharded backend computes its own limbs: the CPU backend's routines on host memory, or the
// CUDA backend's on one GPU. dist::ShardedBackend does the sharding (which limbs are here, what crosses ranks)
// and hands every limb-local computation to one of these, on polynomials over the primes this rank holds.
//
// Why an abstract class: the device is a run-time choice of ShardedOptions, and one sharded backend type keeps the
// evaluator, the bootstrapper and the program executor one instantiation for CPU and GPU ranks alike; a virtual
// call is nothing beside the collectives and kernels around it.

#include <array>
#include <cstdint>
#include <memory>
#include <span>

#include "cerium/core/device.hpp"
#include "cerium/ring/automorphism.hpp"
#include "cerium/ring/basis_conversion.hpp"
#include "cerium/ring/rns_poly.hpp"
#include "cerium/rlwe/context.hpp"

namespace cerium::dist {

// The limb-local operations of one rank (their meaning as in backend::PolyBackend), on polynomials of this rank's
// device. With multi_shard() false, every polynomial passed is one shard (a contiguous run of limbs).
class LocalCompute {
 public:
  virtual ~LocalCompute() = default;

  virtual Device device() const = 0;      // where the limbs live and the work runs
  virtual bool multi_shard() const = 0;   // takes polynomials of several shards (views of scattered limbs)
  virtual void synchronize() const = 0;   // waits for the work queued so far
  virtual ring::RnsPoly place(ring::RnsPoly&& host) const = 0;  // a host polynomial onto device()

  virtual void add(ring::RnsPoly& x, const ring::RnsPoly& y) const = 0;
  virtual void sub(ring::RnsPoly& x, const ring::RnsPoly& y) const = 0;
  virtual void negate(ring::RnsPoly& x) const = 0;
  virtual void multiply(ring::RnsPoly& x, const ring::RnsPoly& y) const = 0;
  virtual void multiply_accumulate(ring::RnsPoly& x, const ring::RnsPoly& y, const ring::RnsPoly& z) const = 0;
  virtual void multiply_accumulate_many(ring::RnsPoly& out, std::span<const ring::RnsPoly* const> a,
                                        std::span<const ring::RnsPoly* const> b, bool accumulate) const = 0;
  virtual void linear_combination(ring::RnsPoly& out, std::span<const ring::RnsPoly* const> a,
                                  std::span<const ring::RnsPoly* const> b, std::span<const ring::RnsPoly* const> c,
                                  std::span<const std::uint32_t> scalars, bool accumulate) const = 0;
  virtual std::array<ring::RnsPoly, 2> tensor(ring::RnsPoly& x0, const ring::RnsPoly& x1, const ring::RnsPoly& y0,
                                              const ring::RnsPoly& y1) const = 0;
  virtual void multiply_scalar(ring::RnsPoly& x, std::span<const std::uint32_t> per_limb) const = 0;
  virtual void add_scalar(ring::RnsPoly& x, std::span<const std::uint32_t> per_limb) const = 0;
  virtual void multiply_integer(ring::RnsPoly& x, std::int64_t integer) const = 0;
  virtual void to_ntt(ring::RnsPoly& x) const = 0;
  virtual void to_coeff(ring::RnsPoly& x) const = 0;
  virtual ring::RnsPoly automorphism(const ring::Automorphism& automorphism, const ring::RnsPoly& y) const = 0;
  // x over rescaler.basis() divided by its dropped primes, in place (over rescaler.kept() after).
  virtual void rescale(const ring::Rescaler& rescaler, ring::RnsPoly& x) const = 0;
  virtual ring::RnsPoly mod_down(const ring::ModDown& mod_down, const ring::RnsPoly& y) const = 0;
  virtual ring::RnsPoly mod_raise(const ring::RnsPoly& y, const ring::RnsBasisPtr& basis) const = 0;
  // Fast basis conversion (ring::BasisConverter's words) of y, in coefficient form, to the primes of `to`.
  virtual ring::RnsPoly convert_basis(const ring::RnsPoly& y, const ring::RnsBasisPtr& to) const = 0;
};

// The forwarding of LocalCompute to a backend B (backend::CpuBackend, backend::CudaBackend); the subclasses
// below add what differs (device, multi-shard views, basis conversion).
template <class B>
class LocalComputeOf : public LocalCompute {
 public:
  explicit LocalComputeOf(B backend) : backend_(std::move(backend)) {}

  void add(ring::RnsPoly& x, const ring::RnsPoly& y) const override { backend_.add(x, y); }
  void sub(ring::RnsPoly& x, const ring::RnsPoly& y) const override { backend_.sub(x, y); }
  void negate(ring::RnsPoly& x) const override { backend_.negate(x); }
  void multiply(ring::RnsPoly& x, const ring::RnsPoly& y) const override { backend_.multiply(x, y); }
  void multiply_accumulate(ring::RnsPoly& x, const ring::RnsPoly& y, const ring::RnsPoly& z) const override {
    backend_.multiply_accumulate(x, y, z);
  }
  void multiply_accumulate_many(ring::RnsPoly& out, std::span<const ring::RnsPoly* const> a,
                                std::span<const ring::RnsPoly* const> b, bool accumulate) const override {
    backend_.multiply_accumulate_many(out, a, b, accumulate);
  }
  void linear_combination(ring::RnsPoly& out, std::span<const ring::RnsPoly* const> a,
                          std::span<const ring::RnsPoly* const> b, std::span<const ring::RnsPoly* const> c,
                          std::span<const std::uint32_t> scalars, bool accumulate) const override {
    backend_.linear_combination(out, a, b, c, scalars, accumulate);
  }
  std::array<ring::RnsPoly, 2> tensor(ring::RnsPoly& x0, const ring::RnsPoly& x1, const ring::RnsPoly& y0,
                                      const ring::RnsPoly& y1) const override {
    return backend_.tensor(x0, x1, y0, y1);
  }
  void multiply_scalar(ring::RnsPoly& x, std::span<const std::uint32_t> per_limb) const override {
    backend_.multiply_scalar(x, per_limb);
  }
  void add_scalar(ring::RnsPoly& x, std::span<const std::uint32_t> per_limb) const override {
    backend_.add_scalar(x, per_limb);
  }
  void multiply_integer(ring::RnsPoly& x, std::int64_t integer) const override {
    backend_.multiply_integer(x, integer);
  }
  void to_ntt(ring::RnsPoly& x) const override { backend_.to_ntt(x); }
  void to_coeff(ring::RnsPoly& x) const override { backend_.to_coeff(x); }
  ring::RnsPoly automorphism(const ring::Automorphism& automorphism, const ring::RnsPoly& y) const override {
    return backend_.automorphism(automorphism, y);
  }
  void rescale(const ring::Rescaler& rescaler, ring::RnsPoly& x) const override { backend_.rescale(rescaler, x); }
  ring::RnsPoly mod_down(const ring::ModDown& mod_down, const ring::RnsPoly& y) const override {
    return backend_.mod_down(mod_down, y);
  }
  ring::RnsPoly mod_raise(const ring::RnsPoly& y, const ring::RnsBasisPtr& basis) const override {
    return backend_.mod_raise(y, basis);
  }
  ring::RnsPoly place(ring::RnsPoly&& host) const override { return backend_.place(std::move(host)); }

 protected:
  const B& backend() const { return backend_; }

 private:
  B backend_;
};

// The CPU backend's routines on host memory (views of scattered limbs allowed).
std::unique_ptr<LocalCompute> make_cpu_local_compute();
// The CUDA backend's on device `device` for `context`'s primes: UnsupportedError where Cerium was built without
// the CUDA backend (src/dist/cuda/ defines it where it is built).
std::unique_ptr<LocalCompute> make_cuda_local_compute(rlwe::ContextPtr context, int device);

}  // namespace cerium::dist
