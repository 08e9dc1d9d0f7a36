#include "sim/core/mxu_unit.h"

#include <fmt/format.h>

#include <vector>

#include "isa/execute.h"
#include "isa/mxu_timing.h"

namespace tpusim::sim {
namespace {

template <typename T>
std::vector<T> Narrow(const std::vector<int32_t>& v) {
  return std::vector<T>(v.begin(), v.end());
}

}  // namespace

StatusOr<MxuOp> MxuUnit::ModelOp(const isa::Instruction& inst) const {
  const isa::SparseMemory* vmem = state_ != nullptr ? &state_->vmem(core_) : nullptr;
  if (inst.opcode == isa::Opcode::kMxuLoadWeights) {
    TPUSIM_ASSIGN_OR_RETURN(isa::MxuOperand w,
                            isa::ReadMxuWeights(vmem, inst.As<isa::op::MxuLoadWeights>()));
    return w.is_int ? MxuOp::LoadWeightsInt8(w.rows, w.cols, Narrow<int8_t>(w.i))
                    : MxuOp::LoadWeights(w.rows, w.cols, std::move(w.f));
  }
  auto o = inst.As<isa::op::MxuMatmul>();
  TPUSIM_ASSIGN_OR_RETURN(isa::MxuOperand a, isa::ReadMxuLhs(vmem, o));
  const int64_t acc = static_cast<int64_t>(o.acc);
  return a.is_int
             ? MxuOp::MatMulInt8(a.rows, a.cols, Narrow<int8_t>(a.i), o.latch, o.accumulate, acc)
             : MxuOp::MatMul(a.rows, a.cols, std::move(a.f), o.latch, o.accumulate, acc);
}

Status MxuUnit::PopToVmem(const isa::Instruction& inst) {
  auto o = inst.As<isa::op::MxuPop>();
  const MxuAccumulators& acc = model_->accumulators();
  if (o.acc + o.m > static_cast<uint64_t>(acc.rows()) || o.n > static_cast<uint64_t>(acc.cols())) {
    return InvalidArgument(
        fmt::format("rows [{}, {}) x {} columns exceed the accumulators ({} x {})", o.acc,
                    o.acc + o.m, o.n, acc.rows(), acc.cols()));
  }
  return isa::WriteMxuPop(state_->vmem(core_), o, acc);
}

StatusOr<std::unique_ptr<MxuUnit>> MxuUnit::Create(std::string path, int core, int index,
                                                   const config::ChipConfig& config,
                                                   MxuModelKind kind, isa::MachineState* state,
                                                   ErrorSink* errors, int unit_id,
                                                   StatRegistry& stats) {
  MxuArrayConfig array = MxuArrayConfig::FromConfig(config.core.mxu);
  array.compute_values = state != nullptr;
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<MxuModel> model, CreateMxuModel(kind, array));
  return std::unique_ptr<MxuUnit>(new MxuUnit(std::move(path), core, index, config,
                                              std::move(model), state, errors, unit_id, stats));
}

MxuUnit::MxuUnit(std::string path, int core, int index, const config::ChipConfig& config,
                 std::unique_ptr<MxuModel> model, isa::MachineState* state, ErrorSink* errors,
                 int unit_id, StatRegistry& stats)
    : path_(std::move(path)),
      core_(core),
      index_(index),
      pop_latency_(config.core.mxu.pop_latency_cycles),
      model_(std::move(model)),
      state_(state),
      errors_(errors),
      unit_id_(unit_id) {
  single_buffer_ = config.core.mxu.weight_buffers == 1;
  commands_.set_receiver(this);
  (void)index_;
  StatGroup& g = stats.AddGroup(path_);
  matmuls_ = g.Add("matmuls", StatUnit::kCount, "mxu.matmul instructions");
  weight_loads_ = g.Add("weight_loads", StatUnit::kCount, "mxu.load_weights instructions");
  pops_count_ = g.Add("pops", StatUnit::kCount, "mxu.pop instructions");
  streaming_cycles_ =
      g.Add("array_active_cycles", StatUnit::kCycles, "cycles an LHS row enters the array (sum M)");
  busy_cycles_ = g.Add("busy_cycles", StatUnit::kCycles, "cycles any PE computes a valid row");
  fill_drain_cycles_ =
      g.Add("fill_drain_cycles", StatUnit::kCycles, "busy but not streaming: pipeline fill/drain");
  weight_shift_cycles_ = g.Add("weight_shift_cycles", StatUnit::kCycles, "cycles shifting weights");
  weight_stall_cycles_ = g.Add("weight_stall_cycles", StatUnit::kCycles,
                               "cycles a latching matmul waited for its weights to finish loading");
  pop_cycles_ = g.Add("pop_cycles", StatUnit::kCycles, "cycles the result path moves rows");
  useful_macs_ = g.Add("useful_macs", StatUnit::kCount, "sum of M*K*N multiply-accumulates");
  flop_ = g.Add("flop", StatUnit::kFlop, "2 * useful_macs");
  vmem_read_ = g.Add("vmem_bytes_read", StatUnit::kBytes, "weights and LHS read from VMEM");
  vmem_written_ = g.Add("vmem_bytes_written", StatUnit::kBytes, "pop results written to VMEM");
}

