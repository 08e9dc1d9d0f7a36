// Loop regions: how a `while` too long to unroll reaches the lowering (while-lowering pass,
// compiler/passes/while_lowering.h). The loop's body is inlined into the entry computation between
// two markers, so every later pass and the lowering see one flat instruction list:
//
//   %w.loop_begin = S custom-call(S %init), custom_call_target="tpusim$loop_begin",
//                   backend_config="TRIPS"
//   ... the body's instructions, its parameter replaced by %w.loop_begin ...
//   %w.loop_end = S custom-call(S %w.loop_begin, S %body_root),
//   custom_call_target="tpusim$loop_end"
//
// Semantics (what the lowering emits, compiler/lower/lower_loop.cc): loop_begin's value is the loop
// state, a set of HBM buffers of its own; it copies %init into them and opens `ctrl.loop
// count=TRIPS`. Everything up to loop_end runs once per trip, at the same addresses every trip.
// loop_end copies the body's results into the state buffers (unless the HBM plan made the body
// write them there directly) and closes the loop with `ctrl.endloop`; its value is the state.
// A region is executed TRIPS times, so a value defined before it and read inside it stays live
// until its loop_end (hbm_plan.cc). Regions nest; loop_begin belongs to the enclosing region,
// loop_end to its own.
//
// A data-dependent while (no trip count known at compile time) becomes a region whose TRIPS is
// kBranchLoopTrips (the ISA's largest count, an upper bound) and whose condition is inlined at its
// top, followed by a break marker:
//
//   %w.loop_break = () custom-call(pred[] %cond_root), custom_call_target="tpusim$loop_break",
//                   backend_config="HINT"
//
// which the lowering emits as `ctrl.break_unless` on the pred's HBM buffer: the loop ends on the
// trip whose condition is false, as XLA's while does. HINT is the trip count a timing-only
// simulation assumes (the evaluator's count or --trip-count). Nothing of the body is placed
// before the marker (no pass moves instructions across a region marker).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/status.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"

namespace tpusim::compiler {

inline constexpr char kLoopBeginTarget[] = "tpusim$loop_begin";
inline constexpr char kLoopEndTarget[] = "tpusim$loop_end";
inline constexpr char kLoopBreakTarget[] = "tpusim$loop_break";
/// The count of a branch loop's ctrl.loop: 2^32 - 1, the largest the ISA's count field holds.
inline constexpr int64_t kBranchLoopTrips = 0xFFFFFFFF;

bool IsLoopBegin(const hlo::HloInstruction& inst);
bool IsLoopEnd(const hlo::HloInstruction& inst);
bool IsLoopBreak(const hlo::HloInstruction& inst);
/// loop_begin, loop_end or loop_break: instructions no pass may move others across.
bool IsLoopMarker(const hlo::HloInstruction& inst);
/// The trip count a loop_begin carries in its backend_config; -1 when it is not a loop_begin or the
/// count does not parse.
int64_t LoopTrips(const hlo::HloInstruction& begin);

/// The loop regions of one computation, from its instruction order.
struct LoopRegions {
  /// The loop_begin of the innermost region that contains each instruction (absent: none).
  std::map<const hlo::HloInstruction*, const hlo::HloInstruction*> innermost;
  /// Each loop_begin's loop_end, and the loop_begin of the region around it (absent: none).
  std::map<const hlo::HloInstruction*, const hlo::HloInstruction*> end_of;
  std::map<const hlo::HloInstruction*, const hlo::HloInstruction*> parent;

  /// The loop_begin of the innermost region containing `inst`; nullptr outside every region.
  const hlo::HloInstruction* InnermostOf(const hlo::HloInstruction* inst) const;
  /// The loop_begins of the regions that contain `inst`, innermost first.
  std::vector<const hlo::HloInstruction*> Enclosing(const hlo::HloInstruction* inst) const;
  bool empty() const { return end_of.empty(); }
};

/// Scans `comp` in order. Errors (InvalidArgument): a loop_end whose operand 0 is not the open
/// loop_begin, or a loop_begin never closed.
StatusOr<LoopRegions> FindLoopRegions(const hlo::HloComputation& comp);

}  // namespace tpusim::compiler
