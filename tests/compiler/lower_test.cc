// End to end: HLO text -> Compile (configs/tiny.yaml: one 8x8 MXU, 1 MiB VMEM; configs/tpu-v4.yaml:
// four 128x128 MXUs, 16 MiB VMEM) -> isa::Interpreter -> outputs vs the CPU evaluator.
//
// Tolerances. Dots: both sides round f32 DEFAULT-precision operands to bf16 and every bf16 x bf16
// product is exact in f32, so they differ only in the order of the f32 additions (the MXU adds down
// its K column tile by tile; the evaluator in its own order): |error| <= ~K * 2^-24 * sum|a*b|,
// covered by rtol = atol = 1e-4 for K <= a few hundred. Elementwise ops on the VPU and in the
// evaluator use the same f32 functions, so they get 1e-6; reductions add in a different order
// (1e-5).
#include <gtest/gtest.h>

#include <set>

#include "compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

class LowerTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LowerTest, DotWithKAndNNotMultiplesOfTheArray) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = f32[16,27] parameter(0)
  b = f32[27,21] parameter(1)
  ROOT d = f32[16,21] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                        GetParam(), 1e-4, 1e-4);
}

TEST_P(LowerTest, DotWithTransposedWeights) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[13,40] parameter(0)
  w = f32[19,40] parameter(1)
  t = f32[40,19] transpose(w), dimensions={1,0}
  ROOT d = f32[13,19] dot(x, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                        GetParam(), 1e-4, 1e-4);
}

TEST_P(LowerTest, BatchedDotWithBatchDimsInTheMiddle) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = f32[10,3,12] parameter(0)
  b = f32[12,3,9] parameter(1)
  ROOT d = f32[3,10,9] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, rhs_contracting_dims={0}
})",
                        GetParam(), 1e-4, 1e-4);
}

TEST_P(LowerTest, Bf16DotWithBf16Result) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = bf16[9,33] parameter(0)
  b = bf16[33,17] parameter(1)
  ROOT d = bf16[9,17] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                        GetParam(), 1e-2, 1e-2);
}

TEST_P(LowerTest, HighAndHighestPrecisionUseMorePasses) {
  // HIGH (bf16_3x) keeps ~16 significant bits, HIGHEST (bf16_6x) ~f32; the evaluator computes
  // exact f32 products for these precisions.
  auto high = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = f32[8,24] parameter(0)
  b = f32[24,8] parameter(1)
  ROOT d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={high,high}
})",
                                    GetParam(), 1e-4, 1e-4);
  auto highest = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = f32[8,24] parameter(0)
  b = f32[24,8] parameter(1)
  ROOT d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
})",
                                       GetParam(), 1e-5, 1e-5);
  int high_matmuls = 0, highest_matmuls = 0;
  for (const auto& i : high.compiled.program.cores[0].instructions) {
    high_matmuls += i.opcode == isa::Opcode::kMxuMatmul;
  }
  for (const auto& i : highest.compiled.program.cores[0].instructions) {
    highest_matmuls += i.opcode == isa::Opcode::kMxuMatmul;
  }
  EXPECT_EQ(highest_matmuls, 2 * high_matmuls) << "6 passes vs 3 passes";
}

TEST_P(LowerTest, LargeDotIsBlocked) {
  // On tiny: 19 N tiles x 25 K tiles of the 8x8 array, M blocked by the 256 accumulator rows.
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = f32[70,200] parameter(0)
  b = f32[200,150] parameter(1)
  ROOT d = f32[70,150] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                        GetParam(), 1e-4, 1e-4);
}

TEST_P(LowerTest, LargeDotWithoutDoubleBuffering) {
  CompileOptions options;
  options.double_buffer = false;
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = f32[70,200] parameter(0)
  b = f32[200,150] parameter(1)
  ROOT d = f32[70,150] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                        GetParam(), 1e-4, 1e-4, options);
}

TEST_P(LowerTest, DotWithBatchAndManyMBlocks) {
  // Several M blocks per batch (tiny: 256 accumulator rows) with the LHS prefetched.
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = bf16[2,600,16] parameter(0)
  b = bf16[2,16,8] parameter(1)
  ROOT d = f32[2,600,8] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})",
                        GetParam(), 1e-4, 1e-4);
}

