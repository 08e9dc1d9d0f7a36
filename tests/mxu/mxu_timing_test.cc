// Closed-form MXU timings pinned to exact cycle counts, with the derivation beside each assertion
// (mxu_fast_model.cc §1-§5 derives them). Small cases run on both models; the SCALE-Sim GEMMs on
// the 128x128 array run on the fast model only (timing-only).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/core/mxu_model.h"

namespace tpusim::sim {
namespace {

MxuArrayConfig Array(int64_t rows, int64_t cols, int64_t weight_buffers, int64_t wl = 1) {
  MxuArrayConfig c;
  c.rows = rows;
  c.cols = cols;
  c.weight_buffers = weight_buffers;
  c.weight_load_cycles_per_row = wl;
  c.compute_values = false;  // timing only; values are checked in the other tests
  return c;
}

MxuOp Load(int64_t k, int64_t n) { return MxuOp::LoadWeights(k, n, {}); }
MxuOp MatMul(int64_t m, int64_t k, bool swap, int64_t acc_row = 0) {
  return MxuOp::MatMul(m, k, {}, swap, false, acc_row);
}

std::unique_ptr<MxuModel> Make(MxuModelKind kind, const MxuArrayConfig& c) {
  auto m = CreateMxuModel(kind, c);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

MxuOpTiming Issue(MxuModel& model, const MxuOp& op, uint64_t earliest = 0) {
  auto t = model.Issue(op, Cycles(earliest));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : MxuOpTiming{};
}

class MxuTimingTest : public ::testing::TestWithParam<MxuModelKind> {};

TEST_P(MxuTimingTest, IsolatedLoadThenMatMul) {
  auto mxu = Make(GetParam(), Array(4, 4, 2));
  const MxuOpTiming load = Issue(*mxu, Load(4, 4));
  EXPECT_EQ(load.start.value(), 0u);
  EXPECT_EQ(load.done.value(), 4u);       // R = 4 rows shifted, one per cycle: latched by cycle 4
  EXPECT_EQ(load.unit_free.value(), 4u);  // the shift port is free again at the same cycle
  const MxuOpTiming mm = Issue(*mxu, MatMul(3, 4, /*swap=*/true));
  EXPECT_EQ(mm.start.value(), 4u);      // a swap needs the latched tile: S >= L + R = 4
  EXPECT_EQ(mm.unit_free.value(), 7u);  // S + M: rows 0..2 enter PE(0,0) in cycles 4, 5, 6
  // Last result (m=2, n=3) is computed by PE(R-1=3, 3) in cycle S + m + r + c = 4 + 2 + 3 + 3 = 12,
  // readable from 13 = S + M + R + N - 2 = 4 + 3 + 4 + 4 - 2: M + R + C - 2 = 9 cycles after S.
  EXPECT_EQ(mm.done.value(), 13u);
  const MxuCounters& c = mxu->counters();
  EXPECT_EQ(c.streaming_cycles.value(), 3u);  // M
  EXPECT_EQ(c.busy_cycles.value(), 9u);       // PEs busy [S, S + M + R + C - 2) = [4, 13)
  // R + C - 2 of fill and drain around the 3 streaming cycles.
  EXPECT_EQ(c.fill_drain_cycles.value(), 6u);
  EXPECT_EQ(c.weight_shift_cycles.value(), 4u);  // R
  EXPECT_EQ(c.last_done.value(), 13u);
}

TEST_P(MxuTimingTest, NarrowTileFinishesWhenItsLastColumnDrains) {
  // K=2 < R=5 and N=3 < C=6: partial sums still cross all R rows, but only columns 0..N-1 matter.
  auto mxu = Make(GetParam(), Array(5, 6, 2));
  Issue(*mxu, Load(2, 3));
  const MxuOpTiming mm = Issue(*mxu, MatMul(4, 2, true));
  EXPECT_EQ(mm.start.value(), 5u);  // R = 5 shifts even for a 2-row tile (the padding rows too)
  // done = S + M + R + N - 2 = 5 + 4 + 5 + 3 - 2 = 15 (with N = C it would be 18).
  EXPECT_EQ(mm.done.value(), 15u);
  // Useful MACs: M * K * N = 4 * 2 * 3 (the array did R * C = 30 per row).
  EXPECT_EQ(mxu->counters().useful_macs, 24u);
  // PEs busy until PE(R-1, C-1) finishes: [S, S + M + R + C - 2) = [5, 18), 13 cycles.
  EXPECT_EQ(mxu->counters().busy_cycles.value(), 13u);
}

TEST_P(MxuTimingTest, BackToBackMatMulsStreamOneRowPerCycle) {
  auto mxu = Make(GetParam(), Array(4, 4, 2));
  Issue(*mxu, Load(4, 4));
  const MxuOpTiming a = Issue(*mxu, MatMul(5, 4, true, 0));
  const MxuOpTiming b = Issue(*mxu, MatMul(3, 4, false, 5));
  EXPECT_EQ(a.start.value(), 4u);
  EXPECT_EQ(b.start.value(), 9u);  // = a.start + M_a: no bubble between the two LHS streams
  EXPECT_EQ(a.done.value(), 4u + 5 + 4 + 4 - 2);  // 15
  EXPECT_EQ(b.done.value(), 9u + 3 + 4 + 4 - 2);  // 18 = one fill/drain for both
  // Busy [4, 15) then [9, 18): union [4, 18) = 14 cycles = 8 streaming + R + C - 2 = 6 once.
  EXPECT_EQ(mxu->counters().busy_cycles.value(), 14u);
  EXPECT_EQ(mxu->counters().fill_drain_cycles.value(), 6u);
}

TEST_P(MxuTimingTest, ShadowLoadOverlapsTheRunningMatMul) {
  // weight_buffers = 2: the next tile shifts in while the current one streams.
  auto mxu = Make(GetParam(), Array(4, 4, 2));
  Issue(*mxu, Load(4, 4));                                 // [0, 4)
  const MxuOpTiming m0 = Issue(*mxu, MatMul(6, 4, true));  // S0 = 4
  const MxuOpTiming l1 = Issue(*mxu, Load(4, 4));          // starts with m0: L1 = S0 = 4
  const MxuOpTiming m1 = Issue(*mxu, MatMul(6, 4, true));  // max(S0 + M, L1 + R) = max(10, 8)
  EXPECT_EQ(m0.start.value(), 4u);
  EXPECT_EQ(l1.start.value(), 4u);
  EXPECT_EQ(l1.done.value(), 8u);
  EXPECT_EQ(m1.start.value(), 10u);
  EXPECT_EQ(m1.done.value(), 10u + 6 + 4 + 4 - 2);  // 22: the load cost nothing
}

TEST_P(MxuTimingTest, NonSwappingMatMulDoesNotWaitForTheLoad) {
  auto mxu = Make(GetParam(), Array(4, 4, 2));
  Issue(*mxu, Load(4, 4));
  Issue(*mxu, MatMul(2, 4, true));                            // S = 4
  const MxuOpTiming l = Issue(*mxu, Load(4, 4));              // L = 4 (in order, port free)
  const MxuOpTiming keep = Issue(*mxu, MatMul(2, 4, false));  // old weights: S = 4 + 2 = 6 < L + R
  const MxuOpTiming swap = Issue(*mxu, MatMul(2, 4, true));   // new weights: S = L + R = 8
  EXPECT_EQ(l.start.value(), 4u);
  EXPECT_EQ(keep.start.value(), 6u);
  EXPECT_EQ(swap.start.value(), 8u);
}

TEST_P(MxuTimingTest, SlowWeightShiftScalesTheLoad) {
  // weight_load_cycles_per_row = 3: a load takes R * 3 = 12 cycles.
  auto mxu = Make(GetParam(), Array(4, 3, 2, 3));
  const MxuOpTiming l = Issue(*mxu, Load(4, 3));
  EXPECT_EQ(l.done.value(), 12u);
  const MxuOpTiming mm = Issue(*mxu, MatMul(1, 4, true));
  EXPECT_EQ(mm.start.value(), 12u);
  EXPECT_EQ(mm.done.value(), 12u + 1 + 4 + 3 - 2);  // M=1: 6 cycles of pure fill/drain
  EXPECT_EQ(mxu->counters().weight_shift_cycles.value(), 12u);
}

TEST_P(MxuTimingTest, EarliestDelaysTheOpAndIdleTimeIsSkipped) {
  auto mxu = Make(GetParam(), Array(3, 3, 2));
  Issue(*mxu, Load(3, 3), 100);                                // operands ready at 100
  const MxuOpTiming mm = Issue(*mxu, MatMul(2, 3, true), 50);  // 50 < 103: waits for the tile
  EXPECT_EQ(mm.start.value(), 103u);
  EXPECT_EQ(mm.done.value(), 103u + 2 + 3 + 3 - 2);
  const MxuOpTiming late = Issue(*mxu, MatMul(2, 3, false), 1000);
  EXPECT_EQ(late.start.value(), 1000u);
  // Two separate busy spells.
  EXPECT_EQ(mxu->counters().busy_cycles.value(), 2 * (2u + 3 + 3 - 2));
}

TEST_P(MxuTimingTest, SingleWeightBufferIsScaleSimPerFold) {
  // weight_buffers = 1: load, stream, drain, one fold at a time. Per fold 2R + C + M - 2:
  // R = 4 shift + (M + R - 1) stream with skew + (C - 1) output skew, here 2*4 + 3 + 5 - 2 = 14.
  auto mxu = Make(GetParam(), Array(4, 3, 1));
  for (int fold = 0; fold < 3; ++fold) {
    const MxuOpTiming l = Issue(*mxu, Load(4, 3));
    const MxuOpTiming mm = Issue(*mxu, MatMul(5, 4, true, 0));
    EXPECT_EQ(l.start.value(), 14u * fold);  // waits for the previous fold to drain
    EXPECT_EQ(mm.start.value(), 14u * fold + 4);
    EXPECT_EQ(mm.done.value(), 14u * (fold + 1));
  }
  // SCALE-Sim would report F * (2R + C + M - 2) - 1 = 41: the 0-based index of the last cycle.
  EXPECT_EQ(mxu->counters().last_done.value() - 1, 41u);
}

TEST_P(MxuTimingTest, SingleWeightBufferMatMulWaitsForTheLoadEvenWithoutSwap) {
  auto mxu = Make(GetParam(), Array(3, 3, 1));
  Issue(*mxu, Load(3, 3));
  const MxuOpTiming mm = Issue(*mxu, MatMul(2, 3, /*swap=*/false));
  EXPECT_EQ(mm.start.value(), 3u);
}

// isa::MxuTiming::FoldCycles — the steady-state cycles per (load_weights, swapping matmul) fold
// that the compiler's cost estimates use (compiler/lower/plan_dot.cc) — is what both models do:
// consecutive matmul starts of a long fold sequence are FoldCycles(M) apart, with and without the
// shadow tile, for M below, at and above WL and for slow weight shifts.
TEST_P(MxuTimingTest, FoldCyclesIsTheSteadyStateIntervalBetweenFolds) {
  for (int64_t wb : {1, 2}) {
    for (int64_t wl : {1, 3}) {
      for (int64_t m : {4, 16, 48, 60}) {
        SCOPED_TRACE(testing::Message() << "weight_buffers=" << wb << " wl=" << wl << " M=" << m);
        const MxuArrayConfig c = Array(16, 16, wb, wl);
        auto mxu = Make(GetParam(), c);
        std::vector<uint64_t> starts;
        for (int fold = 0; fold < 6; ++fold) {
          Issue(*mxu, Load(16, 16));
          starts.push_back(Issue(*mxu, MatMul(m, 16, true)).start.value());
        }
        for (size_t i = 2; i < starts.size(); ++i) {
          EXPECT_EQ(starts[i] - starts[i - 1], static_cast<uint64_t>(c.Timing().FoldCycles(m)));
        }
      }
    }
  }
  // The closed forms themselves (mxu_fast_model.cc §5b-d), on a 128 x 128 array with wl = 1.
  const isa::MxuTiming t{128, 128, 2, 1};
  EXPECT_EQ(t.WeightLoadCycles(), 128);
  EXPECT_EQ(t.MatmulCycles(256, 128), 256 + 128 + 128 - 2);
  EXPECT_EQ(t.DrainCycles(64), 128 + 64 - 2);  // after the last LHS row of a 64-column tile
  EXPECT_EQ(t.MatmulCycles(256, 64), 256 + t.DrainCycles(64));
  EXPECT_EQ(isa::MxuPopCycles(256, 8), 256 + 8);  // one row a cycle, then the pop latency
  EXPECT_EQ(t.FoldCycles(8), 128);    // GEMV: the shift port limits
  EXPECT_EQ(t.FoldCycles(512), 512);  // the LHS port limits
  EXPECT_EQ((isa::MxuTiming{128, 128, 1, 1}.FoldCycles(512)), 128 + 512 + 128 + 128 - 2);
}

INSTANTIATE_TEST_SUITE_P(Models, MxuTimingTest,
                         ::testing::Values(MxuModelKind::kPe, MxuModelKind::kFast),
                         [](const auto& info) {
                           return info.param == MxuModelKind::kPe ? std::string("Pe")
                                                                  : std::string("Fast");
                         });

// SCALE-Sim's five GEMMs on a 128x128 array (reference/scalesim.md).

struct Gemm {
  int64_t m, k, n;
  uint64_t scalesim_cycles;
  double scalesim_utilization_percent;
};

// Runs the GEMM as SCALE-Sim folds it: N tiles outer, K tiles inner, each fold = load + stream M
// rows, accumulating over the K folds. Returns the last `done`.
uint64_t RunFolds(MxuModel& mxu, const Gemm& g) {
  const int64_t r = mxu.config().rows, c = mxu.config().cols;
  uint64_t last = 0;
  for (int64_t n0 = 0; n0 < g.n; n0 += c) {
    for (int64_t k0 = 0; k0 < g.k; k0 += r) {
      const int64_t kt = std::min(r, g.k - k0), nt = std::min(c, g.n - n0);
      Issue(mxu, Load(kt, nt));
      last = Issue(mxu, MxuOp::MatMul(g.m, kt, {}, true, k0 > 0, 0)).done.value();
    }
  }
  return last;
}

const Gemm kScaleSimGemms[] = {
    {128, 128, 128, 509, 25.1}, {512, 512, 512, 14303, 57.3},    {1024, 1024, 1024, 89983, 72.8},
    {64, 784, 128, 3121, 12.6}, {256, 4096, 1024, 163327, 40.1},
};

TEST(MxuScaleSimTest, NoOverlapReproducesScaleSimTotals) {
  for (const Gemm& g : kScaleSimGemms) {
    SCOPED_TRACE(testing::Message() << g.m << "x" << g.k << "x" << g.n);
    auto mxu = Make(MxuModelKind::kFast, Array(128, 128, 1));
    const uint64_t done = RunFolds(*mxu, g);
    // F folds of 2R + C + M - 2 each; SCALE-Sim counts the last cycle's 0-based index: done - 1.
    const uint64_t folds = static_cast<uint64_t>(((g.k + 127) / 128) * ((g.n + 127) / 128));
    EXPECT_EQ(done, folds * (2 * 128 + 128 + g.m - 2));
    EXPECT_EQ(done - 1, g.scalesim_cycles);
    // Its overall utilization, M*K*N / (total cycles * R * C), to the table's 0.1 %.
    const double util = 100.0 * static_cast<double>(mxu->counters().useful_macs) /
                        (static_cast<double>(g.scalesim_cycles) * 128 * 128);
    EXPECT_NEAR(util, g.scalesim_utilization_percent, 0.05);
  }
}

TEST(MxuScaleSimTest, DoubleBufferedWeightsHideTheShift) {
  // weight_buffers = 2, M >= R: load_{i+1} starts with matmul_i, so F folds cost
  // R (first load) + F * M + R + C - 2 (one fill/drain): mxu_fast_model.cc §5c.
  for (const Gemm& g : kScaleSimGemms) {
    SCOPED_TRACE(testing::Message() << g.m << "x" << g.k << "x" << g.n);
    auto mxu = Make(MxuModelKind::kFast, Array(128, 128, 2));
    const uint64_t done = RunFolds(*mxu, g);
    const uint64_t folds = static_cast<uint64_t>(((g.k + 127) / 128) * ((g.n + 127) / 128));
    if (g.m >= 128) {
      EXPECT_EQ(done, 128 + folds * g.m + 128 + 128 - 2);
    } else {
      // §5d, M < R: the shift port limits: matmul_i starts at (i + 1) * R.
      EXPECT_EQ(done, folds * 128 + g.m + 128 + 128 - 2);
    }
  }
  // The 1024^3 GEMM: 64 folds * 1024 rows + 382 = 65,918 cycles, 99.4 % of the array (SCALE-Sim,
  // without the shadow tile: 89,983 cycles, 72.8 %).
  auto mxu = Make(MxuModelKind::kFast, Array(128, 128, 2));
  EXPECT_EQ(RunFolds(*mxu, kScaleSimGemms[2]), 65918u);
}

TEST(MxuScaleSimTest, PeModelAgreesOnASmallFoldSequence) {
  // The same fold loop on a 16x16 array, both weight-buffer modes, PE model vs closed form.
  for (int64_t wb : {1, 2}) {
    const Gemm g{20, 40, 24, 0, 0};  // K = 40 -> 3 K tiles (16, 16, 8), N = 24 -> 2 N tiles
    auto pe = Make(MxuModelKind::kPe, Array(16, 16, wb));
    auto fast = Make(MxuModelKind::kFast, Array(16, 16, wb));
    const uint64_t a = RunFolds(*pe, g), b = RunFolds(*fast, g);
    EXPECT_EQ(a, b);
    if (wb == 1) {
      // F = 6 folds of P = 2R + C + M - 2, except that the last fold's results are complete once
      // its N_last = 8 columns drain, C - N_last = 8 cycles before the array is empty: 6P - 8.
      EXPECT_EQ(a, 6u * (2 * 16 + 16 + 20 - 2) - 8);
    } else {
      // M = 20 >= R: R + F*M + R + N_last - 2 = 16 + 120 + 16 + 8 - 2 (the last N tile is 8 wide).
      EXPECT_EQ(a, 16u + 6 * 20 + 16 + 8 - 2);
    }
    EXPECT_EQ(pe->counters(), fast->counters());
  }
}

}  // namespace
}  // namespace tpusim::sim
