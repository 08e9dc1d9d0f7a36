// Operand fusion (lower/fusion.h, AddDotPrologues; lower/dot_prologue.cc): the elementwise ops that
// compute a dot's LHS or weights run on each operand block as it is loaded into VMEM. Checked
// against the evaluator on many blocks (the tiny config's 8x8 MXU and small VMEM), with
// per-row, per-column, scalar and full-array inputs, and by the code's shape: the fused operand is
// never stored to HBM and its ops load nothing themselves.
#include <gtest/gtest.h>

#include <string>

#include "compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;
using testing::InstructionsTagged;

// Weights scaled per row (a K vector) and biased per column (an N vector), as NMT's softmax
// gradient scales its [K,N] weights before the dot; the LHS is x * scalar + y.
constexpr char kScaledOperands[] = R"(
HloModule scaled
ENTRY e {
  x = f32[40,56] parameter(0)
  y = f32[40,56] parameter(1)
  w = f32[56,72] parameter(2)
  sk = f32[56] parameter(3)
  bn = f32[72] parameter(4)
  two = f32[] constant(2)
  twob = f32[40,56] broadcast(two), dimensions={}
  xs = f32[40,56] multiply(x, twob)
  lhs = f32[40,56] add(xs, y)
  skb = f32[56,72] broadcast(sk), dimensions={0}
  ws = f32[56,72] multiply(w, skb)
  bnb = f32[56,72] broadcast(bn), dimensions={1}
  rhs = f32[56,72] subtract(ws, bnb)
  ROOT d = f32[40,72] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(DotPrologueTest, ScaledAndBiasedOperandsAreComputedAsTheyAreLoaded) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    auto run = CheckAgainstEvaluator(kScaledOperands, config, 1e-4, 1e-4);
    const isa::Program& p = run.compiled.program;
    for (const char* op : {"xs", "lhs", "ws", "rhs"}) {
      EXPECT_EQ(InstructionsTagged(p, op, isa::Opcode::kDmaHbmToVmem), 0) << op << " " << config;
      EXPECT_EQ(InstructionsTagged(p, op, isa::Opcode::kDmaVmemToHbm), 0) << op << " " << config;
      EXPECT_GT(InstructionsTagged(p, op, isa::Opcode::kVpuBinary), 0) << op << " " << config;
    }
  }
}

// A batched dot whose bf16 weights are converted from f32 and multiplied by a full array, with an
// epilogue on the result as well: prologue and epilogue in one kernel.
TEST(DotPrologueTest, BatchedConvertedWeightsWithAnEpilogue) {
  auto run = CheckAgainstEvaluator(R"(
HloModule batched
ENTRY e {
  x = bf16[3,24,40] parameter(0)
  w = f32[3,40,36] parameter(1)
  g = f32[3,40,36] parameter(2)
  wg = f32[3,40,36] multiply(w, g)
  wb = bf16[3,40,36] convert(wg)
  d = f32[3,24,36] dot(x, wb), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT t = f32[3,24,36] tanh(d)
}
)",
                                   "tiny", 1e-2, 1e-2);
  const isa::Program& p = run.compiled.program;
  EXPECT_EQ(InstructionsTagged(p, "wb", isa::Opcode::kDmaVmemToHbm), 0);
  EXPECT_GT(InstructionsTagged(p, "wb", isa::Opcode::kVpuConvert) +
                InstructionsTagged(p, "wb", isa::Opcode::kVpuCopy) +
                InstructionsTagged(p, "wb", isa::Opcode::kVpuUnary),
            0);
}

// An operand producer read by something else keeps its own kernel (its result must reach HBM).
TEST(DotPrologueTest, AProducerWithAnotherReaderIsNotFused) {
  auto run = CheckAgainstEvaluator(R"(
HloModule shared
ENTRY e {
  x = f32[16,24] parameter(0)
  w = f32[24,8] parameter(1)
  one = f32[] constant(1)
  oneb = f32[24,8] broadcast(one), dimensions={}
  w1 = f32[24,8] add(w, oneb)
  d = f32[16,8] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[16,8], f32[24,8]) tuple(d, w1)
}
)",
                                   "tiny", 1e-4, 1e-4);
  EXPECT_GT(InstructionsTagged(run.compiled.program, "w1", isa::Opcode::kDmaVmemToHbm), 0);
}

// Weights too large for the prologue's VMEM next to the dot's blocks on the tiny config still
// compute the right values (the fallback gives the producers kernels of their own, or the blocks
// shrink to fit).
TEST(DotPrologueTest, LargeOperandsStillCheck) {
  CheckAgainstEvaluator(R"(
HloModule large
ENTRY e {
  x = f32[64,512] parameter(0)
  w = f32[512,256] parameter(1)
  s = f32[512] parameter(2)
  sb = f32[512,256] broadcast(s), dimensions={0}
  ws = f32[512,256] multiply(w, sb)
  ROOT d = f32[64,256] dot(x, ws), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                        "tiny", 1e-3, 1e-3);
}

}  // namespace
}  // namespace tpusim::compiler
