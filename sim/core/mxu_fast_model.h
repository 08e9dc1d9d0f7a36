// MxuFastModel: the MXU with closed-form timing (derived at the top of mxu_fast_model.cc) and
// values computed tile by tile in the array's own summation order, vectorized across columns with
// Eigen. Cost per op: O(1) for timing, O(M * K * N) for values (nothing when timing-only). Agrees
// with MxuPeModel on every cycle number and every bit (tests/mxu/mxu_models_agree_test.cc).
#pragma once

#include <memory>
#include <vector>

#include "sim/core/mxu_model.h"
#include "sim/core/mxu_tiles.h"

namespace tpusim::sim {

class MxuFastModel final : public MxuModel {
 public:
  /// `config` must have been validated (CreateMxuModel does).
  explicit MxuFastModel(const MxuArrayConfig& config);

  StatusOr<MxuOpTiming> Issue(const MxuOp& op, Cycles earliest) override;
  const MxuAccumulators& accumulators() override { return acc_; }
  MxuAccumulators TakeAccumulators() override { return std::move(acc_); }
  const MxuCounters& counters() override { return counters_; }
  bool SaveState(StateWriter& w) const override;
  void ShiftState(Cycles delta) override;
  MxuCounters* mutable_counters() override { return &counters_; }

 private:
  MxuOpTiming IssueLoadWeights(Cycles earliest);
  MxuOpTiming IssueMatMul(const MxuOp& op, const MxuTile& tile, Cycles earliest);
  void ComputeValues(const MxuOp& op, const MxuTile& tile);

  MxuTileTracker tiles_;
  MxuAccumulators acc_;
  MxuCounters counters_;
  // Timing state, all absolute cycles (see the derivation in mxu_fast_model.cc).
  Cycles last_start_;              // start of the previously issued op (in-order issue)
  Cycles load_port_free_;          // L + R*wl of the last load_weights
  Cycles tile_ready_;              // L + R*wl of the last load_weights: a swap may start from here
  Cycles lhs_port_free_;           // S + M of the last matmul
  Cycles array_drained_;           // max S + M + R + C - 2: no PE computes from here on
  Cycles busy_until_;              // end of the union of PE-busy intervals so far
  std::vector<float> row_f32_;     // one result row being summed (kBf16)
  std::vector<uint32_t> row_s32_;  // one result row being summed (kInt8)
};

}  // namespace tpusim::sim
