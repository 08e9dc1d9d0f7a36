// Sequencer: a TensorCore's in-order instruction issue (the scalar core). One instruction per
// cycle: control (ctrl.loop/endloop/halt, nop) and sync (signal, wait, barrier) run here;
// everything else is sent to its unit's queue once
//   - its memory regions do not conflict with an in-flight instruction (scoreboard.h: RAW/WAR/WAW
//   on
//     VMEM/HBM/host ranges and accumulator rows), and
//   - the unit's queue has room (credits, returned when the unit takes a command:
//     core.unit_queue_depth).
// sync.wait blocks issue until the flag reaches its value (flags rise when the core's DMAs
// complete, when a remote DMA lands here, or by sync.signal). DMAs go to the engine with the fewest
// commands outstanding (ties: the lowest index).
//
// Attribution (in-order retirement, as a CPU's top-down analysis): instruction instances retire in
// program order; instance i retires at F_i = max(F_{i-1}, completion_i) and is charged F_i -
// F_{i-1} cycles. The charges of a core sum to its cycle count, and each one goes to the
// instruction the core was waiting for at that time. Scalar instructions complete one cycle after
// they issue.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "isa/loop_structure.h"
#include "isa/machine_state.h"
#include "isa/program.h"
#include "sim/chip/transfer_network.h"
#include "sim/core/messages.h"
#include "sim/core/scoreboard.h"
#include "sim/core/stall_attribution.h"
#include "sim/engine/error_sink.h"
#include "sim/engine/port.h"
#include "sim/engine/stats.h"
#include "sim/engine/unit.h"
#include "sim/sim_result.h"

namespace tpusim::sim {

/// The queues a sequencer issues to. Index order: mxus, vpu, xlu, dmas, ici.
struct UnitTargets {
  std::vector<Port<Command>*> mxu;
  Port<Command>* vpu = nullptr;
  Port<Command>* xlu = nullptr;
  std::vector<Port<Command>*> dma;
  Port<Command>* ici = nullptr;
  /// Commands each unit queues (credits the sequencer holds per unit): core.unit_queue_depth.
  int64_t queue_depth = 16;
};

class Sequencer : public Unit {
 public:
  Sequencer(std::string path, int core, const isa::Program& program, const UnitTargets& targets,
            TransferNetwork::Connection arrivals, ErrorSink* errors, int unit_id,
            StatRegistry& stats, TraceSink* trace, std::vector<int> trace_tracks,
            bool instruction_profile = false);

  /// The report port of target `i` (the order of UnitTargets) — the unit sends to it.
  Port<Report>& reports(int i) { return reports_[i]; }
  Port<SyncMessage>& barrier_release() { return release_; }
  void set_hub(Port<SyncMessage>* hub) { hub_ = hub; }
  /// The machine state a run with values computes (null: timing-only). ctrl.break_unless reads its
  /// pred there; without values it takes the branch on trip `trips` + 1 (isa/opcodes.def).
  void set_values(isa::MachineState* state) { values_ = state; }

  const std::string& path() const override { return path_; }
  void Step(Cycles now) override;
  Cycles NextWork(Cycles now) const override;
  bool event_driven() const override { return true; }
  /// Marks port `port` (a report port, the arrivals or the release) as holding messages, so Receive
  /// and NextWork visit only those, and wakes the sequencer.
  void Delivered(uint32_t port, Cycles at) override;
  /// After ctrl.halt the core counts issue cycles up to the next event cycle of the run.
  bool StepAtNextEvent() const override { return halted_ && state_ != State::kHalted; }