TEST_P(LowerTest, SkinnyDotSplitsKAcrossMxus) {
  // N <= C: on tpu-v4 the 6 K tiles go round-robin to the 4 MXUs and the partials are added on the
  // VPU (bf16 result: summed in f32, rounded once).
  auto run = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = bf16[40,700] parameter(0)
  b = bf16[700,100] parameter(1)
  ROOT d = bf16[40,100] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                   GetParam(), 1e-2, 1e-2);
  std::set<uint64_t> mxus;
  for (const auto& i : run.compiled.program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kMxuMatmul) mxus.insert(i.As<isa::op::MxuMatmul>().mxu);
  }
  EXPECT_EQ(static_cast<int64_t>(mxus.size()), testing::Config(GetParam()).core.mxu.count);
}

TEST_P(LowerTest, RowAndColumnBroadcastsAreReadInPlace) {
  // bias-add and per-row normalization without materializing the broadcasts; on tiny the 600 KB
  // arrays stream through VMEM in chunks of whole rows.
  auto run = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[300,500] parameter(0)
  bias = f32[500] parameter(1)
  rowv = f32[300] parameter(2)
  bb = f32[300,500] broadcast(bias), dimensions={1}
  rb = f32[300,500] broadcast(rowv), dimensions={0}
  a = f32[300,500] add(x, bb)
  ROOT d = f32[300,500] divide(a, rb)
})",
                                   GetParam(), 1e-6, 1e-6);
  for (const auto& i : run.compiled.program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kVpuBinary) {
      const auto b = i.As<isa::op::VpuBinary>();
      EXPECT_EQ(b.cols, 500u);
      EXPECT_TRUE(b.b_bcast == isa::Broadcast::kRow || b.b_bcast == isa::Broadcast::kCol);
    }
  }
  const auto& names = run.compiled.program.hlo_names;
  const auto& tags = run.compiled.program.cores[0].hlo_tags;
  for (size_t i = 0; i < tags.size(); ++i) {
    if (tags[i] < 0) continue;
    const std::string& n = names[static_cast<size_t>(tags[i])];
    EXPECT_TRUE(n != "bb" && n != "rb") << "broadcast " << n << " was materialized";
  }
}

TEST_P(LowerTest, ElementwiseChain) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = f32[37,53] parameter(0)
  b = f32[37,53] parameter(1)
  s = f32[37,53] add(a, b)
  p = f32[37,53] multiply(s, a)
  x = f32[37,53] exponential(p)
  z = f32[] constant(0.5)
  zb = f32[37,53] broadcast(z), dimensions={}
  m = f32[37,53] maximum(x, zb)
  c = pred[37,53] compare(a, b), direction=LT
  sel = f32[37,53] select(c, m, s)
  lo = f32[] constant(-0.25)
  hi = f32[] constant(2)
  cl = f32[37,53] clamp(lo, sel, hi)
  i = s32[37,53] convert(cl)
  f = f32[37,53] convert(i)
  t = f32[37,53] tanh(cl)
  d = f32[37,53] divide(t, x)
  ROOT r = (f32[37,53], f32[37,53], pred[37,53]) tuple(d, f, c)
})",
                        GetParam(), 1e-6, 1e-6);
}

TEST_P(LowerTest, ElementwiseLargerThanVmemIsChunked) {
  // 3 x 1.44 MB on tiny's 1 MiB VMEM.
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = f32[600,600] parameter(0)
  b = f32[600,600] parameter(1)
  ROOT s = f32[600,600] subtract(a, b)
})",
                        GetParam(), 0, 0);
}

TEST_P(LowerTest, ElementwiseChunkedWithoutDoubleBuffering) {
  CompileOptions options;
  options.double_buffer = false;
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = f32[600,600] parameter(0)
  b = f32[600,600] parameter(1)
  ROOT s = f32[600,600] multiply(a, b)
})",
                        GetParam(), 0, 0, options);
}

