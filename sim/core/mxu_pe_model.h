// MxuPeModel: the MXU simulated PE by PE, cycle by cycle — the reference the fast model is checked
// against (DESIGN.md §4). Each PE(r, c) has an active weight, a shadow weight, a pass register of
// its column's weight-shift chain, an LHS register (value and the row it belongs to, passed right)
// and a partial-sum register (passed down); every register of every PE is advanced every cycle, and
// each PE checks (TPUSIM_CHECK) that it multiplies by the tile program order says it should, that a
// weight latch never overwrites a shadow tile the swap wave has not copied yet, and that the
// partial sum it receives belongs to the LHS row it receives. Cost: O(R * C) per simulated cycle;
// idle stretches are skipped.
//
// Issue() injects the op in the first cycle the array's state allows it, then simulates a copy of
// the array ahead until the op has completed, to observe its `done` (later ops cannot delay an
// earlier op's results). accumulators() and counters() simulate a copy to the end.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "sim/core/mxu_model.h"
#include "sim/core/mxu_tiles.h"

namespace tpusim::sim {

class MxuPeModel final : public MxuModel {
 public:
  /// `config` must have been validated (CreateMxuModel does).
  explicit MxuPeModel(const MxuArrayConfig& config);

  StatusOr<MxuOpTiming> Issue(const MxuOp& op, Cycles earliest) override;
  const MxuAccumulators& accumulators() override;
  MxuAccumulators TakeAccumulators() override;
  const MxuCounters& counters() override;

 private:
  struct InflightMatMul {
    int64_t id = 0;
    uint64_t start = 0;
    int64_t m = 0, k = 0, n = 0;
    MxuNumerics numerics = MxuNumerics::kBf16;
    bool swap = false;
    bool accumulate = false;
    int64_t acc_row = 0;
    int64_t tile_seq = 0;
    std::shared_ptr<const std::vector<uint32_t>> lhs;  // [M, K] words; null when timing-only
    int64_t writes_left = 0;
  };
  struct InflightLoad {
    uint64_t start = 0;
    std::shared_ptr<const MxuTile> tile;
    int64_t swaps_before = 0;  // swapping matmuls issued before this load
  };
  // What the look-ahead watches for: the completion of one op.
  struct Watch {
    bool is_load = false;
    int64_t id = -1;  // matmul id or load tile seq
    uint64_t unit_free = 0;
    uint64_t done = 0;
    bool complete = false;
  };
  // Everything that changes from cycle to cycle (copyable, for the look-ahead).
  struct State {
    uint64_t now = 0;                                    // the next cycle to simulate
    std::vector<uint32_t> w, shadow, pass;               // weights [R, C]
    std::vector<int64_t> active_seq, shadow_seq, swaps;  // per-PE bookkeeping for the checks
    std::vector<uint32_t> a, p;                          // LHS and partial-sum registers
    std::vector<int64_t> tag;       // matmul id of the data in the PE, -1: none
    std::vector<int32_t> row;       // its LHS row
    std::vector<int64_t> feed_tag;  // this cycle's LHS feed, per array row
    std::vector<int32_t> feed_row;
    std::vector<uint32_t> feed_a;
    std::deque<InflightMatMul> matmuls;  // by id, contiguous
    std::deque<InflightLoad> loads;
    MxuCounters counters;
    Watch watch;
  };

  bool Idle(const State& s) const { return s.matmuls.empty() && s.loads.empty(); }
  bool Drained(const State& s) const;
  bool CanIssue(const State& s, const MxuOp& op) const;
  void AdvanceTo(State& s, uint64_t t, MxuAccumulators* acc) const;
  /// Simulates cycle s.now (LHS feed, PE compute, weight shifts), then ++s.now. Writes results into
  /// `acc` unless it is null (look-ahead).
  void Step(State& s, MxuAccumulators* acc) const;
  void StepWeights(State& s) const;
  void Finish();  // fills drained_ (a copy run to the end)

  MxuTileTracker tiles_;
  State state_;  // committed: cycles before state_.now are final
  MxuAccumulators acc_;
  uint64_t last_start_ = 0;
  int64_t next_matmul_id_ = 0;
  int64_t swaps_issued_ = 0;
  MxuCounters issued_;  // op counts and last_done, known at issue
  std::optional<MxuAccumulators> drained_acc_;
  MxuCounters drained_counters_;
};

}  // namespace tpusim::sim
