#include "cuda_backend_state.hpp"

#include <algorithm>
#include <complex>

#include "cerium/backend/cuda/upload.hpp"
#include "cerium/core/check.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/ring/rns_basis.hpp"

namespace cerium::backend {
namespace {

using math::u32;

CudaBackend::State::Primes primes_of(const ring::RnsBasis& basis) {
  return {basis.primes().begin(), basis.primes().end()};
}

// Finds key in cache or builds it (under the state's mutex).
template <class Map, class Key, class Make>
const auto& find_or_build(std::mutex& mutex, Map& cache, const Key& key, Make make) {
  const std::lock_guard lock(mutex);
  auto found = cache.find(key);
  if (found == cache.end()) found = cache.emplace(key, make()).first;
  return *found->second;
}

}  // namespace

const cuda::ElementwisePlan& CudaBackend::State::elementwise_plan(const ring::RnsBasis& basis) {
  {
    const std::lock_guard lock(mutex);
    const auto found = elementwise_by_address.find(&basis);
    if (found != elementwise_by_address.end() &&
        std::equal(found->second.first.begin(), found->second.first.end(), basis.primes().begin(),
                   basis.primes().end())) {
      return *found->second.second;
    }
  }
  const auto& plan = find_or_build(mutex, elementwise, primes_of(basis),
                                   [&] { return std::make_unique<cuda::ElementwisePlan>(basis); });
  const std::lock_guard lock(mutex);
  elementwise_by_address[&basis] = {primes_of(basis), &plan};
  return plan;
}

const cuda::RescalePlan& CudaBackend::State::rescale_plan(const ring::Rescaler& rescaler) {
  const auto key = std::make_tuple(primes_of(rescaler.basis()), rescaler.dropped(), static_cast<int>(rescaler.rounding()));
  return find_or_build(mutex, rescale, key, [&] {
    const cuda::RescaleConfig config{.dropped = rescaler.dropped(), .rounding = rescaler.rounding(), .ntt_form = false};
    return std::make_unique<cuda::RescalePlan>(rescaler.basis(), config);
  });
}

const cuda::ModDownCorrectionPlan& CudaBackend::State::mod_down_ntt_plan(const ring::ModDown& mod_down) {
  const auto key = std::make_tuple(primes_of(mod_down.full()), primes_of(mod_down.kept()),
                                   static_cast<int>(mod_down.rounding()));
  return find_or_build(mutex, mod_down_ntt, key, [&] {
    return std::make_unique<cuda::ModDownCorrectionPlan>(mod_down.full(), mod_down.kept(), mod_down.rounding());
  });
}

const cuda::ModDownPlan& CudaBackend::State::mod_down_coefficient_plan(const ring::ModDown& mod_down) {
  const auto key = std::make_tuple(primes_of(mod_down.full()), primes_of(mod_down.kept()),
                                   static_cast<int>(mod_down.rounding()));
  return find_or_build(mutex, mod_down_coefficient, key, [&] {
    return std::make_unique<cuda::ModDownPlan>(mod_down.full(), mod_down.kept(), mod_down.rounding());
  });
}

const cuda::ModUpPlan& CudaBackend::State::mod_up_plan(int level, std::size_t digit) {
  return find_or_build(mutex, mod_up, std::make_pair(level, digit), [&] {
    const ring::ModUp& m = context->mod_up(level, digit);
    return std::make_unique<cuda::ModUpPlan>(m.digit(), m.target());
  });
}

const cuda::BasisConversionPlan& CudaBackend::State::conversion_plan(const ring::RnsBasis& from,
                                                                    const ring::RnsBasis& to) {
  return find_or_build(mutex, conversion, std::make_pair(primes_of(from), primes_of(to)),
                       [&] { return std::make_unique<cuda::BasisConversionPlan>(from, to); });
}

const cuda::KeySwitchInnerProductPlan& CudaBackend::State::inner_product_plan(int level) {
  return find_or_build(mutex, inner_product, level, [&] {
    const cuda::KeySwitchLayout layout{.q_limbs = context->limbs_at(level),
                                       .key_q_limbs = context->ladder().q_primes.size()};
    return std::make_unique<cuda::KeySwitchInnerProductPlan>(*context->qp_basis(level), layout);
  });
}

const cuda::AutomorphismPlan& CudaBackend::State::automorphism_plan(const ring::Automorphism& a) {
  require<MismatchError>(a.n() == n, "an automorphism of degree {} cannot act on ring degree {}", a.n(), n);
  return find_or_build(mutex, automorphism, a.galois_element(),
                       [&] { return std::make_unique<cuda::AutomorphismPlan>(a); });
}

const ModDownRescaleTables& CudaBackend::State::mod_down_rescale_tables(const ring::ModDown& mod_down,
                                                                        const ring::Rescaler& rescaler) {
  const auto key = std::make_pair(primes_of(mod_down.full()), rescaler.dropped());
  return find_or_build(mutex, mod_down_rescale, key, [&] {
    const ring::RnsBasis& q = rescaler.basis();
    const std::size_t limbs = q.size(), kept = rescaler.kept().size();
    auto tables = std::make_unique<ModDownRescaleTables>();
    tables->dropped = ring::make_basis(q.sub_basis(kept, limbs - kept));
    std::vector<u32> p_mod, pd_inverse(limbs, 0), d_inverse(limbs, 0);
    for (std::size_t i = 0; i < limbs; ++i) {
      const u32 qi = q.prime(i);
      const u32 p = mod_down.dropped().product_mod(q.modulus(i));
      if (i >= kept) {
        tables->p_mod_dropped.push_back(p);
        continue;
      }
      p_mod.push_back(p);
      d_inverse[i] = static_cast<u32>(math::inv_mod(tables->dropped->product_mod(q.modulus(i)), qi));
      pd_inverse[i] = static_cast<u32>(math::inv_mod(p, qi) * d_inverse[i] % qi);
    }
    tables->p_mod = cuda::DeviceScalars(q, p_mod, stream);
    tables->pd_inverse = cuda::DeviceScalars(q, pd_inverse, stream);
    tables->d_inverse = cuda::DeviceScalars(q, d_inverse, stream);
    return tables;
  });
}

const cuda::DeviceBuffer& CudaBackend::State::moduli_table(const ring::RnsBasis& basis) {
  return find_or_build(mutex, moduli, primes_of(basis), [&] {
    std::vector<math::Modulus> table;
    for (std::size_t i = 0; i < basis.size(); ++i) table.push_back(basis.modulus(i));
    return std::make_unique<cuda::DeviceBuffer>(cuda::upload_table<math::Modulus>(table));
  });
}

const cuda::DeviceBuffer& CudaBackend::State::fft_twiddle_table(const math::SpecialFftTables& tables) {
  return find_or_build(mutex, fft_twiddles, tables.slots(), [&] {
    const auto twiddles = tables.twiddles();
    return std::make_unique<cuda::DeviceBuffer>(cuda::upload_table<std::complex<double>>(twiddles));
  });
}

std::optional<std::vector<TableRun>> CudaBackend::State::runs(std::span<const std::uint32_t> primes) const {
  std::vector<TableRun> out;
  for (std::size_t i = 0; i < primes.size(); ++i) {
    const auto found = table_of_prime.find(primes[i]);
    if (found == table_of_prime.end()) return std::nullopt;
    if (!out.empty() && out.back().first_table + out.back().count == found->second) {
      ++out.back().count;
    } else {
      out.push_back({i, found->second, 1});
    }
  }
  return out;
}

const cuda::NttPlan& CudaBackend::State::foreign_ntt_plan(std::span<const std::uint32_t> primes) {
  const Primes key(primes.begin(), primes.end());
  return find_or_build(mutex, foreign_ntt, key, [&] {
    const auto basis = ring::make_basis(n, key);
    std::vector<math::NttTables> tables;
    for (std::size_t i = 0; i < basis->size(); ++i) tables.push_back(basis->ntt(i));
    return std::make_unique<cuda::NttPlan>(tables);
  });
}

template <bool Forward>
void CudaBackend::State::transform(std::uint32_t* data, std::span<const std::uint32_t> primes, std::size_t batch,
                                   const cuda::detail::NttFinish* finish, NttSkip skip,
                                   const cuda::NttBatchLayout& layout) {
  if (primes.empty() || batch == 0) return;
  const std::size_t period = primes.size();
  const auto run = [&](const cuda::NttPlan& plan, std::uint32_t* at, const cuda::NttTableMap& map, std::size_t limbs,
                       const cuda::detail::NttFinish* f, const cuda::NttBatchLayout& l) {
    if constexpr (Forward) {
      plan.forward(at, map, limbs, stream, f, l);
    } else {
      plan.inverse(at, map, limbs, stream, l);
    }
  };
  const auto with_skip = [&](cuda::NttTableMap map) {
    map.skip_stride = skip.stride;
    map.skip_width = skip.width;
    map.skip_limit = skip.limit;
    return map;
  };
  const auto found = runs(primes);
  if (!found) {
    run(foreign_ntt_plan(primes), data, with_skip({.period = period}), batch * period, finish, layout);
    return;
  }
  const auto& r = *found;
  // One or two runs of tables (Q_l, P, Q_l u P): every polynomial of the batch in one launch per pass.
  if (r.size() == 1) {
    run(*ntt, data, with_skip({.first_table = r[0].first_table, .period = period}), batch * period, finish, layout);
    return;
  }
  if (r.size() == 2 && r[1].first_table > r[0].first_table + r[0].count) {
    run(*ntt, data,
        with_skip({.first_table = r[0].first_table, .period = period, .split = r[0].count,
                   .shift = r[1].first_table - r[0].first_table - r[0].count}),
        batch * period, finish, layout);
    return;
  }
  // Otherwise run by run, polynomial by polynomial; a run that meets the skipped limbs is cut around them.
  require(skip.width == 0 || finish == nullptr, "an NTT cannot both skip limbs and finish");
  const std::size_t poly_stride = layout.poly_stride == 0 ? period * n : layout.poly_stride;
  const std::size_t source_stride = layout.source_stride == 0 ? period * n : layout.source_stride;
  for (std::size_t b = 0; b < batch; ++b) {
    // Limbs [begin, begin + count) of polynomial b as a batch of one.
    const auto limbs_of = [&](std::size_t first_table, std::size_t begin, std::size_t count,
                              const cuda::detail::NttFinish* f) {
      const cuda::NttBatchLayout part{
          .source = layout.source != nullptr ? layout.source + b * source_stride + begin * n : nullptr};
      run(*ntt, data + b * poly_stride + begin * n, {.first_table = first_table}, count, f, part);
    };
    const std::size_t skip_begin = b * skip.stride;
    const std::size_t skip_end = skip.width == 0 ? skip_begin : std::min(skip_begin + skip.width, skip.limit);
    for (const TableRun& t : r) {
      if (skip_end > skip_begin && finish == nullptr) {
        const std::size_t begin = t.first_limb, end = t.first_limb + t.count;
        const std::size_t cut_begin = std::clamp(skip_begin, begin, end), cut_end = std::clamp(skip_end, begin, end);
        if (cut_end > cut_begin) {
          if (cut_begin > begin) limbs_of(t.first_table, begin, cut_begin - begin, nullptr);
          if (end > cut_end) limbs_of(t.first_table + (cut_end - begin), cut_end, end - cut_end, nullptr);
          continue;
        }
      }
      cuda::detail::NttFinish part{};
      if (finish != nullptr) {
        const std::size_t offset = t.first_limb * n;
        part = *finish;
        part.minuend += b * finish->minuend_stride + offset;
        const bool adds = b < 2 && finish->addend[b] != nullptr;
        part.addend[0] = adds ? finish->addend[b] + offset : nullptr;
        part.addend[1] = nullptr;
        part.out += b * finish->out_stride + offset;
        part.scale += 2 * t.first_limb;
        if (part.addend_scale != nullptr) part.addend_scale += 2 * t.first_limb;
      }
      limbs_of(t.first_table, t.first_limb, t.count, finish != nullptr ? &part : nullptr);
    }
  }
}

void CudaBackend::State::ntt_forward(std::uint32_t* data, std::span<const std::uint32_t> primes, std::size_t batch,
                                     const cuda::detail::NttFinish* finish, NttSkip skip,
                                     const cuda::NttBatchLayout& layout) {
  transform<true>(data, primes, batch, finish, skip, layout);
}

const std::uint32_t* CudaBackend::State::forward_twiddles(std::span<const std::uint32_t> primes) {
  const auto found = runs(primes);
  if (found && found->size() == 1) return ntt->forward_twiddle_pairs((*found)[0].first_table);
  return foreign_ntt_plan(primes).forward_twiddle_pairs(0);
}

bool CudaBackend::State::ntt_forward_inner_product(std::uint32_t* data, std::span<const std::uint32_t> primes,
                                                   std::size_t batch, NttSkip skip,
                                                   const cuda::detail::InnerProductLaunch& inner_product) {
  if (primes.empty() || batch == 0 || batch > 4) return false;
  const std::size_t period = primes.size();
  cuda::NttTableMap map{.period = period, .skip_stride = skip.stride, .skip_width = skip.width,
                        .skip_limit = skip.limit};
  const auto found = runs(primes);
  const cuda::NttPlan* plan = ntt.get();
  if (!found) {
    plan = &foreign_ntt_plan(primes);
  } else if (found->size() == 1) {
    map.first_table = (*found)[0].first_table;
  } else if (found->size() == 2 && (*found)[1].first_table > (*found)[0].first_table + (*found)[0].count) {
    map.first_table = (*found)[0].first_table;
    map.split = (*found)[0].count;
    map.shift = (*found)[1].first_table - (*found)[0].first_table - (*found)[0].count;
  } else {
    return false;
  }
  plan->forward_inner_product(data, map, batch * period, stream, inner_product);
  return true;
}

void CudaBackend::State::ntt_inverse(std::uint32_t* data, std::span<const std::uint32_t> primes, std::size_t batch,
                                     const cuda::NttBatchLayout& layout) {
  transform<false>(data, primes, batch, nullptr, {}, layout);
}

}  // namespace cerium::backend