TEST_P(LowerTest, BroadcastsTransposesSlicesConcatPadIota) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  v = f32[5] parameter(0)
  x = f32[4,5,6] parameter(1)
  row = f32[3,5] broadcast(v), dimensions={1}
  col = f32[5,3] broadcast(v), dimensions={0}
  t2 = f32[5,3] transpose(row), dimensions={1,0}
  t3 = f32[6,4,5] transpose(x), dimensions={2,0,1}
  tb = f32[4,6,5] transpose(x), dimensions={0,2,1}
  sl = f32[2,2,3] slice(x), slice={[1:3], [0:5:3], [1:6:2]}
  cat = f32[10,3] concatenate(col, t2), dimensions={0}
  z = f32[] constant(-1)
  pd = f32[7,11] pad(row, z), padding=1_3x2_0_1
  io = s32[3,4,2] iota(), iota_dimension=1
  ROOT r = (f32[5,3], f32[6,4,5], f32[2,2,3], f32[10,3], f32[7,11], s32[3,4,2], f32[4,6,5]) tuple(t2, t3, sl, cat, pd, io, tb)
})",
                        GetParam(), 0, 0);
}

// Pads without interior padding fill only their edge slabs (a runtime padding value, low/high/zero
// edges in three dimensions); broadcasts along minor dimensions load each source element once and
// replicate it in VMEM (to [n,a,b], scalar to a large box, a middle dimension kept).
TEST_P(LowerTest, PadEdgesAndMinorDimensionBroadcasts) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[3,4,5] parameter(0)
  v = f32[] parameter(1)
  c = f32[7] parameter(2)
  p1 = f32[6,4,8] pad(x, v), padding=2_1x0_0x0_3
  p2 = f32[3,7,5] pad(x, v), padding=0_0x3_0x0_0
  b1 = f32[7,30,20] broadcast(c), dimensions={0}
  b2 = f32[9,700] broadcast(v), dimensions={}
  b3 = f32[4,7,3] broadcast(c), dimensions={1}
  n = f32[9,700] negate(b2)
  ROOT r = (f32[6,4,8], f32[3,7,5], f32[7,30,20], f32[9,700], f32[4,7,3]) tuple(p1, p2, b1, n, b3)
})",
                        GetParam(), 0, 0);
}

TEST_P(LowerTest, Reductions) {
  CheckAgainstEvaluator(R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
ENTRY e {
  x = f32[6,7,9] parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  one = f32[] constant(1)
  r0 = f32[6] reduce(x, zero), dimensions={1,2}, to_apply=add
  r1 = f32[7] reduce(x, ninf), dimensions={0,2}, to_apply=max
  r2 = f32[] reduce(x, one), dimensions={0,1,2}, to_apply=add
  r3 = f32[6,7] reduce(x, zero), dimensions={2}, to_apply=add
  r4 = f32[7,9] reduce(x, one), dimensions={0}, to_apply=add
  r5 = f32[9] reduce(x, ninf), dimensions={0,1}, to_apply=max
  ROOT t = (f32[6], f32[7], f32[], f32[6,7], f32[7,9], f32[9]) tuple(r0, r1, r2, r3, r4, r5)
})",
                        GetParam(), 1e-5, 1e-5);
}

// Convolutions go through lower-convolution (im2col + dot). They use HIGHEST precision because the
// evaluator's tpu_default_precision option rounds dot operands to bf16 but not convolution
// operands.
TEST_P(LowerTest, ConvolutionStridePaddingDilation) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[2,3,9,10] parameter(0)
  k = f32[4,3,3,2] parameter(1)
  ROOT y = f32[2,4,5,3] convolution(x, k), window={size=3x2 stride=2x3 pad=1_1x1_0 rhs_dilate=1x2}, dim_labels=bf01_oi01->bf01, operand_precision={highest,highest}
})",
                        GetParam(), 1e-5, 1e-5);
}

TEST_P(LowerTest, GroupedConvolutionNhwc) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[1,7,7,6] parameter(0)
  k = f32[3,3,2,6] parameter(1)
  ROOT y = f32[1,4,4,6] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=3, operand_precision={highest,highest}
})",
                        GetParam(), 1e-5, 1e-5);
}

