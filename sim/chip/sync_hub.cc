#include "sim/chip/sync_hub.h"

#include <fmt/format.h>

#include "isa/execute.h"

namespace tpusim::sim {

SyncHub::SyncHub(int cores, const isa::Program& program, isa::MachineState* state,
                 ErrorSink* errors, int unit_id)
    : program_(program), state_(state), errors_(errors), unit_id_(unit_id) {
  for (int c = 0; c < cores; ++c) {
    barrier_in_.emplace_back().set_receiver(this);
    collective_in_.emplace_back().set_receiver(this);
  }
  barrier_out_.assign(cores, nullptr);
  collective_out_.assign(cores, nullptr);
  barrier_at_.assign(cores, std::nullopt);
  collective_at_.assign(cores, std::nullopt);
}

void SyncHub::TryRelease(Cycles now, int core, bool collective) {
  auto& slots = collective ? collective_at_ : barrier_at_;
  if (!slots[core]) return;
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
    if (!slots[m]) return;
  }
  std::vector<isa::Instruction> insts;
  for (int m : *members) insts.push_back(slots[m]->inst);
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

void SyncHub::Step(Cycles now) {
  const int n = static_cast<int>(barrier_in_.size());
  for (int c = 0; c < n; ++c) {
    while (barrier_in_[c].HasReady(now)) barrier_at_[c] = barrier_in_[c].Pop(now);
    while (collective_in_[c].HasReady(now)) collective_at_[c] = collective_in_[c].Pop(now);
  }
  for (int c = 0; c < n; ++c) {
    TryRelease(now, c, false);
    TryRelease(now, c, true);
  }
}

Cycles SyncHub::NextWork(Cycles now) const {
  Cycles next = kNever;
  for (const auto& p : barrier_in_) next = EarliestOf(next, p.NextArrival());
  for (const auto& p : collective_in_) next = EarliestOf(next, p.NextArrival());
  if (next <= now) next = now + Cycles(1);
  return next;
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

void SyncHub::ShiftState(uint64_t delta) {
  for (auto& p : barrier_in_) p.Shift(delta);
  for (auto& p : collective_in_) p.Shift(delta);
}

}  // namespace tpusim::sim
