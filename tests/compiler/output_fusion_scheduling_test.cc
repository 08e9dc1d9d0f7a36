// output-fusion-scheduling: independent instructions move before a dot, its elementwise consumers
// become contiguous after it, dependent non-elementwise ones move after them; values unchanged.
#include "compiler/passes/output_fusion_scheduling.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "hlo/computation.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

std::vector<std::string> Order(const hlo::HloModule& m) {
  std::vector<std::string> names;
  for (const auto& i : m.entry_computation()->instructions()) names.push_back(i->name());
  return names;
}

constexpr const char* kModule = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,32] parameter(1)
  bias = bf16[32] parameter(2)
  d = f32[8,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bf = f32[32] convert(bias)
  bb = f32[8,32] broadcast(bf), dimensions={1}
  y = f32[8,32] add(d, bb)
  z = f32[] constant(0)
  r = f32[8] reduce(y, z), dimensions={1}, to_apply=add
  sq = f32[8,32] multiply(y, y)
  ROOT t = (f32[8], f32[8,32]) tuple(r, sq)
})";

TEST(OutputFusionSchedulingTest, ConsumersBecomeContiguousAfterTheDot) {
  auto module = testing::Parse(kModule);
  ASSERT_NE(module, nullptr);
  OutputFusionScheduling pass;
  auto changed = pass.Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  const std::vector<std::string> want{"x", "w", "bias", "bf", "bb", "z", "d", "y", "sq", "r", "t"};
  EXPECT_EQ(Order(*module), want);
  // A second run finds nothing to move.
  auto again = pass.Run(*module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST(OutputFusionSchedulingTest, ValuesUnchangedThroughTheWholeCompiler) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    testing::CheckAgainstEvaluator(kModule, config, 1e-5, 1e-4);
  }
}

// A loop fusion: the converts of per-feature scales (other dimensions) sit between the ops of an
// elementwise chain, as in a batch-norm backward; they move before the chain, which becomes one
// run (the window's other independent instructions, the constant and its broadcast, move with
// them).
// A batched dot read through canonicalize's result reshape, with a reduce of another input
// between it and its consumers (GNMT's projection with two loss terms added): the reduce moves
// before the dot, and the consumers run on the dot's popped blocks.
constexpr const char* kViewModule = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,6,16] parameter(0)
  w = f32[16,24] parameter(1)
  q = f32[4,6,8] parameter(2)
  d = f32[4,6,24] dot(x, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  s = f32[] reduce(q, z), dimensions={0,1,2}, to_apply=add
  sb = f32[4,6,24] broadcast(s), dimensions={}
  ROOT y = f32[4,6,24] add(d, sb)
})";

TEST(OutputFusionSchedulingTest, ConsumersOfAViewOfTheDotJoinItsEpilogue) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    auto run = testing::CheckAgainstEvaluator(kViewModule, config, 1e-4, 1e-4);
    const isa::Program& p = run.compiled.program;
    EXPECT_EQ(testing::InstructionsTagged(p, "y", isa::Opcode::kDmaHbmToVmem), 0) << config;
    EXPECT_GT(testing::InstructionsTagged(p, "y", isa::Opcode::kVpuBinary), 0) << config;
    EXPECT_EQ(testing::InstructionsTagged(p, "d", isa::Opcode::kDmaVmemToHbm), 0) << config;
  }
}

