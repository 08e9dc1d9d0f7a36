// StallAttribution: where a TensorCore's cycles went (sim_result.h StallCategory), computed while
// the run lasts in memory bounded by the instructions in flight, not by the instructions executed.
//
// Inputs:
//  * retire segments [start, end) in cycles, each with the category of the instruction the core
//    was waiting for (sequencer.h: in-order retirement; consecutive, non-overlapping, in time
//    order);
//  * the MXUs' activity intervals [start, end) in cycles: LHS rows streaming into the array,
//    weight rows shifting in, a latching matmul waiting for its weights (mxu_unit.h).
// Each segment's cycles go first to array_active (covered by streaming on any MXU of the core),
// then weight_shift (covered by shifting, not streaming), then weight_stall (covered by waiting
// only), and the rest to the segment's own category. The totals equal those of the same overlay
// computed once over the whole run: Flush() is exact as long as every activity interval added
// afterwards starts at or after the end of the last segment flushed, which holds when it is
// called between engine cycles (an MXU interval added at cycle t starts at t or later; a segment
// retired at t ends at t + 1 at the latest). AddActivity checks it.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/engine/snapshot.h"
#include "sim/sim_result.h"

namespace tpusim::sim {

/// The MXU activity classes of the overlay, in priority order.
enum class MxuActivityKind : int { kStreaming = 0, kShifting = 1, kWaiting = 2 };

class StallAttribution {
 public:
  using Interval = std::pair<uint64_t, uint64_t>;  // [start, end) in cycles

  /// A retire segment (in time order, each starting where the previous ended or later).
  void AddSegment(uint64_t start, uint64_t end, StallCategory category);
  /// An MXU activity interval; it must start at or after the end of the last flushed segment
  /// (internal error otherwise).
  void AddActivity(MxuActivityKind kind, uint64_t start, uint64_t end);
  /// Attributes every buffered segment and drops the activity no later segment can overlap.
  void Flush();
  /// Cycles per StallCategory of the segments flushed so far.
  const std::array<uint64_t, kNumStallCategories>& totals() const { return totals_; }

  /// Fast-forward (snapshot.h): the timing state (buffered segments and intervals, relative to
  /// the snapshot's base cycle) and the totals as statistics.
  void Save(StateWriter& w) const;
  void SaveStats(std::vector<uint64_t>& out) const;
  void AdvanceStats(const uint64_t* delta, uint64_t times);
  void Shift(Cycles delta);

 private:
  struct Segment {
    uint64_t start;
    uint64_t end;
    StallCategory category;
  };
  std::vector<Segment> segments_;
  // Per class: intervals not yet merged (new) and the merged union of the classes up to it
  // (unions_[0] = streaming, [1] = streaming + shifting, [2] = all), clipped to start at
  // flushed_end_.
  std::array<std::vector<Interval>, 3> new_;
  std::array<std::vector<Interval>, 3> unions_;
  uint64_t flushed_end_ = 0;
  std::array<uint64_t, kNumStallCategories> totals_{};
};

}  // namespace tpusim::sim
