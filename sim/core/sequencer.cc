#include "sim/core/sequencer.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "common/saturating.h"
#include "isa/footprint.h"
#include "isa/loop_structure.h"
#include "isa/opcode.h"
#include "isa/shared_fields.h"

namespace tpusim::sim {
Sequencer::Sequencer(std::string path, int core, const isa::Program& program,
                     const UnitTargets& targets, TransferNetwork::Connection arrivals,
                     ErrorSink* errors, int unit_id, StatRegistry& stats, TraceSink* trace,
                     std::vector<int> trace_tracks, bool instruction_profile)
    : path_(std::move(path)),
      core_(core),
      program_(program),
      code_(program.cores[core]),
      reports_(targets.mxu.size() + targets.dma.size() + 3),
      arrivals_(arrivals),
      errors_(errors),
      unit_id_(unit_id),
      loop_structure_(code_.instructions),
      flags_(isa::kNumSyncFlags, 0),
      trace_(trace),
      trace_tracks_(std::move(trace_tracks)) {
  for (Port<Command>* p : targets.mxu) targets_.push_back(p);
  vpu_ = static_cast<int>(targets_.size());
  targets_.push_back(targets.vpu);
  xlu_ = static_cast<int>(targets_.size());
  targets_.push_back(targets.xlu);
  first_dma_ = static_cast<int>(targets_.size());
  num_dma_ = static_cast<int>(targets.dma.size());
  for (Port<Command>* p : targets.dma) targets_.push_back(p);
  ici_ = static_cast<int>(targets_.size());
  targets_.push_back(targets.ici);
  TPUSIM_CHECK(targets_.size() == reports_.size());
  for (size_t i = 0; i < reports_.size(); ++i) {
    reports_[i].set_receiver(this, static_cast<uint32_t>(i));
  }
  reports_pending_.assign((reports_.size() + 63) / 64, 0);
  arrivals_.done->set_receiver(this, kArrivalsPort);
  release_.set_receiver(this, kReleasePort);
  credits_.assign(targets_.size(), static_cast<int>(targets.queue_depth));
  outstanding_.assign(targets_.size(), 0);
  profile_.executions.resize(code_.instructions.size());
  profile_.ops.resize(program.hlo_names.size() + 1);
  if (instruction_profile) profile_.details.resize(code_.instructions.size());
  // Simulator::Run rejects unmatched loops (loop_structure_.status()) before a run starts.
  for (const isa::Instruction& inst : code_.instructions) {
    if (inst.opcode == isa::Opcode::kCtrlBreakUnless) {
      min_break_trips_ =
          std::min<uint64_t>(min_break_trips_, inst.As<isa::op::CtrlBreakUnless>().trips);
    }
  }
  StatGroup& g = stats.AddGroup(path_);
  issued_ = g.Add("instructions", StatUnit::kCount, "instructions issued (loop iterations count)");
  active_cycles_ = g.Add("issue_cycles", StatUnit::kCycles, "cycles issuing or ready to issue");
  stall_sync_ = g.Add("sync_wait_cycles", StatUnit::kCycles, "cycles blocked in sync.wait");
  stall_barrier_ = g.Add("barrier_cycles", StatUnit::kCycles, "cycles blocked in sync.barrier");
  stall_scoreboard_ =
      g.Add("scoreboard_stall_cycles", StatUnit::kCycles, "cycles blocked on a RAW/WAR/WAW region");
  stall_queue_ = g.Add("queue_full_cycles", StatUnit::kCycles, "cycles blocked on a full queue");
}

void Sequencer::Fail(Cycles now, const std::string& message) {
  std::string where = fmt::format("core {} instruction {}", core_, pc_);
  if (pc_ < code_.instructions.size()) {
    where = fmt::format("{} {}", where, isa::Mnemonic(code_.instructions[pc_].opcode));
  }
  errors_->Report(now, unit_id_, InvalidArgument(fmt::format("{}: {}", where, message)));
  halted_ = true;
  state_ = State::kHalted;
}

void Sequencer::Account(Cycles now) {
  if (now <= last_account_) return;
  uint64_t dt = (now - last_account_).value();
  switch (state_) {
    case State::kIssuing:
      active_cycles_->Add(dt);
      break;
    case State::kSync:
      stall_sync_->Add(dt);
      break;
    case State::kBarrier:
      stall_barrier_->Add(dt);
      break;
    case State::kScoreboard:
      stall_scoreboard_->Add(dt);
      break;
    case State::kQueueFull:
      stall_queue_->Add(dt);
      break;
    case State::kHalted:
      break;
  }
  last_account_ = now;
}

int Sequencer::TargetFor(const isa::Instruction& inst) const {
  switch (isa::Info(inst.opcode).unit) {
    case isa::Unit::kMxu: {
      const uint64_t m = isa::MxuIndexOf(inst);
      return m < static_cast<uint64_t>(vpu_) ? static_cast<int>(m) : -1;
    }
    case isa::Unit::kVpu:
      return vpu_;
    case isa::Unit::kXlu:
      return xlu_;
    case isa::Unit::kIci:
      return ici_;
    case isa::Unit::kDma: {
      int best = first_dma_;
      for (int i = first_dma_; i < first_dma_ + num_dma_; ++i) {
        if (outstanding_[i] < outstanding_[best]) best = i;
      }
      return best;
    }
    case isa::Unit::kScalar:
      break;
  }
  return -1;
}

void Sequencer::AddScalar(int32_t pc, Cycles issue, Cycles done, StallCategory cat) {
  InFlight f;
  f.pc = pc;
  f.category = cat;
  f.issue = issue;
  f.start = issue;
  f.done_cycle = done;
  f.done = true;
  ++next_seq_;
  inflight_.push_back(f);
  CountExecution(pc);
  issued_->Add(1);
}

Sequencer::InFlight& Sequencer::InFlightAt(uint64_t seq) {
  const uint64_t first = next_seq_ - inflight_.size();
  TPUSIM_CHECK(seq >= first && seq < next_seq_) << "report for an unknown instruction";
  return inflight_[seq - first];
}

void Sequencer::Retire() {
  while (!inflight_.empty() && inflight_.front().done) {
    const InFlight& f = inflight_.front();
    const Cycles end = std::max(frontier_, f.done_cycle);
    const size_t pc = static_cast<size_t>(f.pc);
    const int32_t op = code_.hlo_tag(pc);
    const size_t untagged = profile_.ops.size() - 1;
    OpProfile& o = profile_.ops[op >= 0 && static_cast<size_t>(op) < untagged
                                    ? static_cast<size_t>(op)
                                    : untagged];
    o.cycles[static_cast<size_t>(isa::ResourceOf(code_.instructions[pc].opcode))] +=
        (end - frontier_).value();
    if (!profile_.details.empty()) {
      InstructionProfile& p = profile_.details[pc];
      p.cycles += (end - frontier_).value();
      p.unit_cycles += (f.done_cycle - f.issue).value();
    }
    if (end > frontier_) attribution_->AddSegment(frontier_.value(), end.value(), f.category);
    if (trace_ != nullptr) {
      const int32_t tag = code_.hlo_tag(static_cast<size_t>(f.pc));
      trace_->Retired(core_, frontier_.value(), end.value(), f.pc, tag);
      TraceEvent e;
      e.track = trace_tracks_[f.target >= 0 ? f.target : trace_tracks_.size() - 1];
      e.start = (f.target >= 0 ? f.start : f.issue).value();
      e.end = std::max(f.done_cycle.value(), e.start + 1);
      e.pc = f.pc;
      e.hlo_tag = tag;
      e.name = isa::Mnemonic(code_.instructions[f.pc].opcode);
      trace_->Instruction(e);
    }
    frontier_ = end;
    inflight_.pop_front();
  }
}

void Sequencer::Step(Cycles now) {
  Account(now);
  Receive(now);
  Retire();

  if (halted_) {
    state_ = State::kHalted;
    return;
  }
  if (in_barrier_) {
    state_ = State::kBarrier;
    return;
  }
  if (pc_ >= code_.instructions.size()) {
    halted_ = true;  // running off the end is an implicit halt
    state_ = State::kHalted;
    return;
  }
  const isa::Instruction& inst = code_.instructions[pc_];
  const int32_t pc = static_cast<int32_t>(pc_);
  const Cycles t = now;
  state_ = State::kIssuing;
  switch (inst.opcode) {
    case isa::Opcode::kNop:
      AddScalar(pc, t, t + Cycles(1), StallCategory::kNonMatrix);
      ++pc_;
      break;
    case isa::Opcode::kCtrlHalt:
      AddScalar(pc, t, t + Cycles(1), StallCategory::kNonMatrix);
      halted_ = true;
      break;
    case isa::Opcode::kCtrlLoop: {
      auto l = inst.As<isa::op::CtrlLoop>();
      AddScalar(pc, t, t + Cycles(1), StallCategory::kNonMatrix);
      if (l.count == 0) {
        pc_ = loop_structure_.EndOf(pc_) + 1;
      } else {
        if (Status st = isa::CheckLoopDepth(loops_.size()); !st.ok()) {
          Fail(now, st.message());
          return;
        }
        loops_.push_back({pc_ + 1, l.count, loop_serial_++});
        if (loop_opens_ != nullptr) ++*loop_opens_;
        ++pc_;
      }
      break;
    }
    case isa::Opcode::kCtrlEndLoop: {
      AddScalar(pc, t, t + Cycles(1), StallCategory::kNonMatrix);
      TPUSIM_CHECK(!loops_.empty()) << "loop matching was checked before the run";
      ++loop_trips_;
      if (--loops_.back().remaining > 0) {
        ++loops_.back().trips_done;
        pc_ = loops_.back().start;
        trip_level_ = static_cast<int>(loops_.size()) - 1;
      } else {
        loops_.pop_back();
        ++pc_;
      }
      break;
    }
    case isa::Opcode::kCtrlBreakUnless:
      if (!BreakUnless(now, inst)) return;
      break;
    case isa::Opcode::kSyncSignal: {
      auto s = inst.As<isa::op::SyncSignal>();
      if (Status st = isa::AddToFlag(flags_[s.flag], s.value, s.flag); !st.ok()) {
        Fail(now, st.message());
        return;
      }
      AddScalar(pc, t, t + Cycles(1), StallCategory::kNonMatrix);
      ++pc_;
      break;
    }
    case isa::Opcode::kSyncWait: {
      auto w = inst.As<isa::op::SyncWait>();
      if (flags_[w.flag] < w.value) {
        if (!waiting_) {
          waiting_ = true;
          wait_since_ = t;
        }
        state_ = State::kSync;
        return;
      }
      flags_[w.flag] -= static_cast<uint32_t>(w.value);
      AddScalar(pc, waiting_ ? wait_since_ : t, t + Cycles(1), StallCategory::kRawSyncStall);
      waiting_ = false;
      ++pc_;
      break;
    }
    case isa::Opcode::kSyncBarrier: {
      InFlight f;
      f.pc = pc;
      f.category = StallCategory::kRawSyncStall;
      f.issue = t;
      f.start = t;
      barrier_seq_ = next_seq_++;
      inflight_.push_back(f);
      CountExecution(pc);
      issued_->Add(1);
      hub_->Send(now, SyncMessage{core_, inst.As<isa::op::SyncBarrier>().group, 0, inst});
      in_barrier_ = true;
      ++pc_;
      break;
    }
    default:
      if (!IssueToUnit(now, inst)) return;
      break;
  }
  Retire();
}

// Takes the reports of target `i` delivered by `now`.
void Sequencer::ReceiveReports(size_t i, Cycles now) {
  while (reports_[i].HasReady(now)) {
    Report r = reports_[i].Pop(now);
    InFlight& f = InFlightAt(r.seq);
    if (r.kind == Report::Kind::kStarted) {
      ++credits_[i];
      f.start = r.cycle;
      continue;
    }
    f.done = true;
    f.done_cycle = std::max(r.cycle, f.issue + Cycles(1));
    scoreboard_.Remove(r.seq);
    --outstanding_[i];
    if (f.flag >= 0) {
      const int flag = f.flag;
      if (Status st = isa::AddToFlag(flags_[flag], 1, flag); !st.ok()) Fail(now, st.message());
    }
  }
}

void Sequencer::Delivered(uint32_t port, Cycles at) {
  if (port == kArrivalsPort) {
    arrivals_pending_ = true;
  } else if (port == kReleasePort) {
    release_pending_ = true;
  } else {
    reports_pending_[port / 64] |= uint64_t{1} << (port % 64);
  }
  Wake(at);
}

// Takes the units' started/done reports, the remote DMA arrivals and the barrier release of
// cycle `now`.
void Sequencer::Receive(Cycles now) {
  for (size_t word = 0; word < reports_pending_.size(); ++word) {
    for (uint64_t bits = reports_pending_[word]; bits != 0; bits &= bits - 1) {
      const size_t i = word * 64 + static_cast<size_t>(std::countr_zero(bits));
      ReceiveReports(i, now);
      if (reports_[i].empty()) reports_pending_[word] &= ~(uint64_t{1} << (i % 64));
    }
  }
  if (arrivals_pending_) {
    while (arrivals_.done->HasReady(now)) {
      TransferDone d = arrivals_.done->Pop(now);
      Status st = isa::AddToFlag(flags_[d.tag % isa::kNumSyncFlags], 1, d.tag);
      if (!st.ok()) Fail(now, st.message());
    }
    arrivals_pending_ = !arrivals_.done->empty();
  }
  if (release_pending_) {
    while (release_.HasReady(now)) {
      release_.Pop(now);
      TPUSIM_CHECK(in_barrier_);
      in_barrier_ = false;
      InFlight& f = InFlightAt(barrier_seq_);
      f.done = true;
      f.done_cycle = now + Cycles(1);
    }
    release_pending_ = !release_.empty();
  }
}

// Sends `inst` (pc_) to its unit; false while the scoreboard or the unit's queue holds it back (or
// on an error).
bool Sequencer::IssueToUnit(Cycles now, const isa::Instruction& inst) {
  const int32_t pc = static_cast<int32_t>(pc_);
  // The instruction at pc_ stays blocked while the entry it conflicted with is in flight.
  if (blocked_by_ != Scoreboard::kNone && scoreboard_.Contains(blocked_by_)) {
    state_ = State::kScoreboard;
    return false;
  }
  isa::Footprint fp = isa::InstructionFootprint(inst, core_, program_);
  blocked_by_ = scoreboard_.FirstConflict(fp);
  if (blocked_by_ != Scoreboard::kNone) {
    state_ = State::kScoreboard;
    return false;
  }
  int target = TargetFor(inst);
  if (target < 0) {
    Fail(now, fmt::format("mxu={} but the core has {} MXUs", isa::MxuIndexOf(inst), vpu_));
    return false;
  }
  if (credits_[target] == 0) {
    state_ = State::kQueueFull;
    return false;
  }
  const uint64_t seq = next_seq_++;
  targets_[target]->Send(now, Command{seq, pc, inst});
  --credits_[target];
  ++outstanding_[target];
  scoreboard_.Add(seq, fp);
  InFlight f;
  f.pc = pc;
  f.target = target;
  f.category = StallCategoryOf(isa::ResourceOf(inst.opcode));
  f.issue = now;
  f.start = now;
  if (isa::Info(inst.opcode).unit == isa::Unit::kDma) {
    f.flag = static_cast<int>(isa::DmaDescriptorOf(inst).flag);
  }
  inflight_.push_back(f);
  CountExecution(pc);
  issued_->Add(1);
  ++pc_;
  return true;
}

bool Sequencer::BreakUnless(Cycles now, const isa::Instruction& inst) {
  auto b = inst.As<isa::op::CtrlBreakUnless>();
  const Cycles t = now;
  if (loops_.empty()) {
    Fail(now, "ctrl.break_unless outside a loop");
    return false;
  }
  if (!inflight_.empty()) {  // the pred is read once everything before it has completed
    if (!waiting_) {
      waiting_ = true;
      wait_since_ = t;
    }
    state_ = State::kScoreboard;
    return false;
  }
  bool leave = false;
  if (values_ != nullptr) {
    StatusOr<bool> read = isa::BreakUnlessLeaves(*values_, core_, b);
    if (!read.ok()) {
      Fail(now, read.status().message());
      return false;
    }
    leave = *read;
  } else {
    leave = isa::BreakUnlessLeavesWithoutValues(b, loops_.back().trips_done);
  }
  AddScalar(static_cast<int32_t>(pc_), waiting_ ? wait_since_ : t, t + Cycles(1),
            StallCategory::kRawSyncStall);
  waiting_ = false;
  if (leave) {
    pc_ = loop_structure_.EndOf(loops_.back().start - 1) + 1;
    loops_.pop_back();
  } else {
    ++pc_;
  }
  return true;
}

Cycles Sequencer::NextWork(Cycles now) const {
  Cycles next = kNever;
  if (arrivals_pending_) next = arrivals_.done->NextArrival();
  if (release_pending_) next = EarliestOf(next, release_.NextArrival());
  for (size_t word = 0; word < reports_pending_.size(); ++word) {
    for (uint64_t bits = reports_pending_[word]; bits != 0; bits &= bits - 1) {
      const size_t i = word * 64 + static_cast<size_t>(std::countr_zero(bits));
      next = EarliestOf(next, reports_[i].NextArrival());
    }
  }
  if (!halted_ && state_ == State::kIssuing) next = EarliestOf(next, now + Cycles(1));
  if (!halted_ && !in_barrier_ && pc_ >= code_.instructions.size()) {
    next = EarliestOf(next, now + Cycles(1));
  }
  if (next <= now) next = now + Cycles(1);
  return next;
}

std::string Sequencer::BlockedReason() const {
  if (pc_ >= code_.instructions.size()) {
    return fmt::format("core {} waits for {} in-flight instructions", core_, inflight_.size());
  }
  const isa::Instruction& inst = code_.instructions[pc_];
  std::string s =
      fmt::format("core {} waits at instruction {} {}", core_, pc_, isa::Mnemonic(inst.opcode));
  if (inst.opcode == isa::Opcode::kSyncWait) {
    auto w = inst.As<isa::op::SyncWait>();
    s += fmt::format(" (flag {} is {}, needs {})", w.flag, flags_[w.flag], w.value);
  }
  if (in_barrier_) s = fmt::format("{} (in a barrier)", s);
  return s;
}

void Sequencer::Finish(Cycles end) { Account(end); }

bool Sequencer::SaveState(StateWriter& w) const {
  if (trace_ != nullptr) return false;
  w.Value(pc_);
  w.Value(loops_.size());
  for (const Loop& l : loops_) w.Value(l.start);
  for (uint32_t f : flags_) w.Value(f);
  w.Value(static_cast<uint64_t>(state_));
  w.Value((halted_ ? 1 : 0) | (in_barrier_ ? 2 : 0) | (waiting_ ? 4 : 0));
  if (in_barrier_) w.Seq(core_, barrier_seq_);
  if (waiting_) w.Time(wait_since_);
  w.Time(frontier_);
  w.Time(last_account_);
  for (size_t i = 0; i < credits_.size(); ++i) {
    w.Value(static_cast<uint64_t>(credits_[i]));
    w.Value(static_cast<uint64_t>(outstanding_[i]));
  }
  // In-flight instances in program order; the scoreboard holds the footprints of some of them,
  // each a function of the instance's instruction.
  w.Value(inflight_.size());
  uint64_t seq = next_seq_ - inflight_.size();
  for (const InFlight& f : inflight_) {
    w.Seq(core_, seq++);
    w.Value(static_cast<uint64_t>(f.pc));
    w.Value(static_cast<uint64_t>(static_cast<int64_t>(f.target)));
    w.Value(static_cast<uint64_t>(static_cast<int64_t>(f.flag)));
    w.Value(static_cast<uint64_t>(f.category));
    w.Time(f.issue);
    w.Time(f.start);
    w.Value(f.done ? 1 : 0);
    if (f.done) w.Time(f.done_cycle);
  }
  scoreboard_.Save(w, core_);
  auto report = [this](StateWriter& sw, const Report& r) {
    sw.Value(static_cast<uint64_t>(r.kind));
    sw.Seq(core_, r.seq);
    sw.Time(r.cycle);
  };
  for (const Port<Report>& p : reports_) p.Save(w, report);
  arrivals_.done->Save(w, [](StateWriter& sw, const TransferDone& d) {
    sw.Value(d.tag);  // a flag number
    sw.Time(d.last_byte);
  });
  release_.Save(w, [](StateWriter& sw, const SyncMessage& m) {
    sw.Value(static_cast<uint64_t>(m.core));
    sw.Value(m.group);
    sw.Instance(m.instance);
  });
  return true;
}

void Sequencer::ShiftState(Cycles delta) {
  if (waiting_) wait_since_ += delta;
  frontier_ += delta;
  last_account_ = ShiftTime(last_account_, delta);
  for (InFlight& f : inflight_) {
    f.issue += delta;
    f.start += delta;
    if (f.done) f.done_cycle += delta;
  }
  for (Port<Report>& p : reports_) {
    p.Shift(delta, [delta](Report& r) { r.cycle = ShiftTime(r.cycle, delta); });
  }
  arrivals_.done->Shift(delta,
                        [delta](TransferDone& d) { d.last_byte = ShiftTime(d.last_byte, delta); });
  release_.Shift(delta);
}

void Sequencer::SkipTrips(size_t level, uint64_t trips) {
  TPUSIM_CHECK(level < loops_.size() && loops_[level].remaining > trips);
  loops_[level].remaining -= trips;
  loops_[level].trips_done += trips;
}

void Sequencer::CountExecution(size_t pc) {
  ++profile_.executions[pc];
  if (!profile_.details.empty()) ++profile_.details[pc].executions;
  ++executed_;
  if (work_costs_ != nullptr && !work_costs_->empty()) {
    work_ = SaturatingAdd(work_, (*work_costs_)[pc]);
  }
}

void Sequencer::SaveStats(std::vector<uint64_t>& out) const {
  out.insert(out.end(), profile_.executions.begin(), profile_.executions.end());
  for (const OpProfile& o : profile_.ops) out.insert(out.end(), o.cycles.begin(), o.cycles.end());
  for (const InstructionProfile& p : profile_.details) {
    out.push_back(p.executions);
    out.push_back(p.cycles);
    out.push_back(p.unit_cycles);
  }
  out.push_back(executed_);
  out.push_back(loop_trips_);
}

void Sequencer::AdvanceStats(const uint64_t* delta, uint64_t times) {
  for (uint64_t& e : profile_.executions) e += *delta++ * times;
  for (OpProfile& o : profile_.ops) {
    for (uint64_t& c : o.cycles) c += *delta++ * times;
  }
  for (InstructionProfile& p : profile_.details) {
    p.executions += *delta++ * times;
    p.cycles += *delta++ * times;
    p.unit_cycles += *delta++ * times;
  }
  executed_ += *delta++ * times;
  loop_trips_ += *delta++ * times;
}

}  // namespace tpusim::sim