  /// Halted with every instruction retired.
  bool finished() const { return halted_ && inflight_.empty(); }
  /// Why a core that is not finished is stuck (for the deadlock message).
  std::string BlockedReason() const;
  Cycles end() const { return frontier_; }
  /// What the core's instructions did so far: executions per instruction, retirement cycles per
  /// HLO op (OpProfile::cycles; FLOP and bytes are the TensorCore's to add) and, with
  /// `instruction_profile`, executions and cycles per instruction.
  struct Profile {
    std::vector<uint64_t> executions;         // per instruction
    std::vector<OpProfile> ops;               // per HLO tag, then the untagged
    std::vector<InstructionProfile> details;  // per instruction, or empty
  };
  const Profile& profile() const { return profile_; }
  /// Moves the profile out (after the run: the core's result keeps it, not a copy).
  Profile TakeProfile() { return std::move(profile_); }
  /// Where retired segments go (the core's stall attribution; not owned, must be set).
  void set_attribution(StallAttribution* a) { attribution_ = a; }
  const std::vector<uint32_t>& flags() const { return flags_; }
  uint64_t executed() const { return executed_; }
  /// The work units of one execution of each instruction of the core, by index (the simulator's
  /// work budget, SimOptions::max_work), shared by the cores running the same code; null or
  /// empty: nothing is counted.
  void set_work_costs(std::shared_ptr<const std::vector<uint64_t>> costs) {
    work_costs_ = std::move(costs);
  }
  /// The work units of the instructions issued so far (set_work_costs; trips a fast-forward skips
  /// are not issued and cost nothing), saturating.
  uint64_t work() const { return work_; }
  /// Instructions issued and retired in order so far (executed() minus those in flight).
  uint64_t retired() const { return executed_ - inflight_.size(); }
  /// ctrl.endloop executions so far: loop trips completed, all loops of the core.
  uint64_t loop_trips() const { return loop_trips_; }
  /// Adds the stall/active interval up to `end` to the stats; call once after the run.
  void Finish(Cycles end);

  /// An open ctrl.loop: its first body instruction, the trips left (including the one running)
  /// and a serial number distinct for every ctrl.loop execution of the core.
  struct Loop {
    size_t start;
    uint64_t remaining;
    uint64_t serial;
    uint64_t trips_done = 0;  // ctrl.endloop jumps back so far
  };
  const std::vector<Loop>& loops() const { return loops_; }
  /// The loop level (index into loops()) whose ctrl.endloop started a new trip in the last Step,
  /// or -1; clears it.
  int TakeTripBoundary() {
    const int l = trip_level_;
    trip_level_ = -1;
    return l;
  }
  /// The smallest `trips` of the core's ctrl.break_unless instructions (UINT64_MAX if none): in
  /// timing-only runs a loop is left at its first break_unless once trips_done reaches it.
  uint64_t min_break_trips() const { return min_break_trips_; }
  /// A counter the sequencer adds one to whenever it opens a loop (a ctrl.loop with trips), for
  /// an observer between engine cycles (FastForward finds the lowest core with an open loop
  /// without visiting every core at every cycle); null: none. Changes no result.
  void set_loop_opens(uint64_t* counter) { loop_opens_ = counter; }
  /// The sequence number the next issued instruction gets.
  uint64_t next_seq() const { return next_seq_; }

  // Fast-forward (sim/fast_forward.h). The loops' trip counts and serials are not written by
  // SaveState (the controller compares them itself); SkipTrips takes `trips` trips off level
  // `level` (fewer than it has left).
  bool SaveState(StateWriter& w) const override;
  void ShiftState(Cycles delta) override;
  void SkipTrips(size_t level, uint64_t trips);
  /// Statistics kept outside the StatRegistry (per-instruction profile, executed, loop trips).
  void SaveStats(std::vector<uint64_t>& out) const;
  void AdvanceStats(const uint64_t* delta, uint64_t times);

 private:
  enum class State { kIssuing, kSync, kBarrier, kScoreboard, kQueueFull, kHalted };
  struct InFlight {
    int32_t pc = 0;
    int target = -1;  // -1: scalar (sequencer track)
    int flag = -1;    // DMA: the flag to bump on completion
    StallCategory category = StallCategory::kNonMatrix;
    Cycles issue;
    Cycles start;
    Cycles done_cycle;
    bool done = false;
  };

