// The interpreter's loop over the instructions (isa/interpreter.cc): loops, ctrl.break_unless, the
// instruction budget, deadlocks, and several cores through flags and barriers. The instructions'
// own semantics are execute_{dma,mxu,vpu,collective}_test.cc's.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <memory>

#include "isa/work_units.h"
#include "tests/isa/interpreter_test_util.h"

namespace tpusim::isa {
namespace {

using testing::ReadF32;
using testing::ReadS32;
using testing::RunAsm;
using testing::RunAsmStatus;
using testing::SmallChip;

TEST(InterpreterControl, LoopsRepeatTheBody) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
ctrl.loop count=3
  sync.signal flag=0, value=2
  ctrl.loop count=4
    sync.signal flag=1
  ctrl.endloop
ctrl.endloop
ctrl.loop count=0
  sync.signal flag=2
ctrl.endloop
sync.signal flag=3
ctrl.halt
sync.signal flag=3
)");
  EXPECT_EQ(in.flag(0, 0), 6u);   // 3 x 2
  EXPECT_EQ(in.flag(0, 1), 12u);  // 3 x 4
  EXPECT_EQ(in.flag(0, 2), 0u);   // count=0 skips the body
  EXPECT_EQ(in.flag(0, 3), 1u);   // nothing runs after ctrl.halt
}

// ctrl.break_unless (issue 16: a while whose trip count depends on data): the loop runs until the
// pred the program computed is false, whatever its count; then execution continues after the
// ctrl.endloop. Here i = 0; while (i < 5) i += 1 — 5 body trips, the compare 6 times.
constexpr char kCountToFive[] = R"(
.data vmem core=0, addr=0x0, s32 0
.data vmem core=0, addr=0x10, s32 1
.data vmem core=0, addr=0x20, s32 5
ctrl.loop count=1000
  vpu.compare op=lt, dtype=s32, dst=0x40, a=0x0, b=0x20, cols=1
  ctrl.break_unless space=vmem, addr=0x40, trips=5
  vpu.binary op=add, dtype=s32, dst=0x0, a=0x0, b=0x10, cols=1
  sync.signal flag=1
ctrl.endloop
sync.signal flag=2
)";

TEST(InterpreterControl, BreakUnlessLeavesTheLoopOnAComputedPred) {
  Interpreter in(SmallChip());
  RunAsm(in, kCountToFive);
  EXPECT_EQ(in.flag(0, 1), 5u);  // body trips
  EXPECT_EQ(in.flag(0, 2), 1u);  // continued after the ctrl.endloop
  int32_t i = 0;
  ASSERT_TRUE(in.vmem(0).Read(0x0, &i, 4).ok());
  EXPECT_EQ(i, 5);
}

TEST(InterpreterControl, BreakUnlessOutsideALoopIsRefused) {
  // The assembler refuses it located (AssemblerTest); a program built (or decoded) without it
  // meets the verifier and the interpreter.
  EXPECT_FALSE(Assemble("ctrl.break_unless space=vmem, addr=0x0\n", "bad.tasm").ok());
  op::CtrlBreakUnless b;
  b.space = MemSpace::kVmem;
  auto p = std::make_unique<Program>();
  p->cores.resize(1);
  p->cores[0].Append(b.ToInstruction(), kNoHloTag, kNoSourceLine);
  Status v = Verify(*p, SmallChip());
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find("outside a loop"), std::string::npos) << v.message();
  Interpreter in(SmallChip());
  ASSERT_TRUE(in.Load(*p).ok());
  Status st = in.Run();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ctrl.break_unless: ctrl.break_unless outside a loop"),
            std::string::npos)
      << st.message();
}

TEST(InterpreterControl, InstructionBudget) {
  Interpreter in(SmallChip(), {.max_instructions = 1000});
  Status st = RunAsmStatus(in, "ctrl.loop count=4000000000\nnop\nctrl.endloop\n");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("instruction budget of 1000 exhausted"), std::string::npos);
}

// A DMA counts kInstructionWorkUnits + its bytes and rows, charged before it runs: a valid copy
// repeated by a loop cannot outrun the budget, and a copy past it leaves its destination
// untouched.
TEST(InterpreterControl, InstructionBudgetCountsDmaBytesAndRows) {
  const std::string program =
      ".data hbm core=0, addr=0x0, f32 7\n"
      "dma.hbm_to_vmem flag=0, src=0x0, dst=0x40, elem_bytes=4, n0=1024\n"
      "sync.wait flag=0\n";
  // The DMA's 4096 bytes and 1 row are charged before it runs, its kInstructionWorkUnits (I)
  // after; the wait I.
  constexpr uint64_t I = kInstructionWorkUnits;
  constexpr uint64_t kDma = 4096 / kDmaBytesPerUnit + kDmaRowUnits;
  Interpreter tight(SmallChip(), {.max_instructions = kDma - 1});
  Status st = RunAsmStatus(tight, program);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.message();
  EXPECT_NE(st.message().find(fmt::format(
                "core 0 instruction 0 (test.tasm:2) dma.hbm_to_vmem: instruction budget of {} "
                "exhausted (an instruction counts 4096 plus its element operations, each weighted "
                "by its measured host time: a DMA's bytes and rows, a matmul's "
                "multiply-accumulates and outputs",
                kDma - 1)),
            std::string::npos)
      << st.message();
  EXPECT_EQ(testing::ReadF32(tight.vmem(0), 0x40, 1)[0], 0.0f);  // not copied
  Interpreter enough(SmallChip(), {.max_instructions = kDma + 2 * I});
  RunAsm(enough, program);
  EXPECT_EQ(enough.executed(), 2u);  // instructions, not work
  EXPECT_EQ(testing::ReadF32(enough.vmem(0), 0x40, 1)[0], 7.0f);
}