Cycles MxuUnit::EarliestPopStart(uint64_t acc, uint64_t m, Cycles now) {
  std::erase_if(acc_writes_, [now](const AccWrite& w) { return w.done <= now; });
  Cycles start = now;
  for (const AccWrite& w : acc_writes_) {
    if (w.hi <= acc || acc + m <= w.lo) continue;
    // Row r of the write is final at done - (hi - 1 - r); the pop moves row r at start + r - acc.
    const uint64_t lead = w.hi - 1 - acc;  // >= 0 when the pop's rows start before w.hi
    const uint64_t t = w.done.value() > lead ? w.done.value() - lead : 0;
    if (Cycles(t) > start) start = Cycles(t);
  }
  return start;
}

void MxuUnit::Step(Cycles now) {
  // Pops whose rows have all reached VMEM.
  while (!pops_.empty() && pops_.front().done <= now) {
    PendingPop p = std::move(pops_.front());
    pops_.pop();
    Status st = state_ != nullptr ? PopToVmem(p.cmd.inst) : OkStatus();
    if (!st.ok()) errors_->Report(now, unit_id_, InstructionError(core_, p.cmd, st));
    reports_->Send(now, Report{Report::Kind::kDone, p.cmd.seq, now});
  }
  while (now >= pull_after_ && commands_.HasReady(now)) {
    Command cmd = commands_.Pop(now);
    reports_->Send(now, Report{Report::Kind::kStarted, cmd.seq, now});
    const isa::Instruction& inst = cmd.inst;
    if (inst.opcode == isa::Opcode::kMxuPop) {
      auto o = inst.As<isa::op::MxuPop>();
      Cycles start = EarliestPopStart(o.acc, o.m, now);
      if (start < pop_free_) start = pop_free_;
      pop_free_ = start + Cycles(o.m);
      const int64_t pop_cycles = isa::MxuPopCycles(static_cast<int64_t>(o.m), pop_latency_);
      pops_.push(PendingPop{start + Cycles(static_cast<uint64_t>(pop_cycles)), cmd});
      // The pop waits for the result path in the result path's own queue (pops_): the commands
      // behind it (the next blocks' matmuls) are taken now, not when it starts (mxu_unit.h).
      pops_count_->Add(1);
      pop_cycles_->Add(o.m);
      vmem_written_->Add(o.m * o.n * static_cast<uint64_t>(isa::DTypeBytes(o.dtype)));
      continue;
    }
    StatusOr<MxuOp> op = ModelOp(inst);
    if (!op.ok()) {
      errors_->Report(now, unit_id_, InstructionError(core_, cmd, op.status()));
      return;
    }
    // The ISA requires a matmul's K and N to equal its tile's (the model would zero-pad K).
    if (inst.opcode == isa::Opcode::kMxuLoadWeights) {
      auto o = inst.As<isa::op::MxuLoadWeights>();
      shadow_ = {static_cast<int64_t>(o.k), static_cast<int64_t>(o.n)};
      if (single_buffer_) active_ = shadow_;
    } else {
      auto o = inst.As<isa::op::MxuMatmul>();
      if (o.latch && !single_buffer_) active_ = shadow_;
      if (active_.first < 0) {
        errors_->Report(now, unit_id_,
                        InstructionError(core_, cmd, InvalidArgument("no weights are active")));
        return;
      }
      if (static_cast<int64_t>(o.k) != active_.first ||
          static_cast<int64_t>(o.n) != active_.second) {
        errors_->Report(now, unit_id_,
                        InstructionError(core_, cmd,
                                         InvalidArgument(fmt::format(
                                             "k={} n={} but the active weights have K={} N={}", o.k,
                                             o.n, active_.first, active_.second))));
        return;
      }
    }
    StatusOr<MxuOpTiming> t = model_->Issue(*op, now);
    if (!t.ok()) {
      errors_->Report(now, unit_id_, InstructionError(core_, cmd, t.status()));
      return;
    }
    const uint64_t start = t->start.value();
    if (inst.opcode == isa::Opcode::kMxuLoadWeights) {
      auto o = inst.As<isa::op::MxuLoadWeights>();
      weight_loads_->Add(1);
      vmem_read_->Add(o.k * o.n * static_cast<uint64_t>(isa::DTypeBytes(o.dtype)));
      attribution_->AddActivity(MxuActivityKind::kShifting, start, t->unit_free.value());
    } else {
      auto o = inst.As<isa::op::MxuMatmul>();
      matmuls_->Add(1);
      vmem_read_->Add(o.m * o.k * static_cast<uint64_t>(isa::DTypeBytes(o.dtype)));
      flop_->Add(2 * o.m * o.k * o.n);
      attribution_->AddActivity(MxuActivityKind::kStreaming, start, start + o.m);
      uint64_t ready = std::max(now.value(), matmul_free_.value());
      if (o.latch && start > ready) {
        attribution_->AddActivity(MxuActivityKind::kWaiting, ready, start);
        weight_stall_cycles_->Add(start - ready);
      }
      matmul_free_ = t->unit_free;
      std::erase_if(acc_writes_, [now](const AccWrite& w) { return w.done <= now; });
      acc_writes_.push_back(AccWrite{o.acc, o.acc + o.m, t->done});
    }
    // Reported one cycle after `done`, like every unit's completion (latency-1 report port).
    reports_->Send(now, Report{Report::Kind::kDone, cmd.seq, t->done}, t->done - now);
    pull_after_ = t->start;
  }
}

