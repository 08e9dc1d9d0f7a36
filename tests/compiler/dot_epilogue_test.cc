// Pop-time fusion (lower/fusion.h, AddDotEpilogues): the elementwise ops right after a dot run on
// each result block in VMEM as it is popped. Checked against the evaluator on several blocks, with
// row, column, scalar and full-array operands, and by the code's shape: the ops load nothing from
// HBM themselves.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

// Linear layer: relu(x @ w + b), then a residual add and a per-row scale; the dot's own result is
// also returned, so it is stored as well.
constexpr char kLinear[] = R"(
HloModule linear
ENTRY e {
  x = f32[96,80] parameter(0)
  w = f32[80,72] parameter(1)
  b = f32[72] parameter(2)
  res = f32[96,72] parameter(3)
  s = f32[96] parameter(4)
  d = f32[96,72] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[96,72] broadcast(b), dimensions={1}
  a = f32[96,72] add(d, bb)
  z = f32[] constant(0)
  zb = f32[96,72] broadcast(z), dimensions={}
  r = f32[96,72] maximum(a, zb)
  sum = f32[96,72] add(r, res)
  sb = f32[96,72] broadcast(s), dimensions={0}
  out = f32[96,72] multiply(sum, sb)
  ROOT t = (f32[96,72], f32[96,72]) tuple(out, d)
}
)";

TEST(DotEpilogueTest, BiasReluResidualAndRowScaleRunAsThePopsEpilogue) {
  // tiny: 8x8 MXU with few accumulator rows, so the result comes in many blocks.
  for (const char* config : {"tiny", "tpu-v4"}) {
    auto run = CheckAgainstEvaluator(kLinear, config, 1e-4, 1e-4);
    const isa::Program& p = run.compiled.program;
    for (const char* op : {"a", "r", "sum", "out"}) {
      EXPECT_EQ(testing::InstructionsTagged(p, op, isa::Opcode::kDmaHbmToVmem), 0)
          << op << " on " << config;
      EXPECT_GT(testing::InstructionsTagged(p, op, isa::Opcode::kVpuBinary), 0)
          << op << " on " << config;
    }
    EXPECT_GT(testing::InstructionsTagged(p, "out", isa::Opcode::kDmaVmemToHbm), 0);  // returned
    EXPECT_EQ(testing::InstructionsTagged(p, "a", isa::Opcode::kDmaVmemToHbm),
              0);  // only used inside
    EXPECT_GT(testing::InstructionsTagged(p, "d", isa::Opcode::kDmaVmemToHbm),
              0);  // the dot is returned too
  }
}

// Two buffer sets (Lowerer::Epilogue): consecutive blocks write their results to alternating VMEM
// blocks, and a block's operands (the bias row) are loaded before its pops are issued, behind the
// matmuls, instead of after them.
TEST(DotEpilogueTest, BlocksAreDoubleBufferedAndTheirOperandsLoadAhead) {
  auto run = CheckAgainstEvaluator(kLinear, "tiny", 1e-4, 1e-4);
  const isa::Program& p = run.compiled.program;
  const auto& core = p.cores[0];
  const auto tagged = [&](size_t i, const char* name) {
    const int32_t tag = core.hlo_tags[i];
    return tag >= 0 && p.hlo_names[static_cast<size_t>(tag)] == name;
  };
  std::set<uint64_t> out_dsts;
  int bias_reads = 0, loaded_ahead = 0;
  for (size_t i = 0; i < core.instructions.size(); ++i) {
    const isa::Instruction& in = core.instructions[i];
    if (in.opcode != isa::Opcode::kVpuBinary) continue;
    const auto op = in.As<isa::op::VpuBinary>();
    if (tagged(i, "out")) out_dsts.insert(op.dst);
    if (!tagged(i, "a")) continue;
    ++bias_reads;
    // Walk back to the load of the bias row this add reads; a pop on the way means the load was
    // issued before the block's pops.
    bool pop_between = false;
    for (size_t j = i; j-- > 0;) {
      const isa::Instruction& prev = core.instructions[j];
      if (prev.opcode == isa::Opcode::kMxuPop) pop_between = true;
      if (prev.opcode == isa::Opcode::kDmaHbmToVmem &&
          prev.As<isa::op::DmaHbmToVmem>().dst == op.b) {
        loaded_ahead += pop_between;
        break;
      }
    }
  }
  EXPECT_GT(bias_reads, 2);
  EXPECT_EQ(out_dsts.size(), 2u);
  EXPECT_EQ(loaded_ahead, bias_reads);
}