// A matmul counts its multiply-accumulates and outputs, m x n x (k x kMacUnits +
// kMxuOutputUnits), plus the array it latches, charged before it runs: however large the array
// and the streamed rows, the budget bounds the interpreter's MACs, and a matmul past it writes no
// accumulator.
TEST(InterpreterControl, InstructionBudgetCountsMatmulMacs) {
  const std::string program =
      ".data vmem core=0, addr=0x0, bf16 1\n"
      "mxu.load_weights mxu=0, addr=0x0, k=8, n=8, stride=8, dtype=bf16\n"
      "mxu.matmul mxu=0, lhs=0x0, stride=1, m=64, k=8, n=8, dtype=bf16, acc=0, latch=1\n";
  // load_weights: 64 weights + the 8 x 8 array + I; the matmul: 64 x 8 outputs of 8 MACs and the
  // latched array before it runs, I after.
  constexpr uint64_t I = kInstructionWorkUnits;
  constexpr uint64_t kWeights = 64 * kWeightUnits + 64 * kMxuArrayUnits + I;
  constexpr uint64_t kMatmul = 64 * 8 * (8 * kMacUnits + kMxuOutputUnits) + 64 * kMxuArrayUnits;
  Interpreter tight(SmallChip(), {.max_instructions = kWeights + kMatmul - 1});
  Status st = RunAsmStatus(tight, program);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.message();
  EXPECT_NE(st.message().find(fmt::format("core 0 instruction 1 (test.tasm:3) mxu.matmul: "
                                          "instruction budget of {} exhausted (an instruction",
                                          kWeights + kMatmul - 1)),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(tight.mxu(0, 0).acc.empty());  // no accumulator row was written
  Interpreter enough(SmallChip(), {.max_instructions = kWeights + kMatmul + I});
  RunAsm(enough, program);
  EXPECT_EQ(enough.executed(), 2u);
  EXPECT_FALSE(enough.mxu(0, 0).acc.empty());
}

// A collective counts its elements times the group, for every member, before it runs.
TEST(InterpreterControl, InstructionBudgetCountsCollectiveElements) {
  const std::string program =
      ".replica_groups 0 {0,1}\n"
      ".core 0\n  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x100, count=16, "
      "group=0\n"
      ".core 1\n  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x100, count=16, "
      "group=0\n";
  // Two arrivals (I each), then 2 members x 16 elements x 2 ranks = 64 elements before the
  // exchange.
  constexpr uint64_t I = kInstructionWorkUnits;
  constexpr uint64_t kElements = 64 * kCollectiveElementUnits;
  Interpreter tight(SmallChip(), {.max_instructions = 2 * I + kElements - 1});
  EXPECT_EQ(RunAsmStatus(tight, program).code(), StatusCode::kResourceExhausted);
  Interpreter enough(SmallChip(), {.max_instructions = 2 * I + kElements});
  RunAsm(enough, program);
  EXPECT_EQ(enough.executed(), 2u);
}

TEST(InterpreterControl, DeadlockIsReportedNotHung) {
  Interpreter in(SmallChip());
  Status st = RunAsmStatus(in, R"(
.core 0
  sync.wait flag=7
.core 1
  sync.wait flag=0, value=2
)");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "deadlock: no core can make progress:\n"
            "  core 0 waits at instruction 0: sync.wait flag=7, value=1 (flag 7 is 0)\n"
            "  core 1 waits at instruction 0: sync.wait flag=0, value=2 (flag 0 is 0)");
}

TEST(InterpreterControl, CoresSynchronizeThroughFlagsAndBarriers) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.replica_groups 0 {0,1}
.core 0
  sync.wait flag=0                                   # until core 1 has written its VMEM ...
  sync.barrier group=0
  sync.signal flag=9
.core 1
  vpu.fill dtype=s32, dst=0, count=1, value=5
  dma.vmem_to_remote flag=0, src=0, dst=0x40, n0=1, dst_core=0, dst_space=vmem, dst_flag=0
  sync.barrier group=0
)");
  EXPECT_EQ(ReadS32(in.vmem(0), 0x40, 1)[0], 5);
  EXPECT_EQ(in.flag(0, 9), 1u);
}

}  // namespace
}  // namespace tpusim::isa