TEST(OutputFusionSchedulingTest, ScaleConvertsMoveOutOfAnElementwiseChain) {
  const char* text = R"(
HloModule m
ENTRY e {
  x = bf16[4,6,8] parameter(0)
  s0 = f32[8] parameter(1)
  s1 = f32[8] parameter(2)
  c0 = bf16[8] convert(s0)
  b0 = bf16[4,6,8] broadcast(c0), dimensions={2}
  y0 = bf16[4,6,8] multiply(x, b0)
  c1 = bf16[8] convert(s1)
  b1 = bf16[4,6,8] broadcast(c1), dimensions={2}
  y1 = bf16[4,6,8] add(y0, b1)
  one = bf16[] constant(1)
  ob = bf16[4,6,8] broadcast(one), dimensions={}
  ROOT y2 = bf16[4,6,8] add(y1, ob)
})";
  auto module = testing::Parse(text);
  ASSERT_NE(module, nullptr);
  OutputFusionScheduling pass;
  auto changed = pass.Run(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  const std::vector<std::string> want{"x",  "s0",  "s1", "c0", "b0", "c1",
                                      "b1", "one", "ob", "y0", "y1", "y2"};
  EXPECT_EQ(Order(*module), want);
  for (const char* config : {"tiny", "tpu-v4"}) {
    testing::CheckAgainstEvaluator(text, config, 1e-2, 1e-2);
  }
}

// Input fusion (lower/fusion.h): a one-hot of labels — an iota along the vocabulary, a compare
// with the broadcast labels, a select of broadcast constants — reduced over the vocabulary is one
// kernel: the iota is one stored row, the pred and f32 one-hot arrays never exist in HBM.
constexpr const char* kOneHot = R"(
HloModule onehot
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  lab = s32[BATCH,SEQ] parameter(0)
  io = s32[BATCH,SEQ,VOCAB] iota(), iota_dimension=2
  lb = s32[BATCH,SEQ,VOCAB] broadcast(lab), dimensions={0,1}
  eq = pred[BATCH,SEQ,VOCAB] compare(io, lb), direction=EQ
  one = f32[] constant(1)
  zero = f32[] constant(0)
  ob = f32[BATCH,SEQ,VOCAB] broadcast(one), dimensions={}
  zb = f32[BATCH,SEQ,VOCAB] broadcast(zero), dimensions={}
  oh = f32[BATCH,SEQ,VOCAB] select(eq, ob, zb)
  ROOT r = f32[BATCH,SEQ] reduce(oh, zero), dimensions={2}, to_apply=add
})";

std::string OneHot(int64_t batch, int64_t seq, int64_t vocab) {
  std::string s = kOneHot;
  for (auto [key, v] :
       {std::pair<std::string, int64_t>{"BATCH", batch}, {"SEQ", seq}, {"VOCAB", vocab}}) {
    for (size_t at = s.find(key); at != std::string::npos; at = s.find(key)) {
      s.replace(at, key.size(), std::to_string(v));
    }
  }
  return s;
}

TEST(InputFusionTest, OneHotReductionIsOneKernelWithNothingInHbm) {
  for (const char* config : {"tiny", "tpu-v4"}) {
    const auto run = testing::CheckAgainstEvaluator(OneHot(6, 10, 300), config, 0, 0);
    const isa::Program& p = run.compiled.program;
    for (const char* op : {"eq", "oh"}) {
      EXPECT_EQ(testing::InstructionsTagged(p, op, isa::Opcode::kDmaVmemToHbm), 0) << op;
    }
    EXPECT_GT(testing::InstructionsTagged(p, "r", isa::Opcode::kVpuReduce), 0);
    // HBM holds the labels, the iota's one row, the zero and the result (with 64-byte rounding
    // and the 64-byte placeholders of the fusion-internal values); on tpu-v4 each in its TPU
    // tiles (s32[6,10] in one 4 KiB T(8,128) tile, s32[300] in T(512), a scalar in T(256)) —
    // far below one [6,10,300] value (72,000 bytes).
    const int64_t tiled = 4096 + 2048 + 1024 + 4096;
    EXPECT_LT(run.compiled.hbm_bytes_used,
              std::string(config) == "tiny" ? 6 * 10 * 4 * 2 + 300 * 4 + 4096 : tiled + 4096);
  }
}

