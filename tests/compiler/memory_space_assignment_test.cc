// Memory-space assignment (compiler/lower/memory_space_assignment.h): with
// core.vmem.scoped_limit_bytes below the VMEM capacity, values passed between kernels stay in the
// rest of VMEM (their DMAs become dma.vmem_to_vmem), the program computes the same bits, and HBM
// traffic falls; values something other than this core's kernels touches (parameters, the result,
// a collective's operands) stay in HBM.
#include <gtest/gtest.h>

#include <string>

#include "compile_test_util.h"
#include "isa/program_traffic.h"

namespace tpusim::compiler {
namespace {

// Three layers: dot + bias + tanh, then a max-pool written as reshape + reduce, then a dot: each
// layer's output is a separate kernel's input.
constexpr char kLayers[] = R"(
HloModule layers
max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  x = f32[64,96] parameter(0)
  w1 = f32[96,128] parameter(1)
  b1 = f32[128] parameter(2)
  w2 = f32[64,32] parameter(3)
  d1 = f32[64,128] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,128] broadcast(b1), dimensions={1}
  s1 = f32[64,128] add(d1, bb)
  h1 = f32[64,128] tanh(s1)
  r = f32[32,2,2,64] reshape(h1)
  lo = f32[] constant(-1e30)
  p = f32[32,64] reduce(r, lo), dimensions={1,2}, to_apply=max_f32
  ROOT d2 = f32[32,32] dot(p, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

config::ChipConfig WithScopedLimit(const std::string& name, int64_t limit) {
  config::ChipConfig c = testing::Config(name);
  c.core.vmem_scoped_limit_bytes = limit;
  return c;
}

int Count(const isa::Program& p, isa::Opcode op) {
  int n = 0;
  for (size_t c = 0; c < p.cores.size(); ++c) {
    for (const isa::Instruction& i : p.cores[c].instructions) n += i.opcode == op;
  }
  return n;
}

TEST(MemorySpaceAssignmentTest, LayerOutputsStayInVmemWithTheSameBits) {
  for (const char* name : {"tiny", "tpu-v3"}) {  // (tpu-v4's megacore keeps no buffers)
    SCOPED_TRACE(name);
    const config::ChipConfig all = testing::Config(name);
    const auto hbm = testing::ExpectSameBits(kLayers, all);
    const auto kept =
        testing::ExpectSameBits(kLayers, WithScopedLimit(name, all.core.vmem_bytes / 2));
    EXPECT_EQ(Count(hbm.compiled.program, isa::Opcode::kDmaVmemToVmem), 0);
    EXPECT_GT(Count(kept.compiled.program, isa::Opcode::kDmaVmemToVmem), 0);
    // The pool's input and output never cross HBM: its kernel reads only its init value (a
    // constant) from HBM.
    EXPECT_EQ(testing::InstructionsTagged(kept.compiled.program, "p", isa::Opcode::kDmaHbmToVmem),
              1);
    EXPECT_EQ(testing::InstructionsTagged(kept.compiled.program, "p", isa::Opcode::kDmaVmemToHbm),
              0);
    EXPECT_LT(isa::ProgramDmaBytes(kept.compiled.program),
              isa::ProgramDmaBytes(hbm.compiled.program));
    EXPECT_LE(kept.compiled.peak_vmem_bytes, all.core.vmem_bytes);
  }
}

// A value computed inside an ISA loop (the loop is not unrolled) and carried to the next trip.
constexpr char kLoop[] = R"(
HloModule fori
body {
  s = (s32[], f32[8,16], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8,16] get-tuple-element(s), index=1
  w = f32[16,16] get-tuple-element(s), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  xw = f32[8,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x1 = f32[8,16] tanh(xw)
  ROOT t = (s32[], f32[8,16], f32[16,16]) tuple(i1, x1, w)
}
cond {
  s = (s32[], f32[8,16], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x0 = f32[8,16] parameter(0)
  w0 = f32[16,16] parameter(1)
  e0 = f32[8,16] exponential(x0)
  zero = s32[] constant(0)
  init = (s32[], f32[8,16], f32[16,16]) tuple(zero, e0, w0)
  loop = (s32[], f32[8,16], f32[16,16]) while(init), condition=cond, body=body
  x6 = f32[8,16] get-tuple-element(loop), index=1
  ROOT out = f32[8,16] negate(x6)
}
)";

TEST(MemorySpaceAssignmentTest, ValuesCarriedAroundAnIsaLoopKeepTheirBits) {
  CompileOptions options;
  options.max_unrolled_instructions = 1;  // a ctrl.loop, not six copies of the body
  const config::ChipConfig c = WithScopedLimit("tiny", 512 * 1024);
  auto module = testing::Parse(kLoop);
  ASSERT_NE(module, nullptr);
  auto args = hlo::Evaluator::MakeRandomArguments(*module, 5);
  ASSERT_TRUE(args.ok());
  hlo::EvaluatorOptions eo;
  eo.tpu_default_precision = true;
  eo.mxu_rows = c.core.mxu.rows;
  hlo::Evaluator ev(eo);
  auto want = ev.Evaluate(*module, *args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto run = testing::CompileAndRun(*module, c, {*args}, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_FALSE(testing::LoopCounts(run->compiled.program).empty());
  EXPECT_GT(Count(run->compiled.program, isa::Opcode::kDmaVmemToVmem), 0);
  ASSERT_EQ(run->outputs.size(), 1u);
  EXPECT_LE(testing::WorstError(run->outputs[0], *want->Leaves()[0], 1e-6, 1e-6), 1.0);
}

// The all-reduce's operand and result are read and written by the collective, not only by this
// core's kernels: they stay in HBM; the value after it is kept.
constexpr char kAllReduce[] = R"(
HloModule ar, replica_count=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  g = f32[16,128] parameter(0)
  t = f32[16,128] exponential(g)
  ar = f32[16,128] all-reduce(t), replica_groups={{0,1}}, to_apply=add
  v = f32[16,128] tanh(ar)
  ROOT out = f32[16,128] multiply(v, v)
}
)";

TEST(MemorySpaceAssignmentTest, CollectiveOperandsStayInHbm) {
  auto module = testing::Parse(kAllReduce);
  ASSERT_NE(module, nullptr);
  config::ChipConfig c = WithScopedLimit("tiny-4", 512 * 1024);
  CompileOptions options;
  options.fuse_elementwise = false;  // v and out in kernels of their own
  auto compiled = Compile(*module, c, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  const isa::Program& p = compiled->program;
  EXPECT_EQ(testing::InstructionsTagged(p, "t", isa::Opcode::kDmaVmemToVmem), 0);
  EXPECT_GT(testing::InstructionsTagged(p, "t", isa::Opcode::kDmaVmemToHbm), 0);
  EXPECT_GT(testing::InstructionsTagged(p, "v", isa::Opcode::kDmaVmemToVmem), 0);
  EXPECT_GT(testing::InstructionsTagged(p, "out", isa::Opcode::kDmaVmemToHbm), 0);
}

}  // namespace
}  // namespace tpusim::compiler