Cycles MxuUnit::NextWork(Cycles now) const {
  Cycles next = pops_.empty() ? kNever : pops_.front().done;
  Cycles arrival = commands_.NextArrival();
  if (arrival != kNever) {
    Cycles take = arrival < pull_after_ ? pull_after_ : arrival;
    if (take <= now) take = now + Cycles(1);
    next = EarliestOf(next, take);
  }
  if (next <= now) next = now + Cycles(1);
  return next;
}

bool MxuUnit::SaveState(StateWriter& w) const {
  if (!model_->SaveState(w)) return false;
  commands_.Save(w, [this](StateWriter& sw, const Command& c) {
    sw.Seq(core_, c.seq);
    sw.Value(static_cast<uint64_t>(c.pc));
  });
  w.LowerBound(pull_after_);   // commands are taken at max(arrival, pull_after_)
  w.LowerBound(pop_free_);     // a pop starts at max(now, pop_free_)
  w.LowerBound(matmul_free_);  // a latch matmul is ready at max(now, matmul_free_)
  std::queue<PendingPop> pops = pops_;
  w.Value(pops.size());
  for (; !pops.empty(); pops.pop()) {
    w.Time(pops.front().done);
    w.Seq(core_, pops.front().cmd.seq);
    w.Value(static_cast<uint64_t>(pops.front().cmd.pc));
  }
  w.Value(acc_writes_.size());
  for (const AccWrite& a : acc_writes_) {
    w.Value(a.lo);
    w.Value(a.hi);
    w.LowerBound(a.done);  // only its maximum with a later `now` matters
  }
  for (int64_t v : {shadow_.first, shadow_.second, active_.first, active_.second}) {
    w.Value(static_cast<uint64_t>(v));
  }
  return true;
}

void MxuUnit::ShiftState(Cycles delta) {
  model_->ShiftState(delta);
  commands_.Shift(delta);
  pull_after_ = ShiftTime(pull_after_, delta);
  pop_free_ = ShiftTime(pop_free_, delta);
  matmul_free_ = ShiftTime(matmul_free_, delta);
  std::queue<PendingPop> shifted;
  for (; !pops_.empty(); pops_.pop()) {
    PendingPop p = std::move(pops_.front());
    p.done = ShiftTime(p.done, delta);
    shifted.push(std::move(p));
  }
  pops_ = std::move(shifted);
  for (AccWrite& a : acc_writes_) a.done = ShiftTime(a.done, delta);
}

void MxuUnit::Finish() {
  const MxuCounters& c = model_->counters();
  streaming_cycles_->Add(c.streaming_cycles.value());
  busy_cycles_->Add(c.busy_cycles.value());
  fill_drain_cycles_->Add(c.fill_drain_cycles.value());
  weight_shift_cycles_->Add(c.weight_shift_cycles.value());
  useful_macs_->Add(c.useful_macs);
}

}  // namespace tpusim::sim
