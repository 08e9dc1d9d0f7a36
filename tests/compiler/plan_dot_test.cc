// PlanDot (compiler/lower/plan_dot.h): the decisions of a dot's MXU kernel — blocks, K split,
// buffers, accumulator sets, row split and the loop order — on tiny, tpu-v3 and tpu-v4, with no
// instruction emitted.
#include "compiler/lower/plan_dot.h"

#include <gtest/gtest.h>

#include "config/config_loader.h"

namespace tpusim::compiler {
namespace {

config::ChipConfig Config(const std::string& name) {
  auto c = config::LoadChipConfig(name);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : config::ChipConfig{};
}

// The dot's share of VMEM as LowerDot gives it without an epilogue: two thirds of the capacity.
int64_t DotVmem(const config::ChipConfig& c) { return (c.core.vmem_bytes - 3 * 64) * 2 / 3; }

DotPlan Plan(const DotShape& d, const config::ChipConfig& c, int64_t vmem, bool double_buffer) {
  StatusOr<DotPlan> p = PlanDot(d, c, vmem, double_buffer);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : DotPlan{};
}

// Invariants every plan keeps: whole R-row K chunks (or the whole K), whole sublane groups of rows
// (or the whole M), the accumulator sets fit, and the working set fits the VMEM it was given.
void ExpectConsistent(const DotPlan& p, int64_t vmem) {
  const DotShape& d = p.shape;
  const DotBlocks& b = p.blocks;
  EXPECT_GE(b.Mc, 1);
  EXPECT_LE(b.Mc, d.M);
  EXPECT_TRUE(b.Kc == d.K || b.Kc % p.mxu.rows == 0) << b.Kc;
  EXPECT_TRUE(b.Mc == d.M || b.Mc % 8 == 0 || b.Mc < 8) << b.Mc;
  EXPECT_LE(b.Nc, d.N);
  EXPECT_EQ(p.input_buffers, DotInputBuffers(b.nbuf));
  EXPECT_LE(p.AccSetRows(), b.Mc * b.tiles_per_mxu);
  EXPECT_LE(p.acc_sets * p.AccSetRows(), p.acc_rows);
  const int64_t bytes = p.input_buffers * (b.Mc * b.Kc * d.le * d.lhs_copies + b.Kc * b.Nc * d.re) +
                        b.nbuf * b.Mc * b.Nc * d.oe + p.ksplit * b.Mc * d.N * 4 * (p.ksplit > 1);
  EXPECT_LE(bytes, vmem);
}

TEST(PlanDotTest, TinySmallGemmKeepsBothOperandsWholeInVmem) {
  // tiny: one 8x8 MXU, 256 accumulator rows, 1 MiB VMEM. [64,64] x [64,64] f32 fits whole, so
  // Kc = K (the LHS is read once) and the weights are read once; M is cut by the accumulators.
  // The pipeline estimate prefers Nc = 40 (5 tiles) with Mc = 24 (three M blocks, two sets of
  // 5 x 24 rows): 4,628 simulated cycles, against 4,756 for the Nc = 16, Mc = 64 plan the
  // earlier estimate (a fixed exposed-pop term) chose.
  const config::ChipConfig c = Config("tiny");
  const DotShape d{.B = 1, .M = 64, .K = 64, .N = 64, .le = 4, .re = 4, .oe = 4};
  const DotPlan p = Plan(d, c, DotVmem(c), /*double_buffer=*/true);
  ExpectConsistent(p, DotVmem(c));
  EXPECT_EQ(p.ksplit, 1);  // one MXU: nothing to split K over
  EXPECT_EQ(p.blocks.Kc, 64);
  EXPECT_EQ(p.blocks.Mc, 24);
  EXPECT_EQ(p.blocks.Nc, 40);
  EXPECT_EQ(p.blocks.tiles_per_mxu, 5);
  EXPECT_EQ(p.acc_sets, 2);
  EXPECT_EQ(p.blocks.nbuf, 2);
  EXPECT_EQ(p.input_buffers, 3);
  EXPECT_GE(p.acc_sets, 2);
  EXPECT_EQ(p.RowGroups(64, 16), 1);  // one MXU: no row split
}

TEST(PlanDotTest, SingleBufferWhenDoubleBufferingIsOffOrDoesNotFit) {
  const config::ChipConfig c = Config("tiny");
  const DotShape d{.B = 1, .M = 64, .K = 64, .N = 64, .le = 4, .re = 4, .oe = 4};
  EXPECT_EQ(Plan(d, c, DotVmem(c), /*double_buffer=*/false).blocks.nbuf, 1);
  // The smallest double-buffered blocks ([1, 8] LHS and [8, 8] weights three times, two [1, 8]
  // results) need 928 bytes; single-buffered, 320. With 600 bytes, one buffer of each.
  const DotPlan p = Plan(d, c, 600, /*double_buffer=*/true);
  ExpectConsistent(p, 600);
  EXPECT_EQ(p.blocks.nbuf, 1);
  EXPECT_EQ(p.input_buffers, 1);
}

TEST(PlanDotTest, KIsChunkedInWholeTilesWhenTheOperandsDoNotFit) {
  // tiny, [64, 4096] x [4096, 64] f32: the LHS and weights are 1 MiB each, so K is cut into
  // R-row multiples, balanced (no short last chunk).
  const config::ChipConfig c = Config("tiny");
  const DotShape d{.B = 1, .M = 64, .K = 4096, .N = 64, .le = 4, .re = 4, .oe = 4};
  const DotPlan p = Plan(d, c, DotVmem(c), true);
  ExpectConsistent(p, DotVmem(c));
  EXPECT_LT(p.blocks.Kc, 4096);
  EXPECT_EQ(p.blocks.Kc % 8, 0);
  // Balanced: the n chunks are ceil(K / n) rounded up to whole tiles.
  const int64_t n = (4096 + p.blocks.Kc - 1) / p.blocks.Kc;
  EXPECT_GT(n, 1);
  EXPECT_EQ(p.blocks.Kc, ((4096 + n - 1) / n + 7) / 8 * 8);
}

TEST(PlanDotTest, NarrowDotOnSeveralMxusSplitsK) {
  // tpu-v4: 4 MXUs. N = 128 = C fits one array's columns, so K tile t goes to MXU t % 4 and the
  // partial sums are added on the VPU; one accumulator set (the partials are popped per block).
  const config::ChipConfig c = Config("tpu-v4");
  const DotShape d{.B = 1, .M = 256, .K = 4096, .N = 128, .le = 2, .re = 2, .oe = 4};
  const DotPlan p = Plan(d, c, DotVmem(c), true);
  ExpectConsistent(p, DotVmem(c));
  EXPECT_EQ(p.mxus, 4);
  EXPECT_EQ(p.ksplit, 4);
  EXPECT_EQ(p.blocks.Kc, 4096);  // a K split needs the whole K in VMEM
  EXPECT_EQ(p.blocks.Nc, 128);
  EXPECT_EQ(p.blocks.tiles_per_mxu, 1);
  EXPECT_EQ(p.acc_sets, 1);
  EXPECT_EQ(p.RowGroups(p.blocks.Mc, 128), 1);  // never with a K split
  // A K with fewer tiles than MXUs splits over as many MXUs as it has tiles.
  const DotShape two_tiles{.B = 1, .M = 256, .K = 256, .N = 128, .le = 2, .re = 2, .oe = 4};
  EXPECT_EQ(Plan(two_tiles, c, DotVmem(c), true).ksplit, 2);
}

TEST(PlanDotTest, TpuV4DotThatFitsIsReadOnceWithTwoAccumulatorSets) {
  // tpu-v4, [512, 512] x [512, 512] bf16: 4 N tiles = one per MXU; everything fits 16 MiB, so
  // Kc = K and Nc = N (every operand byte read once) and Mc = M (2 sets of 512 rows <= 2048).
  const config::ChipConfig c = Config("tpu-v4");
  const DotShape d{.B = 1, .M = 512, .K = 512, .N = 512, .le = 2, .re = 2, .oe = 4};
  const DotPlan p = Plan(d, c, DotVmem(c), true);
  ExpectConsistent(p, DotVmem(c));
  EXPECT_EQ(p.ksplit, 1);
  EXPECT_EQ(p.blocks.Kc, 512);
  EXPECT_EQ(p.blocks.Nc, 512);
  EXPECT_EQ(p.blocks.Mc, 512);
  EXPECT_EQ(p.blocks.tiles_per_mxu, 1);
  EXPECT_GE(p.acc_sets, 2);
}

TEST(PlanDotTest, MBlocksAreBalanced) {
  // tpu-v3 (2 MXUs, 2048 accumulator rows): M = 1792 with two accumulator sets allows 1024-row
  // blocks; they are cut as 2 x 896, not 1024 + 768 (the short block's matmuls would not hide the
  // long block's pop). M = 3000 (3 blocks of at most 1024) gives 1000-row blocks.
  const config::ChipConfig c = Config("tpu-v3");
  for (const auto& [M, Mc] : {std::pair<int64_t, int64_t>{1792, 896}, {3000, 1000}, {1024, 1024}}) {
    const DotShape d{.B = 4, .M = M, .K = 7, .N = 168, .le = 2, .re = 2, .oe = 2};
    const DotPlan p = Plan(d, c, DotVmem(c), true);
    ExpectConsistent(p, DotVmem(c));
    EXPECT_EQ(p.blocks.Mc, Mc) << M;
    EXPECT_GE(p.acc_sets, 2) << M;
  }
}

TEST(PlanDotTest, TpuV4LargerDotTradesKChunksAgainstTraffic) {
  // tpu-v4, [1024, 1024] x [1024, 1024] bf16 in 2/3 of 16 MiB. Nc = 512 (one tile per MXU) with
  // Mc = 512 in up to three accumulator sets leaves room for the whole K: the LHS is read once
  // per N block and no K chunk waits for its loads. The pipeline estimate (matmuls wait only for
  // the pop three blocks back) picks it: 14,157 simulated cycles, against 17,271 for the
  // Mc = 1024, Kc = 512 plan of the earlier estimate.
  const config::ChipConfig c = Config("tpu-v4");
  const DotShape d{.B = 1, .M = 1024, .K = 1024, .N = 1024, .le = 2, .re = 2, .oe = 4};
  const DotPlan p = Plan(d, c, DotVmem(c), true);
  ExpectConsistent(p, DotVmem(c));
  EXPECT_EQ(p.ksplit, 1);
  EXPECT_EQ(p.blocks.Kc, 1024);
  EXPECT_EQ(p.blocks.Nc, 512);
  EXPECT_EQ(p.blocks.Mc, 512);
  EXPECT_EQ(p.blocks.tiles_per_mxu, 1);
  EXPECT_GE(p.acc_sets, 2);
}

// A plan of `d` whose blocks are set by hand (the row split's rules depend on them).
DotPlan WithBlocks(const DotShape& d, const config::ChipConfig& c, DotBlocks blocks) {
  DotPlan p = Plan(d, c, DotVmem(c), true);
  p.blocks = blocks;
  return p;
}

TEST(PlanDotTest, TpuV3OddTileCountsAreRowSplitWhenThatShortensTheBusiestMxu) {
  // tpu-v3: 2 MXUs. A block with 3 N tiles leaves one MXU with 2 tiles and the other with 1;
  // cutting each tile's rows into G = 2 groups gives each MXU 3 units of half the rows.
  const config::ChipConfig c = Config("tpu-v3");
  const DotShape d{.B = 1, .M = 512, .K = 512, .N = 384, .le = 2, .re = 2, .oe = 4};
  const DotPlan planned = Plan(d, c, DotVmem(c), true);
  ExpectConsistent(planned, DotVmem(c));
  EXPECT_EQ(planned.mxus, 2);
  EXPECT_EQ(planned.ksplit, 1);
  // The planner itself prefers two-tile blocks (Nc = 256, then the last tile alone): 6,205
  // simulated cycles against 6,732 for one 3-tile block split into row groups.
  EXPECT_EQ(planned.blocks.Nc, 256);
  const DotPlan p = WithBlocks(d, c, DotBlocks{512, 512, 384, 2, 2});
  const int64_t mc = p.blocks.Mc;
  ASSERT_GE(mc, 256);
  // 3 tiles x max(mc, 128) on the busiest MXU before (2 tiles), 3 units x max(mc / 2, 128) after.
  EXPECT_EQ(p.RowGroups(mc, 384), 2);
  // Units (tile j, group g) go round-robin: unit q = 2j + g on MXU q % 2, rows [g, g + 1) * mc / 2.
  const DotRowUnit u = p.RowUnit(1, 0, 2, mc);
  EXPECT_EQ(u.mxu, 0u);
  EXPECT_EQ(u.acc, (2 / 2) * ((mc + 1) / 2));
  EXPECT_EQ(u.r0, 0);
  EXPECT_EQ(u.r1, mc / 2);
  EXPECT_EQ(p.RowUnit(1, 1, 2, mc).mxu, 1u);
  // Few rows: a unit is bounded by its weight shift (R = 128 cycles), so splitting only adds
  // weight loads.
  EXPECT_EQ(p.RowGroups(64, 384), 1);
  // Tiles that divide evenly over the MXUs: no split.
  EXPECT_EQ(p.RowGroups(mc, 256), 1);
  // Without a row split, tile j is on MXU j % 2 at accumulator offset (j / 2) * Mc.
  const DotRowUnit w = p.RowUnit(3, 0, 1, mc);
  EXPECT_EQ(w.mxu, 1u);
  EXPECT_EQ(w.acc, p.blocks.Mc);
  EXPECT_EQ(w.r1, mc);
}

TEST(PlanDotTest, EstimateUsesTheSimulatorsFoldTimeForSlowWeightShifts) {
  // A GEMV-like dot (M = 8) is bound by the weight shift, R * wl cycles per tile
  // (isa::MxuTiming::FoldCycles). With wl = 1 the row-split test above holds; with a slow shift
  // (wl = 4, WL = 512) the busiest MXU of a 3-tile block is max(mc, 512) per unit either way, so a
  // split of mc = 512 rows no longer pays: 3 units x 512 > 2 tiles x 512.
  config::ChipConfig c = Config("tpu-v3");
  c.core.mxu.weight_load_cycles_per_row = 4;
  const DotShape d{.B = 1, .M = 512, .K = 512, .N = 384, .le = 2, .re = 2, .oe = 4};
  const DotBlocks blocks{512, 512, 384, 2, 2};
  const DotPlan p = WithBlocks(d, c, blocks);
  EXPECT_EQ(p.mxu.FoldCycles(8), 512);
  EXPECT_EQ(p.RowGroups(512, 384), 1);
  c.core.mxu.weight_load_cycles_per_row = 1;
  EXPECT_EQ(WithBlocks(d, c, blocks).RowGroups(512, 384), 2);
}

TEST(PlanDotTest, ResourceExhaustedWhenNotEvenOneRowFits) {
  const config::ChipConfig c = Config("tiny");
  const DotShape d{.B = 1, .M = 64, .K = 64, .N = 64, .le = 4, .re = 4, .oe = 4};
  StatusOr<DotPlan> p = PlanDot(d, c, 64, true);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kResourceExhausted);
  // [1, 8] LHS + [8, 8] weights + [1, 8] result in f32: 32 + 256 + 32 bytes.
  EXPECT_NE(p.status().message().find("a [1,8] LHS block, a [8,8] weight block and a [1,8] "
                                      "result block need 320 bytes, but only 64 bytes"),
            std::string::npos)
      << p.status().message();
}

// A plan with the given blocks, for the schedule tests.
DotPlan Blocks(int64_t B, int64_t M, int64_t K, int64_t N, int64_t Mc, int64_t Kc, int64_t Nc) {
  DotPlan p;
  p.shape = DotShape{.B = B, .M = M, .K = K, .N = N};
  p.blocks = DotBlocks{.Mc = Mc, .Kc = Kc, .Nc = Nc, .tiles_per_mxu = 1, .nbuf = 2};
  p.input_buffers = 3;
  return p;
}

TEST(PlanDotTest, ScheduleLoopOrderIsBatchThenMThenNThenK) {
  // K chunked: every step loads both chunks.
  auto steps = DotSchedule(Blocks(1, 16, 16, 16, 8, 8, 8), 1000);
  ASSERT_TRUE(steps.ok());
  const std::vector<DotStep> want = {
      {0, 0, 0, 0, true, true, 0, 0}, {0, 0, 0, 8, true, true, 1, 1},
      {0, 0, 8, 0, true, true, 2, 2}, {0, 0, 8, 8, true, true, 3, 3},
      {0, 8, 0, 0, true, true, 4, 4}, {0, 8, 0, 8, true, true, 5, 5},
      {0, 8, 8, 0, true, true, 6, 6}, {0, 8, 8, 8, true, true, 7, 7},
  };
  EXPECT_EQ(*steps, want);
}

TEST(PlanDotTest, ScheduleKeepsChunksThatDoNotChange) {
  // Kc = K: the LHS block stays across the N blocks of an M block.
  auto a = DotSchedule(Blocks(1, 16, 16, 16, 8, 16, 8), 1000);
  ASSERT_TRUE(a.ok());
  const std::vector<DotStep> want_a = {
      {0, 0, 0, 0, true, true, 0, 0},
      {0, 0, 8, 0, false, true, 0, 1},
      {0, 8, 0, 0, true, true, 1, 2},
      {0, 8, 8, 0, false, true, 1, 3},
  };
  EXPECT_EQ(*a, want_a);
  // Kc = K and Nc = N: the weights stay across the M blocks, and are reloaded for the next batch.
  auto b = DotSchedule(Blocks(2, 16, 16, 16, 8, 16, 16), 1000);
  ASSERT_TRUE(b.ok());
  const std::vector<DotStep> want_b = {
      {0, 0, 0, 0, true, true, 0, 0},
      {0, 8, 0, 0, true, false, 1, 0},
      {1, 0, 0, 0, true, true, 2, 1},
      {1, 8, 0, 0, true, false, 3, 1},
  };
  EXPECT_EQ(*b, want_b);
}

TEST(PlanDotTest, ScheduleRefusesTooManySteps) {
  auto steps = DotSchedule(Blocks(1, 16, 16, 16, 8, 8, 8), 7);
  ASSERT_FALSE(steps.ok());
  EXPECT_EQ(steps.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(DotSchedule(Blocks(1, 16, 16, 16, 8, 8, 8), 8).ok());
}

TEST(PlanDotTest, RowSplitBlocksTakeOnlyTheirUnitsRowsOfAnAccumulatorSet) {
  // Mask R-CNN's per-ROI mask dot (calibration maskrcnn_65): 2048 batches of [1792,7] x [7,84]
  // bf16 on tpu-v3 (2 MXUs, 2048 accumulator rows each). One 84-column tile on two MXUs is
  // split into row groups, so an MXU holds only its own group's rows of a block: the sets are
  // ceil(Mc / G) rows, not Mc, and more of them rotate (the next block's matmuls run while the
  // previous block pops).
  const config::ChipConfig c = Config("tpu-v3");
  const DotShape d{.B = 2048, .M = 1792, .K = 7, .N = 84, .le = 2, .re = 2, .oe = 2};
  const DotPlan p = Plan(d, c, DotVmem(c), /*double_buffer=*/true);
  ExpectConsistent(p, DotVmem(c));
  const int64_t G = p.RowGroups(p.blocks.Mc, p.blocks.Nc);
  ASSERT_EQ(G, 2);
  EXPECT_EQ(p.AccSetRows(), (p.blocks.Mc + 1) / 2);  // one unit per MXU
  EXPECT_EQ(p.acc_sets, std::min<int64_t>(kMaxAccumulatorSets, 2048 / p.AccSetRows()));
  EXPECT_GE(p.acc_sets, 2);
  // The units' row offsets stay inside one set.
  for (int64_t g = 0; g < G; ++g) {
    const DotRowUnit u = p.RowUnit(0, g, G, p.blocks.Mc);
    EXPECT_LE(u.acc + (u.r1 - u.r0), p.AccSetRows());
  }
}

}  // namespace
}  // namespace tpusim::compiler