// batch_group_count (XLA's weight gradient of a convolution): output feature group g reads input
// batch group g only; the output batch is N / batch_group_count.
TEST_P(LowerTest, BatchGroupedConvolution) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[4,5,5,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  ROOT y = f32[2,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2, operand_precision={highest,highest}
})",
                        GetParam(), 1e-5, 1e-5);
}

TEST_P(LowerTest, TransposedConvolutionWithLhsDilation) {
  CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[2,4,5] parameter(0)
  k = f32[3,5,2] parameter(1)
  ROOT y = f32[2,8,2] convolution(x, k), window={size=3 pad=2_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f, operand_precision={highest,highest}
})",
                        GetParam(), 1e-5, 1e-5);
}

// A dot whose LHS has its contracting dimensions first (a weight gradient x^T . g, or a batched
// dot contracting a middle dimension) keeps that layout; the kernel transposes LHS blocks on the
// XLU in VMEM (canonicalize's "KM" form).
TEST_P(LowerTest, KmLhsDotsTransposeBlocksOnTheXlu) {
  const testing::RunResult run = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = bf16[300,70] parameter(0)
  b = bf16[300,90] parameter(1)
  c = bf16[2,3,7,5,16] parameter(2)
  w = bf16[2,3,7,24] parameter(3)
  d1 = f32[70,90] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  d2 = bf16[2,3,5,16,24] dot(c, w), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  ROOT t = (f32[70,90], bf16[2,3,5,16,24]) tuple(d1, d2)
})",
                                                       GetParam(), 1e-5, 1e-3);
  EXPECT_GT(testing::InstructionsTagged(run.compiled.program, "d1", isa::Opcode::kXluTranspose), 0);
  EXPECT_GT(testing::InstructionsTagged(run.compiled.program, "d2", isa::Opcode::kXluTranspose), 0);
}

INSTANTIATE_TEST_SUITE_P(Configs, LowerTest, ::testing::Values("tiny", "tpu-v4"));

// select with broadcast operands (a scalar fill, a per-row mask, a per-column mask): the broadcasts
// are never materialized in HBM (virtual, expanded on the VPU in each path: a lone select, a fused
// chain, a dot's epilogue and a dot's operand prologue); values checked against the evaluator.
TEST(LowerTest, SelectReadsBroadcastOperandsWithoutMaterializingThem) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    const testing::RunResult run = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[48,40] parameter(0)
  rowmask = pred[48] parameter(1)
  colmask = pred[40] parameter(2)
  w = f32[40,24] parameter(3)
  zero = f32[] constant(0)
  zb = f32[48,40] broadcast(zero), dimensions={}
  rm = pred[48,40] broadcast(rowmask), dimensions={0}
  lone = f32[48,40] select(rm, x, zb)
  cm = pred[48,40] broadcast(colmask), dimensions={1}
  two = f32[] constant(2)
  tb = f32[48,40] broadcast(two), dimensions={}
  x2 = f32[48,40] multiply(x, tb)
  fused = f32[48,40] select(cm, x2, zb)
  wz = f32[40,24] broadcast(zero), dimensions={}
  wm = pred[40,24] broadcast(colmask), dimensions={0}
  wsel = f32[40,24] select(wm, w, wz)
  d = f32[48,24] dot(x, wsel), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dz = f32[48,24] broadcast(zero), dimensions={}
  dm = pred[48,24] broadcast(rowmask), dimensions={0}
  out = f32[48,24] select(dm, d, dz)
  ROOT t = (f32[48,40], f32[48,40], f32[48,24]) tuple(lone, fused, out)
})",
                                                         config, 1e-5, 1e-4);
    for (const char* bcast : {"zb", "rm", "cm", "wz", "wm", "dz", "dm"}) {
      EXPECT_EQ(
          testing::InstructionsTagged(run.compiled.program, bcast, isa::Opcode::kDmaVmemToHbm), 0)
          << bcast << " was materialized on " << config;
    }
  }
}

