// MxuUnit: one MXU of a TensorCore on the timeline. It takes mxu.load_weights / mxu.matmul /
// mxu.pop commands from the sequencer in program order and drives the MXU array model (mxu_model.h,
// PE-level or fast, `--mxu-model`) for the array's timing and values; mxu.pop runs on the MXU's
// result path.
//
// Timing:
//  * load_weights / matmul: MxuModel::Issue(op, earliest = arrival cycle) gives start, unit_free
//  and
//    done (mxu_model.h). The unit takes the next command once the previous one has started in the
//    array (a one-deep staging slot; the queue itself holds core.unit_queue_depth commands). Completion
//    is reported at `done` (load: the tile can be swapped in; matmul: all results are in the
//    accumulators).
//  * pop of M rows: the result path moves one accumulator row (C words) per cycle into the VPU and
//  VMEM
//    (assumption, matching TPU v1's "one 256-element partial sum per clock" [P S1 §2]), plus
//    core.mxu.pop_latency_cycles: done = start + M + pop_latency, start = when the result path
//    is free. A pop queues on the result path, not in front of the array: the unit takes the
//    commands behind it at once, so the next blocks' matmuls stream while earlier blocks pop, as
//    TPU v2+ issue MXU pushes and pops from separate VLIW slots (tpu-specs.md §3.2, [S S2, S3]).
//    Results stream out of the array row by row (HC32: "LHS streams in, results stream out",
//    tpu-specs.md §3.2): a pop does not wait for the matmuls writing its rows to complete (the
//    sequencer lets it issue, isa::Region::result_stream), but moves row q of its block no earlier
//    than that row is final — the array finishes one row per cycle, the last at the matmul's
//    `done` — so start >= done_j - (acc_j + M_j - 1) + acc for every matmul j still writing the
//    rows (EarliestPopStart). A matmul overwriting rows a queued pop still reads waits (WAR).
#pragma once

#include <cstdint>
#include <memory>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "config/chip_config.h"
#include "isa/machine_state.h"
#include "sim/core/messages.h"
#include "sim/core/mxu_model.h"
#include "sim/core/stall_attribution.h"
#include "sim/engine/error_sink.h"
#include "sim/engine/port.h"
#include "sim/engine/stats.h"
#include "sim/engine/unit.h"

namespace tpusim::sim {

class MxuUnit : public Unit {
 public:
  /// InvalidArgument if the MXU config does not validate.
  static StatusOr<std::unique_ptr<MxuUnit>> Create(std::string path, int core, int index,
                                                   const config::ChipConfig& config,
                                                   MxuModelKind kind, isa::MachineState* state,
                                                   ErrorSink* errors, int unit_id,
                                                   StatRegistry& stats);

  Port<Command>& commands() { return commands_; }
  void set_reports(Port<Report>* reports) { reports_ = reports; }

  const std::string& path() const override { return path_; }
  void Step(Cycles now) override;
  Cycles NextWork(Cycles now) const override;
  bool event_driven() const override { return true; }
  bool SaveState(StateWriter& w) const override;
  void ShiftState(Cycles delta) override;
  /// The array model's counters as statistics (fast-forward); null for the PE model.
  MxuCounters* mutable_counters() { return model_->mutable_counters(); }

  /// Copies the model's counters into the stats; call once after the run.
  void Finish();
  /// Where the MXU's activity intervals go (the core's stall attribution; not owned, must be set).
  void set_attribution(StallAttribution* a) { attribution_ = a; }
  uint64_t useful_macs() { return model_->counters().useful_macs; }
  const MxuAccumulators& accumulators() { return model_->accumulators(); }
  MxuAccumulators TakeAccumulators() { return model_->TakeAccumulators(); }

 private:
  MxuUnit(std::string path, int core, int index, const config::ChipConfig& config,
          std::unique_ptr<MxuModel> model, isa::MachineState* state, ErrorSink* errors, int unit_id,
          StatRegistry& stats);

  // The model's op for an mxu.load_weights / mxu.matmul: its operand read through isa/execute.h
  // (shape only in a timing-only run).
  StatusOr<MxuOp> ModelOp(const isa::Instruction& inst) const;
  // mxu.pop's data effect from the model's accumulators (isa::WriteMxuPop).
  Status PopToVmem(const isa::Instruction& inst);

  struct PendingPop {
    Cycles done;
    Command cmd;
  };
  // A matmul's accumulator rows [lo, hi), of which row hi - 1 is final at `done` and each earlier
  // row one cycle before the next.
  struct AccWrite {
    uint64_t lo, hi;
    Cycles done;
  };
  // The first cycle a pop of rows [acc, acc + m) may start moving row `acc` so that every row it
  // moves (one per cycle) is final; drops the writes already final at `now`.
  Cycles EarliestPopStart(uint64_t acc, uint64_t m, Cycles now);

  std::string path_;
  int core_;
  int index_;
  int64_t pop_latency_;
  std::unique_ptr<MxuModel> model_;
  isa::MachineState* state_;  // null: timing-only (no values)
  ErrorSink* errors_;
  int unit_id_;
  Port<Command> commands_;
  Port<Report>* reports_ = nullptr;
  Cycles pull_after_{0};  // the next command is taken at or after this cycle
  Cycles pop_free_{0};
  Cycles matmul_free_{0};  // unit_free of the last matmul
  std::queue<PendingPop> pops_;
  std::vector<AccWrite> acc_writes_;  // matmuls whose rows are not all final yet, in issue order
  bool single_buffer_ = false;                  // core.mxu.weight_buffers == 1
  std::pair<int64_t, int64_t> shadow_{-1, -1};  // (K, N) of the shadow / active tiles
  std::pair<int64_t, int64_t> active_{-1, -1};
  StallAttribution* attribution_ = nullptr;

  Counter* matmuls_;
  Counter* weight_loads_;
  Counter* pops_count_;
  Counter* streaming_cycles_;
  Counter* busy_cycles_;
  Counter* fill_drain_cycles_;
  Counter* weight_shift_cycles_;
  Counter* weight_stall_cycles_;
  Counter* pop_cycles_;
  Counter* useful_macs_;
  Counter* flop_;
  Counter* vmem_read_;
  Counter* vmem_written_;
};

}  // namespace tpusim::sim
