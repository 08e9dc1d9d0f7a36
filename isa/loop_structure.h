// The ISA's control rules that every executor shares (issue 19: one semantics per instruction): the
// loop structure of a core's code (each ctrl.loop's ctrl.endloop, the trips a ctrl.break_unless
// lets a timing-only run make), the nesting limit, and what ctrl.break_unless reads. The
// interpreter (isa/interpreter.cc), the simulator's sequencer (sim/core/sequencer.cc) and the
// static counts (isa/program_traffic.cc, the simulator's progress totals) all call these; none
// matches loops or reads the predicate by itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "isa/instruction.h"
#include "isa/machine_state.h"

namespace tpusim::isa {

/// The loops of one core's code, matched once per program.
class LoopStructure {
 public:
  /// Matches every ctrl.loop of `code` with its ctrl.endloop (a stack, innermost first). Never
  /// fails: status() says whether the code is well formed, and loops left unmatched have no end.
  explicit LoopStructure(const std::vector<Instruction>& code);

  /// OK, or InvalidArgument "ctrl.endloop without a matching ctrl.loop" for the first unmatched
  /// ctrl.endloop, else "ctrl.loop without a matching ctrl.endloop" for the innermost ctrl.loop
  /// left open; error_index() is that instruction's index.
  const Status& status() const { return status_; }
  size_t error_index() const { return error_index_; }

  /// The index of the ctrl.endloop closing the ctrl.loop at `loop` (an internal error if `loop`
  /// is not a matched ctrl.loop).
  size_t EndOf(size_t loop) const;

  /// The trips an executor that computes no values makes of the ctrl.loop at `loop` (count
  /// `count`): `count`, or fewer when a ctrl.break_unless of that loop's own level leaves it, on
  /// trip `trips` + 1 (the smallest over such ctrl.break_unless).
  uint64_t AssumedTrips(size_t loop, uint64_t count) const;

 private:
  struct Loop {
    size_t begin = 0;                      // the ctrl.loop's index
    size_t end = static_cast<size_t>(-1);  // its ctrl.endloop's index (-1: unmatched)
    uint64_t break_trips = UINT64_MAX;     // trips its ctrl.break_unless allow (max: none)
  };
  // The entry of the ctrl.loop at `loop`, or null.
  const Loop* Find(size_t loop) const;

  // One entry per ctrl.loop, by index: the size grows with the loops, not with the code (cores
  // running the same code each hold one).
  std::vector<Loop> loops_;
  Status status_;
  size_t error_index_ = 0;
};

/// A ctrl.loop that would open loop number `open_loops` + 1: InvalidArgument "loops nested deeper
/// than 8" (kMaxLoopDepth) when `open_loops` loops are already open at the limit.
Status CheckLoopDepth(size_t open_loops);

/// Whether ctrl.break_unless `b` on core `core` leaves its loop: its predicate byte at b.addr in
/// b.space is 0. InvalidArgument "space=S (hbm, vmem or smem)" for another space, "addr ..." for
/// an address outside the memory.
StatusOr<bool> BreakUnlessLeaves(MachineState& state, int core, const op::CtrlBreakUnless& b);

/// The same for an executor that computes no values: it leaves on trip b.trips + 1, i.e. once
/// `trips_done` (trips of the loop completed) reaches b.trips.
inline bool BreakUnlessLeavesWithoutValues(const op::CtrlBreakUnless& b, uint64_t trips_done) {
  return trips_done >= b.trips;
}

}  // namespace tpusim::isa