// Three N tiles on tpu-v4's four MXUs: each tile's rows are cut into groups so every MXU streams
// the same number of rows (row split, lower_dot.cc); values checked exactly against the evaluator.
TEST(LowerTest, UnevenNTilesSplitRowsOverTheMxus) {
  const testing::RunResult run = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = bf16[1024,64] parameter(0)
  b = bf16[64,384] parameter(1)
  ROOT d = f32[1024,384] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                                       "tpu-v4", 1e-5, 1e-3);
  int64_t rows[4] = {0, 0, 0, 0};
  for (const isa::Instruction& i : run.compiled.program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kMxuMatmul) {
      rows[i.As<isa::op::MxuMatmul>().mxu] += static_cast<int64_t>(i.As<isa::op::MxuMatmul>().m);
    }
  }
  EXPECT_EQ(rows[0] + rows[1] + rows[2] + rows[3], 3 * 1024);
  for (int64_t r : rows) EXPECT_EQ(r, 3 * 1024 / 4);
}

// Rows an MXU streams in `run`'s matmuls tagged `tag`.
int64_t StreamedRows(const testing::RunResult& run, const char* tag) {
  const isa::Program& p = run.compiled.program;
  const auto& core = p.cores[0];
  int64_t rows = 0;
  for (size_t i = 0; i < core.instructions.size(); ++i) {
    const int32_t t = core.hlo_tags[i];
    if (core.instructions[i].opcode == isa::Opcode::kMxuMatmul && t >= 0 &&
        p.hlo_names[static_cast<size_t>(t)] == tag) {
      rows += static_cast<int64_t>(core.instructions[i].As<isa::op::MxuMatmul>().m);
    }
  }
  return rows;
}

// A result layout with an LHS free dimension on the lanes (canonicalize's stationary-LHS mark):
// the LHS is the weights and the RHS streams, each popped block transposed on the XLU into the
// result; values checked against the evaluator, with a per-batch select epilogue (Mask R-CNN's
// batched K = 7 dots) and with the KM and NK operand forms swapped in.
TEST(LowerTest, StationaryLhsDotStreamsTheRhs) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    const testing::RunResult run = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = bf16[96,64] parameter(0)
  b = bf16[64,40] parameter(1)
  d1 = f32[96,40]{0,1} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[96,40] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = bf16[2,3,7,6,16] parameter(2)
  w = bf16[2,3,7,24] parameter(3)
  mask = pred[2,3] parameter(4)
  d2 = bf16[2,3,6,16,24]{3,4,2,1,0} dot(c, w), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  mb = pred[2,3,6,16,24]{3,4,2,1,0} broadcast(mask), dimensions={0,1}
  zero = bf16[] constant(0)
  zb = bf16[2,3,6,16,24]{3,4,2,1,0} broadcast(zero), dimensions={}
  s = bf16[2,3,6,16,24]{3,4,2,1,0} select(mb, d2, zb)
  x = f32[40,64] parameter(5)
  d3 = f32[96,40]{0,1} dot(a, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (f32[96,40]{0,1}, f32[96,40], bf16[2,3,6,16,24]{3,4,2,1,0}, f32[96,40]{0,1}) tuple(d1, r, s, d3)
})",
                                                         config, 1e-5, 1e-3);
    EXPECT_GT(testing::InstructionsTagged(run.compiled.program, "d1", isa::Opcode::kXluTranspose),
              0)
        << config;
    EXPECT_EQ(testing::InstructionsTagged(run.compiled.program, "r", isa::Opcode::kXluTranspose),
              0)
        << config;
    if (std::string(config) == "tpu-v4") {
      // One 64 x 96 weight tile (the LHS) streams the 40 RHS columns; row-major: 96 LHS rows
      // through a 64 x 40 tile.
      EXPECT_EQ(StreamedRows(run, "d1"), 40);
      EXPECT_EQ(StreamedRows(run, "d3"), 40);
      EXPECT_EQ(StreamedRows(run, "r"), 96);
      // Per batch element, the 24 RHS columns through the [7, 96] LHS (one tile).
      EXPECT_EQ(StreamedRows(run, "d2"), 6 * 24);
    }
  }
}

