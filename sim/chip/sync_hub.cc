#include "sim/chip/sync_hub.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "sim/core/footprint.h"

namespace tpusim::sim {

StatusOr<std::vector<int>> RendezvousMembers(const isa::Program& program,
                                             const isa::Instruction& inst, int core) {
  std::vector<int> members;
  if (inst.opcode == isa::Opcode::kIciCollectivePermute) {
    uint64_t idx = inst.As<isa::op::IciCollectivePermute>().pairs;
    if (idx >= program.permutations.size()) {
      return InvalidArgument(fmt::format("pairs={} is not in the permutation table", idx));
    }
    std::set<int> s;
    for (auto [a, b] : program.permutations[idx].pairs) s.insert({a, b});
    // XLA: a device named by no pair takes part in nothing and its output is zeros.
    if (!s.count(core)) s = {core};
    members.assign(s.begin(), s.end());
  } else {
    uint64_t g = inst.fields[isa::FieldIndex(inst.opcode, "group")];
    if (g >= program.replica_groups.size()) {
      return InvalidArgument(fmt::format("group={} is not in the replica-group table", g));
    }
    for (int32_t m : GroupMembers(program, g, core)) members.push_back(m);
  }
  if (std::find(members.begin(), members.end(), core) == members.end()) {
    return InvalidArgument("this core is not a member of the instruction's group/pairs");
  }
  for (int m : members) {
    if (m < 0 || m >= program.num_cores()) {
      return InvalidArgument(fmt::format("group member {} is not a core of this program", m));
    }
  }
  return members;
}

SyncHub::SyncHub(int cores, const isa::Program& program, DataPath* data, ErrorSink* errors,
                 int unit_id)
    : program_(program), data_(data), errors_(errors), unit_id_(unit_id) {
  for (int c = 0; c < cores; ++c) {
    barrier_in_.emplace_back();
    collective_in_.emplace_back();
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
  StatusOr<std::vector<int>> members = RendezvousMembers(program_, inst, core);
  if (!members.ok()) {
    errors_->Report(now, unit_id_,
                    Status(members.status().code(),
                           fmt::format("core {} {}: {}", core, isa::Mnemonic(inst.opcode),
                                       members.status().message())));
    slots[core].reset();
    return;
  }
  for (int m : *members) {
    if (!slots[m]) return;
  }
  std::vector<isa::Instruction> insts;
  for (int m : *members) {
    const isa::Instruction& other = slots[m]->inst;
    std::string why;
    if (other.opcode != inst.opcode) {
      why = fmt::format("core {} is at {} instead", m, isa::Mnemonic(other.opcode));
    } else {
      const auto& fields = isa::Info(inst.opcode).fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].name == "src" || fields[i].name == "dst") continue;
        if (other.fields[i] != inst.fields[i]) {
          why = fmt::format("core {} has {}={} but core {} has {}={}", m, fields[i].name,
                            other.fields[i], core, fields[i].name, inst.fields[i]);
          break;
        }
      }
    }
    if (!why.empty()) {
      errors_->Report(
          now, unit_id_,
          InvalidArgument(fmt::format("core {} {}: collective mismatch across the group: {}", core,
                                      isa::Mnemonic(inst.opcode), why)));
      for (int x : *members) slots[x].reset();
      return;
    }
    insts.push_back(other);
  }
  if (collective) {
    Status st = data_->Collective(*members, insts);
    if (!st.ok()) {
      errors_->Report(now, unit_id_,
                      Status(st.code(), fmt::format("core {} {}: {}", core,
                                                    isa::Mnemonic(inst.opcode), st.message())));
    }
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
