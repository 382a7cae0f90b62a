#include "cerium/dist/traffic_model.hpp"

#include <algorithm>
#include <numeric>

#include "cerium/core/check.hpp"

namespace cerium::dist {

std::uint64_t RankBytes::total_sent() const { return std::accumulate(sent.begin(), sent.end(), std::uint64_t{0}); }
std::uint64_t RankBytes::max_received() const {
  return received.empty() ? 0 : *std::max_element(received.begin(), received.end());
}
RankBytes& RankBytes::operator+=(const RankBytes& other) {
  if (sent.empty()) *this = RankBytes(other.sent.size());
  require(sent.size() == other.sent.size(), "adding traffic of {} and {} ranks", sent.size(), other.sent.size());
  for (std::size_t r = 0; r < sent.size(); ++r) {
    sent[r] += other.sent[r];
    received[r] += other.received[r];
  }
  calls += other.calls;
  return *this;
}
RankBytes operator*(RankBytes a, std::uint64_t times) {
  for (auto& s : a.sent) s *= times;
  for (auto& r : a.received) r *= times;
  a.calls *= times;
  return a;
}

LimbTraffic::LimbTraffic(rlwe::ContextPtr context, int ranks, LayoutPolicy policy)
    : context_(std::move(context)), ranks_(ranks) {
  require(context_ != nullptr && ranks >= 1, "a traffic model needs a context and at least one rank");
  for (int r = 0; r < ranks; ++r) layouts_.emplace_back(*context_, ranks, r, Device::cpu(), policy);
}

RankBytes LimbTraffic::gather(const ring::RnsBasis& basis, std::span<const std::size_t> positions,
                              std::size_t polys) const {
  RankBytes bytes(static_cast<std::size_t>(ranks_));
  const std::uint64_t limb_bytes = 4ull * basis.ring_degree() * polys;
  std::uint64_t all = 0;
  for (std::size_t p : positions) {
    const auto owner = static_cast<std::size_t>(layouts_[0].owner(basis.prime(p)));
    bytes.sent[owner] += limb_bytes * static_cast<std::uint64_t>(ranks_ - 1);
    bytes.received[owner] -= limb_bytes;  // offset below: everyone receives every limb but its own
    all += limb_bytes;
  }
  for (auto& r : bytes.received) r += all;
  bytes.calls = 1;
  return bytes;
}

RankBytes LimbTraffic::rescale(int level, std::size_t parts) const {
  const ring::RnsBasis& basis = *context_->q_basis(level);
  const std::size_t dropped = context_->rescaler(level).dropped();
  std::vector<std::size_t> positions;
  for (std::size_t i = basis.size() - dropped; i < basis.size(); ++i) positions.push_back(i);
  return gather(basis, positions, parts);
}

RankBytes LimbTraffic::mod_up(int level) const { return download(*context_->q_basis(level)); }

RankBytes LimbTraffic::mod_down(int level, std::size_t polys) const {
  const ring::RnsBasis& qp = *context_->qp_basis(level);
  std::vector<std::size_t> positions;
  for (std::size_t i = context_->limbs_at(level); i < qp.size(); ++i) positions.push_back(i);
  return gather(qp, positions, polys);
}

RankBytes LimbTraffic::key_switch(int level, bool rescaled) const {
  RankBytes bytes = mod_up(level);
  bytes += mod_down(level, 2);
  if (rescaled) bytes += rescale(level, 2);
  return bytes;
}

RankBytes LimbTraffic::hoisted_rotations(int level, std::size_t rotations) const {
  RankBytes bytes = mod_up(level);
  bytes += mod_down(level, 2) * rotations;
  return bytes;
}

RankBytes LimbTraffic::download(const ring::RnsBasis& basis, std::size_t polys) const {
  std::vector<std::size_t> positions(basis.size());
  std::iota(positions.begin(), positions.end(), std::size_t{0});
  return gather(basis, positions, polys);
}

}  // namespace cerium::dist