TEST(LowerTest, AllReduceAcrossFourReplicas) {
  const std::string text = R"(
HloModule m, replica_count=4
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  g = f32[8,5] parameter(0)
  ROOT r = f32[8,5] all-reduce(g), replica_groups={{0,1,2,3}}, to_apply=add
})";
  auto module = testing::Parse(text);
  ASSERT_NE(module, nullptr);
  std::vector<std::vector<hlo::Literal>> args;
  for (int d = 0; d < 4; ++d) {
    auto a = hlo::Evaluator::MakeRandomArguments(*module, 3, d);
    ASSERT_TRUE(a.ok());
    args.push_back(std::move(a).value());
  }
  hlo::Evaluator ev;
  auto want = ev.EvaluateReplicated(*module, 4, 1, args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto run = testing::CompileAndRun(*module, testing::Config("tiny-4"), args);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->compiled.program.num_cores(), 4);
  ASSERT_EQ(run->outputs.size(), 1u);
  EXPECT_LE(testing::WorstError(run->outputs[0], (*want)[0], 1e-6, 1e-6), 1.0);
}

TEST(LowerTest, EveryInstructionIsTaggedWithItsHloInstruction) {
  auto run = CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[8,8] negate(d)
})",
                                   "tiny", 1e-4, 1e-4);
  const isa::Program& p = run.compiled.program;
  ASSERT_EQ(p.cores.size(), 1u);
  const auto& core = p.cores[0];
  ASSERT_EQ(core.hlo_tags.size(), core.instructions.size());
  bool saw_dot = false, saw_negate = false;
  for (size_t i = 0; i < core.instructions.size(); ++i) {
    if (core.instructions[i].opcode == isa::Opcode::kCtrlHalt) continue;
    ASSERT_GE(core.hlo_tags[i], 0) << "instruction " << i << " has no HLO tag";
    const std::string& name = p.hlo_names[static_cast<size_t>(core.hlo_tags[i])];
    if (core.instructions[i].opcode == isa::Opcode::kMxuMatmul) {
      EXPECT_EQ(name, "d");
      saw_dot = true;
    }
    if (core.instructions[i].opcode == isa::Opcode::kVpuUnary) {
      EXPECT_EQ(name, "n");
      saw_negate = true;
    }
  }
  EXPECT_TRUE(saw_dot && saw_negate);
}

}  // namespace
}  // namespace tpusim::compiler

namespace tpusim::compiler {
namespace {

// Passes that rewrite into lowerable ops, checked end to end against the evaluator.
TEST(LowerExpandedOpsTest, CallsAreInlined) {
  testing::CheckAgainstEvaluator(R"(
HloModule m
where {
  p = pred[4,3] parameter(0)
  a = f32[] parameter(1)
  b = f32[4,3] parameter(2)
  ab = f32[4,3] broadcast(a), dimensions={}
  s = f32[4,3] select(p, ab, b)
  ROOT t = (f32[4,3]) tuple(s)
}
ENTRY e {
  x = f32[4,3] parameter(0)
  c = pred[4,3] compare(x, x), direction=NE
  qnan = f32[] constant(nan)
  r = (f32[4,3]) call(c, qnan, x), to_apply=where
  ROOT g = f32[4,3] get-tuple-element(r), index=0
})",
                                 "tiny", 0, 0);
}

TEST(LowerExpandedOpsTest, BatchNormTrainingIsExpanded) {
  testing::CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[24,5] parameter(0)
  s = f32[5] parameter(1)
  o = f32[5] parameter(2)
  ROOT bn = (f32[24,5], f32[5], f32[5]) batch-norm-training(x, s, o), epsilon=1e-05, feature_index=1
})",
                                 "tiny", 1e-5, 1e-5);
}

TEST(LowerExpandedOpsTest, KnownCustomCallsAreExpanded) {
  testing::CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[6,10] parameter(0)
  w = f32[6] parameter(1)
  eps = f32[] constant(1e-6)
  g = f32[6,10] custom-call(x), custom_call_target="AwsNeuronGelu"
  t = f32[6,10] custom-call(x), custom_call_target="AwsNeuronGeluApprxTanh"
  gb = f32[6,10] custom-call(x), custom_call_target="AwsNeuronGeluBackward"
  sm = f32[6,10] custom-call(x), custom_call_target="AwsNeuronSoftmax", backend_config="1"
  sb = f32[6,10] custom-call(sm, x), custom_call_target="AwsNeuronSoftmaxBackward", backend_config="1"
  rn = f32[6,10] custom-call(x, w, eps), custom_call_target="AwsNeuronRmsNorm", backend_config="0"
  ROOT r = (f32[6,10], f32[6,10], f32[6,10], f32[6,10], f32[6,10], f32[6,10]) tuple(g, t, gb, sm, sb, rn)
})",
                                 "tiny", 1e-6, 1e-5);
}

