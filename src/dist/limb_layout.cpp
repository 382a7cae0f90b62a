#include "cerium/dist/limb_layout.hpp"

#include "cerium/core/check.hpp"

namespace cerium::dist {

namespace {

// count items in contiguous blocks over ranks, earlier ranks taking the extra ones.
int block_owner(std::size_t index, std::size_t count, int ranks) {
  const std::size_t base = count / static_cast<std::size_t>(ranks);
  const std::size_t extra = count % static_cast<std::size_t>(ranks);
  const std::size_t big = extra * (base + 1);  // items in the blocks of base + 1
  if (index < big) return static_cast<int>(index / (base + 1));
  return static_cast<int>(extra + (index - big) / base);
}

}  // namespace

LimbLayout::LimbLayout(const rlwe::Context& context, int ranks, int rank, Device local_device, LayoutPolicy policy)
    : ranks_(ranks), rank_(rank), local_device_(local_device) {
  require(ranks >= 1 && rank >= 0 && rank < ranks, "rank {} of a mesh of {} ranks", rank, ranks);
  require(!local_device.is_remote(), "a rank computes on its own device, not on {}", to_string(local_device));
  const auto& q = context.ladder().q_primes;
  const auto& p = context.ladder().p_primes;
  const auto owner = [&](std::size_t i, std::size_t count) {
    return policy == LayoutPolicy::balanced ? static_cast<int>(i % static_cast<std::size_t>(ranks))
                                            : block_owner(i, count, ranks);
  };
  for (std::size_t i = 0; i < q.size(); ++i) owners_[q[i]] = owner(i, q.size());
  for (std::size_t i = 0; i < p.size(); ++i) owners_[p[i]] = owner(i, p.size());
}

int LimbLayout::owner(std::uint32_t prime) const {
  const auto it = owners_.find(prime);
  require(it != owners_.end(),
          "prime {} belongs to none of the mesh's limbs (the layout covers the context's Q and P primes): a "
          "polynomial of another context cannot be sharded over this mesh",
          prime);
  return it->second;
}

std::vector<ring::ShardSpec> LimbLayout::shards(const ring::RnsBasis& basis) const {
  std::vector<ring::ShardSpec> specs;
  int current = -1;
  for (std::size_t i = 0; i < basis.size(); ++i) {
    const int o = owner(basis.prime(i));
    if (o != current) {
      specs.push_back({o == rank_ ? local_device_ : Device::remote(o), 0});
      current = o;
    }
    ++specs.back().limb_count;
  }
  return specs;
}

std::vector<std::size_t> LimbLayout::positions(const ring::RnsBasis& basis, int rank) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < basis.size(); ++i) {
    if (owner(basis.prime(i)) == rank) out.push_back(i);
  }
  return out;
}

std::vector<std::size_t> LimbLayout::counts(const ring::RnsBasis& basis) const {
  std::vector<std::size_t> out(static_cast<std::size_t>(ranks_), 0);
  for (std::size_t i = 0; i < basis.size(); ++i) ++out[static_cast<std::size_t>(owner(basis.prime(i)))];
  return out;
}

}  // namespace cerium::dist
