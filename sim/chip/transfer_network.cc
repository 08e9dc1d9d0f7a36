#include "sim/chip/transfer_network.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/check.h"

namespace tpusim::sim {
namespace {

__extension__ typedef unsigned __int128 U128;

}  // namespace

TransferNetwork::TransferNetwork(std::string path, StatRegistry& stats)
    : path_(std::move(path)), stats_(stats) {}

int TransferNetwork::AddResource(const std::string& path, double bytes_per_cycle) {
  TPUSIM_CHECK(bytes_per_cycle > 0) << path << ": bandwidth must be positive";
  Resource r;
  r.path = path;
  r.rate_fp = static_cast<uint64_t>(std::llround(std::ldexp(bytes_per_cycle, kFracBits)));
  if (r.rate_fp == 0) r.rate_fp = 1;
  StatGroup& g = stats_.AddGroup(path);
  r.busy_cycles =
      g.Add("busy_cycles", StatUnit::kCycles, "cycles with at least one transfer active");
  r.bytes_read = g.Add("bytes_read", StatUnit::kBytes, "bytes read from this memory");
  r.bytes_written = g.Add("bytes_written", StatUnit::kBytes, "bytes written to this memory");
  r.bytes = g.Add("bytes", StatUnit::kBytes, "bytes carried (read + written + through)");
  resources_.push_back(std::move(r));
  return static_cast<int>(resources_.size()) - 1;
}

TransferNetwork::Connection TransferNetwork::Connect(Cycles issue_cycles, TagKind tags, int core) {
  const auto number = static_cast<uint32_t>(requests_.size());
  requests_.emplace_back(issue_cycles.value() == 0 ? Cycles(1) : issue_cycles)
      .set_receiver(this, number);
  dones_.emplace_back(Cycles(1));
  tag_kinds_.emplace_back(tags, core);
  return Connection{&requests_.back(), &dones_.back(), static_cast<int>(dones_.size()) - 1};
}

void TransferNetwork::Delivered(uint32_t port, Cycles at) {
  requested_.emplace(at.value(), port);
  Wake(at);
}

void TransferNetwork::Advance(Active& a, Cycles now) {
  if (now <= a.last) return;
  if (a.remaining_fp != 0) {
    U128 total = static_cast<U128>(a.num) * (now - a.last).value() + a.carry;
    U128 served = total / a.den;
    a.carry = static_cast<uint64_t>(total % a.den);
    a.remaining_fp = served >= a.remaining_fp ? 0 : a.remaining_fp - static_cast<uint64_t>(served);
  }
  a.last = now;
}

void TransferNetwork::AccountBusy(Resource& r, Cycles now) {
  if (now <= r.busy_from) return;
  if (r.active > 0) r.busy_cycles->Add((now - r.busy_from).value());
  r.busy_from = now;
}

void TransferNetwork::Recompute(uint64_t id, Active& a, Cycles now) {
  uint64_t num = 0, den = 1;
  bool first = true;
  for (const ResourceUse& u : a.uses) {
    const Resource& r = resources_[u.resource];
    // share r.rate_fp / r.active; keep the smallest (compare by cross-multiplying).
    if (first || static_cast<U128>(r.rate_fp) * den < static_cast<U128>(num) * r.active) {
      num = r.rate_fp;
      den = r.active;
      first = false;
    }
  }
  if (den != a.den) a.carry = static_cast<uint64_t>(static_cast<U128>(a.carry) * den / a.den);
  a.num = num;
  a.den = den;
  // Smallest dt >= 1 with (num * dt + carry) / den >= remaining.
  U128 need = static_cast<U128>(a.remaining_fp) * a.den - a.carry;
  U128 dt = (need + a.num - 1) / a.num;
  if (dt == 0) dt = 1;
  a.done = now + Cycles(static_cast<uint64_t>(dt));
  completions_.emplace(a.done.value(), id);
}

void TransferNetwork::Complete(uint64_t id, Cycles now, std::vector<int>& touched) {
  auto it = active_.find(id);
  Active& a = it->second;
  Advance(a, now);
  TPUSIM_CHECK(a.remaining_fp == 0) << "transfer completed with bytes left";
  for (const ResourceUse& u : a.uses) {
    Resource& r = resources_[u.resource];
    AccountBusy(r, now);
    --r.active;
    r.users.erase(std::find(r.users.begin(), r.users.end(), id));
    touched.push_back(u.resource);
    r.bytes->Add(a.bytes);
    if (u.kind == UseKind::kRead) r.bytes_read->Add(a.bytes);
    if (u.kind == UseKind::kWrite) r.bytes_written->Add(a.bytes);
  }
  Cycles extra(a.latency.value() > 0 ? a.latency.value() - 1 : 0);
  dones_[a.conn].Send(now, TransferDone{a.tag, now}, extra);
  if (a.notify >= 0) dones_[a.notify].Send(now, TransferDone{a.notify_tag, now}, extra);
  active_.erase(it);
}

void TransferNetwork::Accept(size_t conn, TransferRequest req, Cycles now,
                             std::vector<int>& touched) {
  TPUSIM_CHECK(!req.uses.empty()) << "transfer without a resource";
  if (req.bytes.value() == 0) {
    Cycles extra(req.latency.value() > 0 ? req.latency.value() - 1 : 0);
    dones_[conn].Send(now, TransferDone{req.tag, now}, extra);
    if (req.notify >= 0) dones_[req.notify].Send(now, TransferDone{req.notify_tag, now}, extra);
    return;
  }
  const uint64_t id = next_id_++;
  Active& a = active_[id];
  a.tag = req.tag;
  a.conn = conn;
  a.bytes = req.bytes.value();
  TPUSIM_CHECK(a.bytes < (uint64_t{1} << (64 - kFracBits))) << "transfer too large";
  a.remaining_fp = a.bytes << kFracBits;
  a.uses = std::move(req.uses);
  a.latency = req.latency;
  a.notify = req.notify;
  a.notify_tag = req.notify_tag;
  a.last = now;
  TPUSIM_CHECK(a.notify < static_cast<int>(dones_.size()));
  for (const ResourceUse& u : a.uses) {
    TPUSIM_CHECK(u.resource >= 0 && u.resource < resource_count());
    Resource& r = resources_[u.resource];
    AccountBusy(r, now);
    ++r.active;
    r.users.push_back(id);
    touched.push_back(u.resource);
  }
}

void TransferNetwork::Step(Cycles now) {
  last_ = now;
  std::vector<int> touched;  // resources whose number of transfers changed
  // Completions, in arrival order.
  std::vector<uint64_t> done;
  while (!completions_.empty() && completions_.top().first <= now.value()) {
    const auto [cycle, id] = completions_.top();
    completions_.pop();
    auto it = active_.find(id);
    if (it != active_.end() && it->second.done.value() == cycle) done.push_back(id);
  }
  std::sort(done.begin(), done.end());
  done.erase(std::unique(done.begin(), done.end()), done.end());
  for (uint64_t id : done) Complete(id, now, touched);
  // New requests, connection by connection (a fixed order, independent of the step order).
  std::vector<uint64_t> conns;
  while (!requested_.empty() && requested_.top().first <= now.value()) {
    conns.push_back(requested_.top().second);
    requested_.pop();
  }
  std::sort(conns.begin(), conns.end());
  conns.erase(std::unique(conns.begin(), conns.end()), conns.end());
  for (uint64_t c : conns) {
    while (requests_[c].HasReady(now)) Accept(c, requests_[c].Pop(now), now, touched);
    if (!requests_[c].empty()) requested_.emplace(requests_[c].NextArrival().value(), c);
  }
  if (!touched.empty()) {
    // Every transfer on a resource whose count changed gets its new share (the others' shares
    // are unchanged); its progress so far is at the old share.
    std::vector<uint64_t> ids;
    for (int r : touched) {
      const auto& users = resources_[r].users;
      ids.insert(ids.end(), users.begin(), users.end());
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (uint64_t id : ids) {
      Active& a = active_.at(id);
      Advance(a, now);
      Recompute(id, a, now);
    }
    if (trace_ != nullptr) TraceRates(now);
  }
  DropStale();
}

void TransferNetwork::DropStale() {
  while (!completions_.empty()) {
    const auto [cycle, id] = completions_.top();
    auto it = active_.find(id);
    if (it != active_.end() && it->second.done.value() == cycle) break;
    completions_.pop();
  }
  while (!requested_.empty() &&
         requests_[requested_.top().second].NextArrival().value() != requested_.top().first) {
    requested_.pop();
  }
}

void TransferNetwork::TraceRates(Cycles now) {
  std::vector<double> rate(resources_.size(), 0.0);
  for (const auto& [id, a] : active_) {
    if (a.remaining_fp == 0) continue;
    const double bytes_per_cycle =
        std::ldexp(static_cast<double>(a.num) / static_cast<double>(a.den), -kFracBits);
    for (const ResourceUse& u : a.uses) rate[static_cast<size_t>(u.resource)] += bytes_per_cycle;
  }
  traced_rate_.resize(resources_.size(), 0.0);
  for (size_t r = 0; r < rate.size(); ++r) {
    if (rate[r] == traced_rate_[r]) continue;
    traced_rate_[r] = rate[r];
    trace_->Bandwidth(static_cast<int>(r), now.value(), rate[r]);
  }
}

Cycles TransferNetwork::NextWork(Cycles now) const {
  Cycles next = kNever;
  if (!requested_.empty()) next = Cycles(requested_.top().first);
  if (!completions_.empty()) next = EarliestOf(next, Cycles(completions_.top().first));
  if (next <= now) next = now + Cycles(1);
  return next;
}

void TransferNetwork::Sync(Cycles now) {
  for (auto& [id, a] : active_) Advance(a, now);
  for (Resource& r : resources_) AccountBusy(r, now);
  last_ = now;
}

void TransferNetwork::RebuildHeaps() {
  completions_ = {};
  requested_ = {};
  for (const auto& [id, a] : active_) completions_.emplace(a.done.value(), id);
  for (size_t c = 0; c < requests_.size(); ++c) {
    if (!requests_[c].empty()) requested_.emplace(requests_[c].NextArrival().value(), c);
  }
}

void TransferNetwork::WriteTag(StateWriter& w, size_t conn, uint64_t tag) const {
  const auto [kind, core] = tag_kinds_.at(conn);
  switch (kind) {
    case TagKind::kFlag:
      w.Value(tag);
      break;
    case TagKind::kSeq:
      w.Seq(core, tag);
      break;
    case TagKind::kCollective:
      w.Instance(tag >> 20);
      w.Value(tag & ((uint64_t{1} << 20) - 1));
      break;
  }
}

void TransferNetwork::WriteRequest(StateWriter& w, size_t conn, const TransferRequest& r) const {
  WriteTag(w, conn, r.tag);
  w.Value(r.bytes.value());
  w.Value(r.uses.size());
  for (const ResourceUse& u : r.uses) {
    w.Value(static_cast<uint64_t>(u.resource));
    w.Value(static_cast<uint64_t>(u.kind));
  }
  w.Value(r.latency.value());
  w.Value(static_cast<uint64_t>(static_cast<int64_t>(r.notify)));
  if (r.notify >= 0) WriteTag(w, static_cast<size_t>(r.notify), r.notify_tag);
}

bool TransferNetwork::SaveState(StateWriter& w) const {
  if (trace_ != nullptr) return false;
  w.Time(last_);
  for (size_t c = 0; c < requests_.size(); ++c) {
    requests_[c].Save(
        w, [this, c](StateWriter& sw, const TransferRequest& r) { WriteRequest(sw, c, r); });
    dones_[c].Save(w, [this, c](StateWriter& sw, const TransferDone& d) {
      WriteTag(sw, c, d.tag);
      sw.Time(d.last_byte);
    });
  }
  w.Value(active_.size());
  for (const auto& [id, a] : active_) {
    WriteTag(w, a.conn, a.tag);
    w.Value(a.conn);
    w.Value(a.bytes);
    w.Value(a.remaining_fp);
    w.Value(a.uses.size());
    for (const ResourceUse& u : a.uses) {
      w.Value(static_cast<uint64_t>(u.resource));
      w.Value(static_cast<uint64_t>(u.kind));
    }
    w.Value(a.latency.value());
    w.Value(static_cast<uint64_t>(static_cast<int64_t>(a.notify)));
    if (a.notify >= 0) WriteTag(w, static_cast<size_t>(a.notify), a.notify_tag);
    w.Value(a.num);
    w.Value(a.den);
    w.Value(a.carry);
  }
  for (const Resource& r : resources_) w.Value(r.active);
  return true;
}

void TransferNetwork::ShiftState(Cycles delta) {
  last_ = ShiftTime(last_, delta);
  for (auto& [id, a] : active_) {
    a.last += Cycles(delta);
    a.done += Cycles(delta);
  }
  for (Resource& r : resources_) r.busy_from += Cycles(delta);
  for (auto& p : requests_) p.Shift(delta);
  for (auto& p : dones_) {
    p.Shift(delta, [delta](TransferDone& d) { d.last_byte = ShiftTime(d.last_byte, delta); });
  }
  RebuildHeaps();
}

}  // namespace tpusim::sim