// A virtual iota has code of its own (its one stored row, written at the iota's place in the
// program): a loop fusion that starts before it must not read it. Two equal iotas, the second
// placed between two members of one elementwise run, read by the later member (30 of 72 elements
// came out wrong before: the run's kernel read the second iota's row before it was written).
TEST(LoopFusionTest, IotaPlacedInsideARunIsWrittenBeforeItIsRead) {
  const std::string text = R"(
HloModule two_iota
ENTRY main {
  k = s32[6,6] parameter(0)
  i1 = s32[6,6] iota(), iota_dimension=1
  ge = pred[6,6] compare(k, i1), direction=GE
  i2 = s32[6,6] iota(), iota_dimension=1
  c0 = s32[] constant(0)
  b0 = s32[6,6] broadcast(c0), dimensions={}
  col = pred[6,6] compare(i2, b0), direction=EQ
  x = f32[6,200] parameter(1)
  i3 = f32[6,200] iota(), iota_dimension=1
  y = f32[6,200] multiply(x, x)
  i4 = f32[6,200] iota(), iota_dimension=1
  z = f32[6,200] add(y, i4)
  w = f32[6,200] add(z, i3)
  ROOT s = (pred[6,6], pred[6,6], f32[6,200]) tuple(ge, col, w)
})";
  for (const char* config : {"tiny", "tpu-v4"}) {
    SCOPED_TRACE(config);
    testing::CheckAgainstEvaluator(text, config, 0, 0);
  }
}

// `--dump-after fusion` prints the decisions with XLA's fusion kinds.
TEST(InputFusionTest, DumpAfterFusionNamesTheKinds) {
  auto module = testing::Parse(OneHot(2, 3, 40));
  ASSERT_NE(module, nullptr);
  CompileOptions options;
  options.dump_after = "fusion";
  auto compiled = Compile(*module, testing::Config("tpu-v4"), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  EXPECT_NE(compiled->dump.find("kInput   eq, oh, r\n"), std::string::npos) << compiled->dump;
  auto dot = testing::Parse(kModule);
  ASSERT_NE(dot, nullptr);
  auto with_dot = Compile(*dot, testing::Config("tpu-v4"), options);
  ASSERT_TRUE(with_dot.ok()) << with_dot.status().message();
  EXPECT_NE(with_dot->dump.find("kOutput  d; on popped blocks: y"), std::string::npos)
      << with_dot->dump;
}

// A row longer than 2^18 elements is not fused with its producer (a chunk holds whole rows): the
// reduce keeps its own kernel, which reduces long rows in chunks (ReduceLongRows).
TEST(InputFusionTest, RowsLongerThanAChunkKeepTheirOwnReduce) {
  auto module = testing::Parse(R"(
HloModule longrow
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,4000000] parameter(0)
  e = f32[2,4000000] exponential(x)
  zero = f32[] constant(0)
  ROOT r = f32[2] reduce(e, zero), dimensions={1}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  CompileOptions options;
  options.timing_only = true;
  auto compiled = Compile(*module, testing::Config("tiny"), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
}

// The class of a real LLaMA-2 training step's pred[1024,4096,32000] (134 GB): the fused working set
// fits, so the module compiles within the HBM it really needs.
TEST(InputFusionTest, HugeLogicalShapesCompileWithinTheirRealHbm) {
  auto module = testing::Parse(OneHot(1024, 4096, 32000));
  ASSERT_NE(module, nullptr);
  CompileOptions options;
  options.timing_only = true;
  auto compiled = Compile(*module, testing::Config("tpu-v4"), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  EXPECT_LT(compiled->hbm_bytes_used, int64_t{64} << 20);
}

// A reduced row longer than VMEM (tiny: 1 MiB) is reduced in chunks.
TEST(ReduceChunksTest, ReducedRowLongerThanVmem) {
  testing::CheckAgainstEvaluator(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[3,700,400] parameter(0)
  one = f32[] constant(1.5)
  ninf = f32[] constant(-inf)
  s = f32[3] reduce(x, one), dimensions={1,2}, to_apply=add
  m = f32[] reduce(x, ninf), dimensions={0,1,2}, to_apply=mx
  ROOT t = (f32[3], f32[]) tuple(s, m)
})",
                                 "tiny", 1e-5, 1e-4);
}

}  // namespace
}  // namespace tpusim::compiler