  void Retire();
  void Receive(Cycles now);
  void ReceiveReports(size_t i, Cycles now);
  bool IssueToUnit(Cycles now, const isa::Instruction& inst);
  void Account(Cycles now);
  /// ctrl.break_unless at pc_: false while it waits for earlier instructions (or on an error).
  bool BreakUnless(Cycles now, const isa::Instruction& inst);
  int TargetFor(const isa::Instruction& inst) const;
  void AddScalar(int32_t pc, Cycles issue, Cycles done, StallCategory cat);
  void Fail(Cycles now, const std::string& message);

  std::string path_;
  int core_;
  const isa::Program& program_;
  const isa::CoreProgram& code_;
  std::vector<Port<Command>*> targets_;
  std::vector<int> credits_;
  std::vector<int> outstanding_;  // per target (DMA choice)
  int first_dma_ = 0, num_dma_ = 0, vpu_ = 0, xlu_ = 0, ici_ = 0;
  std::vector<Port<Report>> reports_;
  // Bit i: reports_[i] holds a message (set by Delivered, cleared once Receive empties it), so a
  // step visits the ports with messages, not every unit's port; the same for the arrivals and
  // the barrier release (the arrivals port is the network's: a step need not touch it).
  std::vector<uint64_t> reports_pending_;
  bool arrivals_pending_ = false;
  bool release_pending_ = false;
  // The receiver numbers of the ports that are not report ports.
  static constexpr uint32_t kArrivalsPort = UINT32_MAX - 1;
  static constexpr uint32_t kReleasePort = UINT32_MAX;
  TransferNetwork::Connection arrivals_;
  Port<SyncMessage> release_;
  Port<SyncMessage>* hub_ = nullptr;
  isa::MachineState* values_ = nullptr;
  ErrorSink* errors_;
  int unit_id_;

  size_t pc_ = 0;
  std::vector<Loop> loops_;
  uint64_t loop_serial_ = 0;
  uint64_t min_break_trips_ = UINT64_MAX;
  int trip_level_ = -1;
  uint64_t* loop_opens_ = nullptr;
  // Each ctrl.loop's ctrl.endloop: one entry per loop, so a core's own state does not grow with
  // the length of its code (which cores running the same code share).
  isa::LoopStructure loop_structure_;
  std::vector<uint32_t> flags_;
  bool halted_ = false;
  bool in_barrier_ = false;
  uint64_t barrier_seq_ = 0;
  Cycles wait_since_;
  bool waiting_ = false;
  uint64_t next_seq_ = 0;
  Scoreboard scoreboard_;
  // The in-flight entry the instruction at pc_ last conflicted with (Scoreboard::kNone: none); a
  // cache of the scoreboard check, not state: the conflict lasts while the entry is in flight.
  uint64_t blocked_by_ = Scoreboard::kNone;
  // The issued instances not yet retired, in program order: sequence numbers
  // [next_seq_ - size, next_seq_) (every issued instance gets the next number and they retire in
  // order), so an instance is found by its number in O(1).
  std::deque<InFlight> inflight_;
  InFlight& InFlightAt(uint64_t seq);
  Cycles frontier_;
  uint64_t executed_ = 0;
  uint64_t loop_trips_ = 0;
  std::shared_ptr<const std::vector<uint64_t>> work_costs_;
  uint64_t work_ = 0;
  Profile profile_;
  // Counts an issue of the instruction at `pc`: its profile, executed_, work_.
  void CountExecution(size_t pc);
  StallAttribution* attribution_ = nullptr;

  State state_ = State::kIssuing;
  Cycles last_account_{0};

  TraceSink* trace_;               // null: no trace
  std::vector<int> trace_tracks_;  // per target, then the sequencer's own track last

  Counter* issued_;
  Counter* active_cycles_;
  Counter* stall_sync_;
  Counter* stall_barrier_;
  Counter* stall_scoreboard_;
  Counter* stall_queue_;
};

}  // namespace tpusim::sim