// A select whose predicate and false value are broadcasts reads them as they are (vpu.select's
// pred_bcast / b_bcast): no vpu.broadcast expands them first.
TEST(DotEpilogueTest, SelectReadsItsBroadcastOperandsInPlace) {
  auto run = CheckAgainstEvaluator(R"(
HloModule masked_rows
ENTRY e {
  x = f32[40,24] parameter(0)
  w = f32[24,16] parameter(1)
  m = pred[40] parameter(2)
  d = f32[40,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  mb = pred[40,16] broadcast(m), dimensions={0}
  z = f32[] constant(-1)
  zb = f32[40,16] broadcast(z), dimensions={}
  ROOT out = f32[40,16] select(mb, d, zb)
}
)",
                                   "tiny", 1e-5, 1e-5);
  const isa::Program& p = run.compiled.program;
  EXPECT_GT(testing::InstructionsTagged(p, "out", isa::Opcode::kVpuSelect), 0);
  EXPECT_EQ(testing::InstructionsTagged(p, "out", isa::Opcode::kVpuBroadcast), 0);
}

TEST(DotEpilogueTest, BatchedDotWithAConvertEpilogue) {
  auto run = CheckAgainstEvaluator(R"(
HloModule batched
ENTRY e {
  x = f32[3,40,24] parameter(0)
  w = f32[3,24,36] parameter(1)
  d = f32[3,40,36] dot(x, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  t = f32[3,40,36] tanh(d)
  ROOT c = bf16[3,40,36] convert(t)
}
)",
                                   "tiny", 1e-2, 1e-2);
  EXPECT_EQ(testing::InstructionsTagged(run.compiled.program, "t", isa::Opcode::kDmaHbmToVmem), 0);
  // tanh and the bf16 convert run in the pops (TPU v1's Activate, FoldPopActivation): every pop
  // applies tanh, and the stores write the bf16 result only — the f32 dot is never stored.
  int pops = 0, tanh_pops = 0;
  int64_t stored = 0;
  for (const isa::Instruction& i : run.compiled.program.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kMxuPop) {
      ++pops;
      tanh_pops += i.As<isa::op::MxuPop>().act == isa::Activation::kTanh;
      EXPECT_EQ(i.As<isa::op::MxuPop>().dtype, isa::DType::kBF16);
    } else if (i.opcode == isa::Opcode::kDmaVmemToHbm) {
      const auto d = i.As<isa::op::DmaVmemToHbm>();
      stored += static_cast<int64_t>(d.n0 * d.n1 * d.n2 * d.elem_bytes);
    }
  }
  EXPECT_GT(pops, 0);
  EXPECT_EQ(tanh_pops, pops);
  EXPECT_EQ(stored, 3 * 40 * 36 * 2);
}

