// Megacore (compile.h): a single-device module on a chip whose TensorCores share HBM (tpu-v4) runs
// its large dots split by N columns over both cores, between sync.barriers; the result is the
// same bits as the one-core program and matches the evaluator.
#include <gtest/gtest.h>

#include "isa/opcode.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::CheckAgainstEvaluator;

int64_t Count(const isa::CoreProgram& core, isa::Opcode op) {
  int64_t n = 0;
  for (const isa::Instruction& i : core.instructions) n += i.opcode == op ? 1 : 0;
  return n;
}

// N = 2304 = 2 cores x 4 MXUs x 128 columns x 2.25: each core gets whole tile sets, the second a
// ragged last one.
constexpr char kWideDot[] = R"(
HloModule wide
ENTRY main {
  x = f32[24,320] parameter(0)
  w = bf16[320,2304] parameter(1)
  ROOT y = f32[24,2304] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(MegacoreTest, WideDotIsSplitOverBothTensorCores) {
  testing::RunResult r = CheckAgainstEvaluator(kWideDot, "tpu-v4", 1e-4, 1e-3);
  ASSERT_EQ(r.compiled.program.num_cores(), 2);
  EXPECT_EQ(r.compiled.devices, 1);
  EXPECT_EQ(r.compiled.cores_per_device, 2);
  for (const isa::CoreProgram& core : r.compiled.program.cores) {
    EXPECT_EQ(Count(core, isa::Opcode::kSyncBarrier), 2);  // operands ready; result written
    EXPECT_GT(Count(core, isa::Opcode::kMxuMatmul), 0);
  }
  // The split is by columns: each core pops its own half of the result tiles.
  EXPECT_EQ(Count(r.compiled.program.cores[0], isa::Opcode::kMxuPop) +
                Count(r.compiled.program.cores[1], isa::Opcode::kMxuPop),
            2304 / 128);
  // Placements are the device's first core.
  for (const BufferPlacement& p : r.compiled.parameters) EXPECT_EQ(p.core, 0);
  for (const BufferPlacement& p : r.compiled.outputs) EXPECT_EQ(p.core, 0);
}

TEST(MegacoreTest, SameBitsAsOneCore) {
  auto module = testing::Parse(kWideDot);
  ASSERT_NE(module, nullptr);
  auto args = hlo::Evaluator::MakeRandomArguments(*module, 7);
  ASSERT_TRUE(args.ok());
  const config::ChipConfig v4 = testing::Config("tpu-v4");
  CompileOptions one;
  one.megacore = false;
  auto a = testing::CompileAndRun(*module, v4, {*args}, one);
  auto b = testing::CompileAndRun(*module, v4, {*args});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(a->compiled.program.num_cores(), 1);
  EXPECT_EQ(b->compiled.program.num_cores(), 2);
  ASSERT_EQ(a->outputs.size(), 1u);
  ASSERT_EQ(b->outputs.size(), 1u);
  EXPECT_EQ(testing::DeviceBytes(a->outputs[0]), testing::DeviceBytes(b->outputs[0]));
}

TEST(MegacoreTest, NarrowDotStaysOnOneCore) {
  // N = 300 < 2 x 4 x 128: splitting would leave MXUs idle on both cores.
  testing::RunResult r = CheckAgainstEvaluator(R"(
HloModule narrow
ENTRY main {
  x = f32[16,200] parameter(0)
  w = f32[200,300] parameter(1)
  ROOT y = f32[16,300] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                                               "tpu-v4", 1e-4, 1e-3);
  EXPECT_EQ(r.compiled.program.num_cores(), 1);
  EXPECT_EQ(r.compiled.cores_per_device, 1);
}

TEST(MegacoreTest, ChipsWithPerCoreHbmDoNotUseIt) {
  // TPU v3: each TensorCore owns half the HBM, no megacore.
  testing::RunResult r = CheckAgainstEvaluator(kWideDot, "tpu-v3", 1e-4, 1e-3);
  EXPECT_EQ(r.compiled.program.num_cores(), 1);
}

}  // namespace
}  // namespace tpusim::compiler
