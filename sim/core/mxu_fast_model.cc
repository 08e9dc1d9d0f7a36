// MxuFastModel: closed-form timing of a weight-stationary R x C systolic array.
//
// Derivation (DESIGN.md §4 "MXU (weight-stationary)"). mxu_pe_model.cc builds the same structure
// register by register and tests/mxu/ checks every number below against it. Cycles are absolute;
// "readable from cycle t" means written at the end of cycle t - 1. WL = R * wl, where
// wl = weight_load_cycles_per_row.
//
// 1. A matmul starting in cycle S, LHS [M, K], on a tile with N columns.
//    a[m, r] enters PE(r, 0) in cycle S + m + r (one cycle of skew per array row) and moves right
//    one PE per cycle; the partial sum of (m, c) moves down one PE per cycle. So PE(r, c) computes
//    row m in cycle S + m + r + c, adding its product to the sum PE(r-1, c) made the cycle before
//    (k = r order), and result (m, n) leaves PE(R-1, n) at the end of cycle S + m + (R-1) + n:
//      first result readable (m = 0, n = 0):   S + R      (the first row's last: S + R + N - 1)
//      done (last result, m = M-1, n = N-1):   S + (M-1) + (R-1) + (N-1) + 1 = S + M + R + N - 2
//    With N = C an isolated matmul takes M + R + C - 2 cycles from its first LHS row entering to
//    its last result: DESIGN.md's figure. K does not appear: partial sums cross all R rows.
//      LHS port (array row 0) takes row m in cycle S + m   -> the next matmul may start at S + M
//      PE(0,0) first busy in S, PE(R-1, C-1) last in S + M + R + C - 3
//                                                          -> PEs busy [S, S + M + R + C - 2)
//    So back-to-back matmuls (S' = S + M) stream one LHS row per cycle with no bubble.
//
// 2. load_weights starting in cycle L, weight_buffers = 2 (shadow tile).
//    Each column has a shift chain (a pass register per PE, apart from the shadow and active
//    weights), fed skewed one cycle per column like the LHS wavefront: column c's j-th shift
//    (j = 0..R-1, tile row R-1-j first) happens at the end of cycle L + c + (j+1)*wl - 1, and
//    after the R-th the chain is latched into column c's shadow registers (end of L + c + WL - 1).
//      column 0 shifts during [L, L + WL)                  -> the next load may start at L + WL
//    A swapping matmul copies shadow -> active in PE(r, c) at the start of cycle S + r + c, as its
//    first row arrives (TPU v1: new weights "take effect with the advancing wave", tpu-specs.md
//    §3.1). The latch must come first: S + r + c >= L + c + WL for every r, so
//      S >= L + WL                                         (load_weights.done = L + WL)
//    and the next load must not latch over a shadow tile the swap wave has not yet copied:
//      L' + c + WL - 1 >= S + r + c for every r < R, i.e. L' >= S + R - WL,
//    which in-order issue (L' >= S) already guarantees as WL >= R. That is the point of the
//    per-column skew: a load may start in the very cycle the matmul that swaps the previous tile
//    in starts, so the shift hides behind any matmul with M >= WL. (Without the skew, the latch
//    would overtake the swap wave; the PE model's checks catch that.)
//
// 3. weight_buffers = 1 (no shadow tile; SCALE-Sim's model, reference/scalesim.md). Rows shift
//    straight into the active weights, all columns at once, so no data may be in flight:
//      L >= drained = max over earlier matmuls of (S + M + R + C - 2)
//      S >= L + WL for every matmul after the load (the swap flag is ignored)
//
// 4. Issue: one in-order queue per MXU. Every op starts no earlier than `earliest` and the
//    previous op's start, and
//      load_weights:  L = max(earliest, prev start, prev load's L + WL, [drained if 1 buffer])
//      matmul:        S = max(earliest, prev start, prev matmul's S + M,
//                             [last load's L + WL if swapping or 1 buffer])
//
// 5. Cross-checks (pinned in tests/mxu/mxu_timing_test.cc).
//    a. Isolated load + matmul, N = C: done = WL + M + R + C - 2.
//    b. weight_buffers = 1, wl = 1, F folds of (load, matmul of M rows): load_0 at 0, matmul_0 at
//       R, array drained at R + M + R + C - 2 = P = 2R + C + M - 2, when load_1 starts. Each fold
//       takes SCALE-Sim's 2R + C + M - 2 and the last result is readable at F * P (for a last tile
//       with N = C). SCALE-Sim reports F * (2R + C + M - 2) - 1: the last cycle's 0-based index.
//    c. weight_buffers = 2, M >= WL: load_{i+1} starts with matmul_i, matmul_i at WL + i * M, so F
//       folds take WL + F * M + R + C - 2: one exposed weight load and one fill/drain.
//    d. weight_buffers = 2, M < WL: the shift port limits; matmul_i at (i + 1) * WL, so
//       F * WL + M + R + C - 2.
//
// Counters: streaming = sum of M; busy = |union of [S, S + M + R + C - 2)| (S never decreases, so
// the union only grows at its end); fill_drain = busy - streaming; weight_shift = sum of WL;
// MACs = sum of M * K * N.
//
// Values: for each LHS row m, s[0..N) = +0, then for k = 0..K-1 in order
// s = fl32(s + a[m, k] * w[k, :]), vectorized across the N columns (Eigen arrays: a product then a
// sum per element, never fused; this file is compiled with -ffp-contract=off). A general GEMM would
// reorder the sums and not be bit-exact. Results are applied in program order, which is the order
// in which the array writes any one accumulator word: two matmuls write word (row, n) in cycles
// S + m + R - 1 + n and S' + m' + R - 1 + n with S' >= S + M, and acc_row' + m' = acc_row + m
// with 0 <= m' < M', 0 <= m < M implies S' + m' > S + m.
#include "sim/core/mxu_fast_model.h"