// TPU v1's requantization: clamp(0, x, 127) then a convert to s8 is the pop's relu with s8
// saturation, stored straight as s8.
TEST(DotEpilogueTest, Int8RequantizationRunsInThePops) {
  auto run = CheckAgainstEvaluator(R"(
HloModule requant
ENTRY e {
  x = s8[96,40] parameter(0)
  w = s8[40,24] parameter(1)
  d = s32[96,24] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  lo = s32[] constant(0)
  hi = s32[] constant(127)
  r = s32[96,24] clamp(lo, d, hi)
  ROOT q = s8[96,24] convert(r)
}
)",
                                   "tpu-v1", 0, 0);
  int relu_s8_pops = 0;
  for (const isa::Instruction& i : run.compiled.program.cores[0].instructions) {
    if (i.opcode != isa::Opcode::kMxuPop) continue;
    const auto p = i.As<isa::op::MxuPop>();
    relu_s8_pops += p.act == isa::Activation::kRelu && p.dtype == isa::DType::kS8;
  }
  EXPECT_GT(relu_s8_pops, 0);
  EXPECT_EQ(testing::InstructionsTagged(run.compiled.program, "r"), 0);  // no kernel of its own
}

// A batched dot whose consumers read it through a reshape (the canonical [B, M, N] dot seen as the
// module's [2, 3, 5, 8, 12] result) and select with a per-example mask broadcast along the batch
// dimensions (Mask R-CNN's per-ROI mask): the select runs on the popped blocks, the mask is loaded
// one value per block and never materialized, and the dot itself is never stored.
constexpr char kMaskedView[] = R"(
HloModule masked_view
ENTRY e {
  x = f32[2,3,6,5,8] parameter(0)
  w = f32[2,3,6,12] parameter(1)
  m = pred[2,3] parameter(2)
  d = f32[2,3,5,8,12] dot(x, w), lhs_batch_dims={0,1}, rhs_batch_dims={0,1}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  mb = pred[2,3,5,8,12] broadcast(m), dimensions={0,1}
  z = f32[] constant(0)
  zb = f32[2,3,5,8,12] broadcast(z), dimensions={}
  ROOT out = f32[2,3,5,8,12] select(mb, d, zb)
}
)";

TEST(DotEpilogueTest, PerExampleMaskOnAViewOfTheResultRunsOnThePoppedBlocks) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    auto run = CheckAgainstEvaluator(kMaskedView, config, 1e-5, 1e-5);
    const isa::Program& p = run.compiled.program;
    EXPECT_EQ(testing::InstructionsTagged(p, "mb"), 0) << config;  // no kernel of its own
    EXPECT_GT(testing::InstructionsTagged(p, "out", isa::Opcode::kVpuSelect), 0) << config;
    EXPECT_EQ(testing::InstructionsTagged(p, "out", isa::Opcode::kDmaHbmToVmem), 0) << config;
    EXPECT_EQ(testing::InstructionsTagged(p, "d", isa::Opcode::kDmaVmemToHbm), 0) << config;
    EXPECT_GT(testing::InstructionsTagged(p, "out", isa::Opcode::kDmaVmemToHbm), 0) << config;
  }
}

// The same mask also returned: it is read outside the epilogue, so it keeps its own kernel (before
// the select reads it), and the values are unchanged.
TEST(DotEpilogueTest, AMaskReadElsewhereIsNotAbsorbed) {
  std::string hlo = kMaskedView;
  hlo.replace(hlo.find("ROOT out"), 8, "out");
  hlo.insert(hlo.rfind('}'), "  ROOT t = (f32[2,3,5,8,12], pred[2,3,5,8,12]) tuple(out, mb)\n");
  auto run = CheckAgainstEvaluator(hlo, "tiny", 1e-5, 1e-5);
  EXPECT_GT(testing::InstructionsTagged(run.compiled.program, "mb"), 0);
}

// Without fusion the same module is one kernel per op; the values are the same.
TEST(DotEpilogueTest, SameValuesWithoutFusion) {
  CompileOptions unfused;
  unfused.fuse_elementwise = false;
  auto run = CheckAgainstEvaluator(kLinear, "tiny", 1e-4, 1e-4, unfused);
  EXPECT_GT(testing::InstructionsTagged(run.compiled.program, "a", isa::Opcode::kDmaHbmToVmem), 0);
}

}  // namespace
}  // namespace tpusim::compiler