TEST(LowerExpandedOpsTest, IsFiniteReplicaIdAndU32) {
  auto run = testing::CheckAgainstEvaluator(R"(
HloModule m
ENTRY e {
  x = f32[7] parameter(0)
  z = f32[7] divide(x, x)
  f = pred[7] is-finite(z)
  id = u32[] replica-id()
  ROOT r = (pred[7], u32[]) tuple(f, id)
})",
                                            "tiny", 0, 0);
  EXPECT_EQ(run.outputs.size(), 2u);
}

}  // namespace
}  // namespace tpusim::compiler

namespace tpusim::compiler {
namespace {

constexpr const char* kNegateChain = R"(
HloModule m
ENTRY e {
  a = f32[1024] parameter(0)
  n1 = f32[1024] negate(a)
  n2 = f32[1024] negate(n1)
  n3 = f32[1024] negate(n2)
  n4 = f32[1024] negate(n3)
  n5 = f32[1024] negate(n4)
  ROOT n6 = f32[1024] exponential(n5)
})";

TEST(HbmPlanTest, BuffersAreReusedAfterTheirLastUse) {
  // Unfused, a chain of 6 ops on a 4 KiB array needs the parameter, the output and at most 2 live
  // temporaries, not 7 buffers; and the values still match.
  CompileOptions options;
  options.fuse_elementwise = false;
  auto run = testing::CheckAgainstEvaluator(kNegateChain, "tiny", 0, 0, options);
  EXPECT_LE(run.compiled.hbm_bytes_used, 4 * 4096);
  EXPECT_GE(run.compiled.hbm_bytes_used, 3 * 4096);
}

TEST(FusionTest, ElementwiseChainIsOneKernelWithOneStore) {
  auto run = testing::CheckAgainstEvaluator(kNegateChain, "tiny", 0, 0);
  int loads = 0, stores = 0, vpu = 0;
  for (const auto& i : run.compiled.program.cores[0].instructions) {
    loads += i.opcode == isa::Opcode::kDmaHbmToVmem;
    stores += i.opcode == isa::Opcode::kDmaVmemToHbm;
    vpu += i.opcode == isa::Opcode::kVpuUnary;
  }
  EXPECT_EQ(loads, 1) << "the input is read once";
  EXPECT_EQ(stores, 1) << "only the result is written";
  EXPECT_EQ(vpu, 6);
}

TEST(FusionTest, FusedChainWithRowColScalarOperandsAndMultipleOutputs) {
  // Softmax-like chain plus a select/compare/clamp/is-finite/convert mix; `s` and `c` are used
  // outside the chain (stored), the rest stays in VMEM. Large enough to be chunked on tiny.
  testing::CheckAgainstEvaluator(R"(
HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
ENTRY e {
  x = f32[400,300] parameter(0)
  b = f32[300] parameter(1)
  ninf = f32[] constant(-inf)
  mx = f32[400] reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[400,300] broadcast(mx), dimensions={0}
  bb = f32[400,300] broadcast(b), dimensions={1}
  s = f32[400,300] subtract(x, mb)
  t = f32[400,300] add(s, bb)
  e = f32[400,300] exponential(t)
  c = pred[400,300] compare(e, s), direction=GT
  lo = f32[] constant(0.1)
  hi = f32[] constant(3)
  cl = f32[400,300] clamp(lo, e, hi)
  sel = f32[400,300] select(c, cl, t)
  q = f32[400,300] divide(sel, e)
  fin = pred[400,300] is-finite(q)
  i = s32[400,300] convert(sel)
  ROOT r = (f32[400,300], pred[400,300], f32[400,300], pred[400,300], s32[400,300]) tuple(s, c, q, fin, i)
})",
                                 "tiny", 1e-6, 1e-6);
}

}  // namespace
}  // namespace tpusim::compiler