#include <Eigen/Core>
#include <algorithm>

#include "common/check.h"
#include "sim/core/mxu_numerics.h"

namespace tpusim::sim {

MxuFastModel::MxuFastModel(const MxuArrayConfig& config)
    : MxuModel(config),
      tiles_(config),
      // A timing-only run never reads the accumulators (no rows); with values, pages are made as
      // rows are written.
      acc_(config.compute_values ? config.accumulator_rows : 0, config.cols),
      row_f32_(config.cols),
      row_s32_(config.cols) {}

StatusOr<MxuOpTiming> MxuFastModel::Issue(const MxuOp& op, Cycles earliest) {
  TPUSIM_RETURN_IF_ERROR(tiles_.Check(op));
  if (op.kind == MxuOp::Kind::kLoadWeights) {
    tiles_.Load(op);
    return IssueLoadWeights(earliest);
  }
  const std::shared_ptr<const MxuTile> tile = tiles_.MatMul(op);
  TPUSIM_CHECK(tile != nullptr) << "Check() let a matmul without weights through";
  MxuOpTiming t = IssueMatMul(op, *tile, earliest);
  if (config_.compute_values) ComputeValues(op, *tile);
  return t;
}

bool MxuFastModel::SaveState(StateWriter& w) const {
  tiles_.Save(w);
  // Each of these cycles only bounds a later start from below (max(...) with an earliest cycle
  // after the snapshot); busy_until_ enters the busy count as max(start, min(busy_until_, end)).
  for (Cycles t :
       {last_start_, load_port_free_, tile_ready_, lhs_port_free_, array_drained_, busy_until_}) {
    w.LowerBound(t);
  }
  // counters_.last_done (the latest completion, a figure for tests of the model alone) is not
  // timing state and the simulator never reads it: it is neither written nor shifted.
  return true;
}

void MxuFastModel::ShiftState(Cycles delta) {
  for (Cycles* t : {&last_start_, &load_port_free_, &tile_ready_, &lhs_port_free_,
                    &array_drained_, &busy_until_}) {
    *t += delta;
  }
}

MxuOpTiming MxuFastModel::IssueLoadWeights(Cycles earliest) {
  const Cycles wl = config_.WeightLoadCycles();
  Cycles start = std::max({earliest, last_start_, load_port_free_});
  if (config_.weight_buffers == 1) start = std::max(start, array_drained_);  // §3
  last_start_ = start;
  load_port_free_ = start + wl;  // §2: column 0 shifts for WL cycles
  tile_ready_ = start + wl;      // §2: S >= L + WL
  counters_.weight_loads += 1;
  counters_.weight_shift_cycles += wl;
  counters_.last_done = std::max(counters_.last_done, tile_ready_);
  return MxuOpTiming{start, load_port_free_, tile_ready_};
}

MxuOpTiming MxuFastModel::IssueMatMul(const MxuOp& op, const MxuTile& tile, Cycles earliest) {
  const Cycles m(static_cast<uint64_t>(op.m));
  Cycles start = std::max({earliest, last_start_, lhs_port_free_});
  if (op.swap_weights || config_.weight_buffers == 1)
    start = std::max(start, tile_ready_);  // §2, §3
  last_start_ = start;
  lhs_port_free_ = start + m;  // §1: one LHS row per cycle
  // §1: last result (M-1, N-1) readable, M + R + N - 2 after the start; PE(R-1, C-1) idle from
  // M + R + C - 2.
  const Cycles done = start + config_.MatmulCycles(op.m, tile.n);
  const Cycles busy_end = start + config_.MatmulCycles(op.m, config_.cols);
  array_drained_ = std::max(array_drained_, busy_end);
  counters_.matmuls += 1;
  counters_.streaming_cycles += m;
  counters_.busy_cycles += busy_end - std::max(start, std::min(busy_until_, busy_end));
  busy_until_ = std::max(busy_until_, busy_end);
  counters_.fill_drain_cycles = counters_.busy_cycles - counters_.streaming_cycles;
  counters_.useful_macs +=
      static_cast<uint64_t>(op.m) * static_cast<uint64_t>(op.k) * static_cast<uint64_t>(tile.n);
  counters_.last_done = std::max(counters_.last_done, done);
  return MxuOpTiming{start, lhs_port_free_, done};
}

void MxuFastModel::ComputeValues(const MxuOp& op, const MxuTile& tile) {
  const int64_t k_extent = op.k, n = tile.n, c = config_.cols;
  if (config_.accumulator_rows == 0) acc_.EnsureRows(op.acc_row + op.m);
  for (int64_t m = 0; m < op.m; ++m) {
    uint32_t* acc = acc_.MutableRow(op.acc_row + m);
    if (op.numerics == MxuNumerics::kBf16) {
      Eigen::Map<Eigen::ArrayXf> s(row_f32_.data(), n);
      s.setZero();
      for (int64_t k = 0; k < k_extent; ++k) {
        // One PE row: s[n] = fl32(s[n] + fl32(a * w[k, n])) for every column at once.
        const Eigen::Map<const Eigen::ArrayXf> w(tile.f32.data() + k * c, n);
        s = s + op.f32[m * k_extent + k] * w;
      }
      for (int64_t j = 0; j < n; ++j) {
        acc[j] = MxuAccumulateF32(acc[j], std::bit_cast<uint32_t>(row_f32_[j]), op.accumulate);
      }
    } else {
      using ArrayXu = Eigen::Array<uint32_t, Eigen::Dynamic, 1>;
      Eigen::Map<ArrayXu> s(row_s32_.data(), n);
      s.setZero();
      for (int64_t k = 0; k < k_extent; ++k) {
        const Eigen::Map<const Eigen::ArrayXi> w(tile.s32.data() + k * c, n);
        // int8 x int8 fits in int32; the sum wraps in uint32 (two's complement, no UB).
        s = s + (w * static_cast<int32_t>(op.s8[m * k_extent + k])).cast<uint32_t>();
      }
      for (int64_t j = 0; j < n; ++j) {
        acc[j] = MxuAccumulateS32(acc[j], row_s32_[j], op.accumulate);
      }
    }
  }
}

}  // namespace tpusim::sim
