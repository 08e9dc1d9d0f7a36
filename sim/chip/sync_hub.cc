#include "sim/chip/sync_hub.h"

#include <fmt/format.h>

#include <algorithm>

#include "isa/execute.h"

namespace tpusim::sim {

SyncHub::SyncHub(int cores, const isa::Program& program, isa::MachineState* state,
                 ErrorSink* errors, int unit_id)
    : program_(program), state_(state), errors_(errors), unit_id_(unit_id) {
  for (int c = 0; c < cores; ++c) {
    barrier_in_.emplace_back().set_receiver(this, static_cast<uint32_t>(2 * c));
    collective_in_.emplace_back().set_receiver(this, static_cast<uint32_t>(2 * c + 1));
  }
  barrier_out_.assign(cores, nullptr);
  collective_out_.assign(cores, nullptr);
  barrier_at_.assign(cores, std::nullopt);
  collective_at_.assign(cores, std::nullopt);
  barrier_missing_.assign(cores, -1);
  collective_missing_.assign(cores, -1);
}

void SyncHub::Delivered(uint32_t port, Cycles at) {
  arrivals_.emplace(at.value(), port);
  Wake(at);
}

void SyncHub::TryRelease(Cycles now, int core, bool collective) {
  auto& slots = collective ? collective_at_ : barrier_at_;
  if (!slots[core]) return;
  int& missing = (collective ? collective_missing_ : barrier_missing_)[core];
  if (missing >= 0 && !slots[missing]) return;  // still incomplete: nothing to do
  const isa::Instruction& inst = slots[core]->inst;
  StatusOr<std::vector<int>> members = isa::RendezvousMembers(program_, inst, core);
  auto fail = [&](const Status& st) {
    errors_->Report(now, unit_id_,
                    Status(st.code(), fmt::format("core {} {}: {}", core,
                                                  isa::Mnemonic(inst.opcode), st.message())));
  };
  if (!members.ok()) {
    fail(members.status());
    slots[core].reset();
    return;
  }
  for (int m : *members) {
    if (!slots[m]) {
      missing = m;
      return;
    }
  }
  std::vector<isa::Instruction> insts;
  for (int m : *members) insts.push_back(slots[m]->inst);
  if (!isa::SameRendezvous(program_, *members, insts)) return;  // a member is in another group's
  if (Status st = isa::CheckRendezvous(*members, insts, core, inst); !st.ok()) {
    fail(st);
    for (int x : *members) slots[x].reset();
    return;
  }
  if (collective && state_ != nullptr) {
    if (Status st = isa::ExecuteCollective(*state_, program_, *members, insts); !st.ok()) fail(st);
  }
  const uint64_t instance = next_instance_++;
  for (int m : *members) {
    SyncMessage go = *slots[m];
    go.instance = instance;
    (collective ? collective_out_ : barrier_out_)[m]->Send(now, go);
    slots[m].reset();
  }
}

void SyncHub::Take(int core, bool collective, Cycles now) {
  Port<SyncMessage>& port = collective ? collective_in_[core] : barrier_in_[core];
  while (port.HasReady(now)) {
    (collective ? collective_at_ : barrier_at_)[core] = port.Pop(now);
    (collective ? collective_missing_ : barrier_missing_)[core] = -1;
    waiting_.insert(core);
  }
}

void SyncHub::Step(Cycles now) {
  std::vector<uint64_t> ports;
  while (!arrivals_.empty() && arrivals_.top().first <= now.value()) {
    ports.push_back(arrivals_.top().second);
    arrivals_.pop();
  }
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  for (uint64_t p : ports) {
    Take(static_cast<int>(p / 2), p % 2 == 1, now);
    if (!in(p).empty()) arrivals_.emplace(in(p).NextArrival().value(), p);
  }
  // In core order, as a scan of every core would (a core with no arrival waiting is a no-op).
  const std::vector<int> waiting(waiting_.begin(), waiting_.end());
  for (int c : waiting) {
    TryRelease(now, c, false);
    TryRelease(now, c, true);
  }
  for (int c : waiting) {
    if (!barrier_at_[c] && !collective_at_[c]) waiting_.erase(c);
  }
  while (!arrivals_.empty() &&
         in(arrivals_.top().second).NextArrival().value() != arrivals_.top().first) {
    arrivals_.pop();  // stale: that arrival was taken
  }
}

Cycles SyncHub::NextWork(Cycles now) const {
  Cycles next = arrivals_.empty() ? kNever : Cycles(arrivals_.top().first);
  if (next <= now) next = now + Cycles(1);
  return next;
}

void SyncHub::RebuildArrivals() {
  arrivals_ = {};
  for (uint64_t p = 0; p < 2 * barrier_in_.size(); ++p) {
    if (!in(p).empty()) arrivals_.emplace(in(p).NextArrival().value(), p);
  }
}

bool SyncHub::SaveState(StateWriter& w) const {
  // An arrival is a function of its sender's instruction: its pc is not in the message, so the
  // instruction's fields are written.
  auto message = [](StateWriter& sw, const SyncMessage& m) {
    sw.Value(static_cast<uint64_t>(m.core));
    sw.Value(m.group);
    sw.Value(static_cast<uint64_t>(m.inst.opcode));
    for (uint64_t f : m.inst.fields) sw.Value(f);
  };
  for (size_t c = 0; c < barrier_in_.size(); ++c) {
    barrier_in_[c].Save(w, message);
    collective_in_[c].Save(w, message);
    for (const auto* slot : {&barrier_at_[c], &collective_at_[c]}) {
      w.Value(slot->has_value() ? 1 : 0);
      if (*slot) message(w, **slot);
    }
  }
  return true;
}

void SyncHub::ShiftState(Cycles delta) {
  for (auto& p : barrier_in_) p.Shift(delta);
  for (auto& p : collective_in_) p.Shift(delta);
  RebuildArrivals();
}

}  // namespace tpusim::sim
