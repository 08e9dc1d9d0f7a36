#include "sim/chip/transfer_network.h"

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
  requests_.emplace_back(issue_cycles.value() == 0 ? Cycles(1) : issue_cycles).set_receiver(this);
  dones_.emplace_back(Cycles(1));
  tag_kinds_.emplace_back(tags, core);
  return Connection{&requests_.back(), &dones_.back(), static_cast<int>(dones_.size()) - 1};
}

void TransferNetwork::Advance(Cycles now) {
  if (now <= last_) return;
  const uint64_t dt = (now - last_).value();
  for (Active& a : active_) {
    if (a.remaining_fp == 0) continue;
    U128 total = static_cast<U128>(a.num) * dt + a.carry;
    U128 served = total / a.den;
    a.carry = static_cast<uint64_t>(total % a.den);
    a.remaining_fp = served >= a.remaining_fp ? 0 : a.remaining_fp - static_cast<uint64_t>(served);
  }
  for (Resource& r : resources_) {
    if (r.active > 0) r.busy_cycles->Add(dt);
  }
  last_ = now;
}

void TransferNetwork::Recompute() {
  for (Active& a : active_) {
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
  }
}

void TransferNetwork::Step(Cycles now) {
  Advance(now);
  bool changed = false;
  // Completions, in arrival order.
  for (size_t i = 0; i < active_.size();) {
    Active& a = active_[i];
    if (a.remaining_fp != 0) {
      ++i;
      continue;
    }
    for (const ResourceUse& u : a.uses) {
      Resource& r = resources_[u.resource];
      --r.active;
      r.bytes->Add(a.bytes);
      if (u.kind == UseKind::kRead) r.bytes_read->Add(a.bytes);
      if (u.kind == UseKind::kWrite) r.bytes_written->Add(a.bytes);
    }
    Cycles extra(a.latency.value() > 0 ? a.latency.value() - 1 : 0);
    dones_[a.conn].Send(now, TransferDone{a.tag, now}, extra);
    if (a.notify >= 0) dones_[a.notify].Send(now, TransferDone{a.notify_tag, now}, extra);
    active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
    changed = true;
  }
  // New requests, connection by connection (a fixed order, independent of the step order).
  for (size_t c = 0; c < requests_.size(); ++c) {
    while (requests_[c].HasReady(now)) {
      TransferRequest req = requests_[c].Pop(now);
      TPUSIM_CHECK(!req.uses.empty()) << "transfer without a resource";
      if (req.bytes.value() == 0) {
        Cycles extra(req.latency.value() > 0 ? req.latency.value() - 1 : 0);
        dones_[c].Send(now, TransferDone{req.tag, now}, extra);
        if (req.notify >= 0) dones_[req.notify].Send(now, TransferDone{req.notify_tag, now}, extra);
        continue;
      }
      Active a;
      a.tag = req.tag;
      a.conn = c;
      a.bytes = req.bytes.value();
      TPUSIM_CHECK(a.bytes < (uint64_t{1} << (64 - kFracBits))) << "transfer too large";
      a.remaining_fp = a.bytes << kFracBits;
      a.uses = std::move(req.uses);
      a.latency = req.latency;
      a.notify = req.notify;
      a.notify_tag = req.notify_tag;
      TPUSIM_CHECK(a.notify < static_cast<int>(dones_.size()));
      for (const ResourceUse& u : a.uses) {
        TPUSIM_CHECK(u.resource >= 0 && u.resource < resource_count());
        ++resources_[u.resource].active;
      }
      active_.push_back(std::move(a));
      changed = true;
    }
  }
  if (changed) {
    Recompute();
    if (trace_ != nullptr) TraceRates(now);
  }
}

void TransferNetwork::TraceRates(Cycles now) {
  std::vector<double> rate(resources_.size(), 0.0);
  for (const Active& a : active_) {
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
  for (const Port<TransferRequest>& p : requests_) next = EarliestOf(next, p.NextArrival());
  for (const Active& a : active_) {
    // Smallest dt >= 1 with (num * dt + carry) / den >= remaining.
    U128 need = static_cast<U128>(a.remaining_fp) * a.den - a.carry;
    U128 dt = (need + a.num - 1) / a.num;
    if (dt == 0) dt = 1;
    next = EarliestOf(next, now + Cycles(static_cast<uint64_t>(dt)));
  }
  return next;
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
  for (const Active& a : active_) {
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

void TransferNetwork::ShiftState(uint64_t delta) {
  last_ = ShiftTime(last_, delta);
  for (auto& p : requests_) p.Shift(delta);
  for (auto& p : dones_) {
    p.Shift(delta, [delta](TransferDone& d) { d.last_byte = ShiftTime(d.last_byte, delta); });
  }
}

}  // namespace tpusim::sim
