#include "sim/core/vector_unit.h"

#include "isa/execute.h"
#include "isa/vpu_cost.h"

namespace tpusim::sim {

VectorUnit::VectorUnit(std::string path, int core, const config::ChipConfig& config,
                       isa::MachineState* state, ErrorSink* errors, int unit_id,
                       StatRegistry& stats)
    : path_(std::move(path)),
      core_(core),
      vpu_(config.core.vpu),
      vmem_bytes_per_cycle_(config.core.vmem_bytes_per_cycle),
      state_(state),
      errors_(errors),
      unit_id_(unit_id) {
  commands_.set_receiver(this);
  StatGroup& g = stats.AddGroup(path_);
  ops_ = g.Add("instructions", StatUnit::kCount, "instructions executed");
  elements_ = g.Add("elements", StatUnit::kCount, "elements produced");
  busy_ = g.Add("busy_cycles", StatUnit::kCycles, "cycles issuing vreg operations (occupancy)");
  flop_ = g.Add("flop", StatUnit::kFlop, "arithmetic operations (1 per arithmetic element)");
  vmem_read_ = g.Add("vmem_bytes_read", StatUnit::kBytes, "bytes read from VMEM");
  vmem_written_ = g.Add("vmem_bytes_written", StatUnit::kBytes, "bytes written to VMEM");
}

void VectorUnit::Step(Cycles now) {
  while (!pending_.empty() && pending_.top().done <= now) {
    Pending p = pending_.top();
    pending_.pop();
    Status st = state_ != nullptr ? isa::ExecuteVector(*state_, core_, p.cmd.inst) : OkStatus();
    if (!st.ok()) errors_->Report(now, unit_id_, InstructionError(core_, p.cmd, st));
    reports_->Send(now, Report{Report::Kind::kDone, p.cmd.seq, now});
  }
  if (now >= free_ && commands_.HasReady(now)) {
    Command cmd = commands_.Pop(now);
    reports_->Send(now, Report{Report::Kind::kStarted, cmd.seq, now});
    isa::VectorCost c = isa::VectorInstructionCost(cmd.inst, vpu_, vmem_bytes_per_cycle_);
    free_ = now + c.occupancy;
    pending_.push(Pending{now + c.latency, order_++, std::move(cmd)});
    ops_->Add(1);
    elements_->Add(c.elements);
    busy_->Add(c.occupancy.value());
    flop_->Add(c.flop);
    vmem_read_->Add(c.vmem_bytes_read.value());
    vmem_written_->Add(c.vmem_bytes_written.value());
  }
}

Cycles VectorUnit::NextWork(Cycles now) const {
  Cycles next = pending_.empty() ? kNever : pending_.top().done;
  Cycles arrival = commands_.NextArrival();
  if (arrival != kNever) {
    Cycles take = arrival < free_ ? free_ : arrival;
    next = EarliestOf(next, take);
  }
  if (next <= now) next = now + Cycles(1);
  return next;
}

bool VectorUnit::SaveState(StateWriter& w) const {
  commands_.Save(w, [this](StateWriter& sw, const Command& c) {
    sw.Seq(core_, c.seq);
    sw.Value(static_cast<uint64_t>(c.pc));
  });
  w.LowerBound(free_);      // a command is taken at max(arrival, free_)
  auto pending = pending_;  // in completion order; `order` only breaks ties
  w.Value(pending.size());
  for (; !pending.empty(); pending.pop()) {
    w.Time(pending.top().done);
    w.Seq(core_, pending.top().cmd.seq);
    w.Value(static_cast<uint64_t>(pending.top().cmd.pc));
  }
  return true;
}

void VectorUnit::ShiftState(Cycles delta) {
  commands_.Shift(delta);
  free_ = ShiftTime(free_, delta);
  decltype(pending_) shifted;
  for (; !pending_.empty(); pending_.pop()) {
    Pending p = pending_.top();
    p.done = ShiftTime(p.done, delta);
    shifted.push(std::move(p));
  }
  pending_ = std::move(shifted);
}

}  // namespace tpusim::sim
