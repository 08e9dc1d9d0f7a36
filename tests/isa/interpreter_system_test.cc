// DMA, sync flags, loops, several cores and collectives.
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

TEST(InterpreterDma, StridedBlockAndFlag) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data hbm core=0, addr=0x0, s32 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15   # [4,4]
dma.hbm_to_vmem flag=3, src=0x14, dst=0x100, elem_bytes=4, n0=2, n1=2, src_s1=16, dst_s1=8
sync.wait flag=3
dma.vmem_to_hbm flag=3, src=0x100, dst=0x1000, n0=4
dma.hbm_to_host flag=4, src=0x1000, dst=0x40, n0=4
)");
  // The 2x2 block at rows 1..2, cols 1..2 of the [4,4] matrix: src = (1*4 + 1) * 4 bytes = 0x14.
  EXPECT_EQ(ReadS32(in.vmem(0), 0x100, 4), (std::vector<int32_t>{5, 6, 9, 10}));
  EXPECT_EQ(ReadS32(in.host(), 0x40, 4), (std::vector<int32_t>{5, 6, 9, 10}));
  EXPECT_EQ(in.flag(0, 3), 1u);  // +1 (first DMA) -1 (wait) +1 (second DMA)
  EXPECT_EQ(in.flag(0, 4), 1u);
}

TEST(InterpreterDma, SharedAndPrivateHbm) {
  // Cores 0 and 1 share chip 0's HBM: what core 0 writes, core 1 reads.
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, s32 42
.core 0
  dma.vmem_to_hbm flag=0, src=0x0, dst=0x80, n0=1
  sync.wait flag=0
  dma.vmem_to_remote flag=1, src=0x0, dst=0x0, n0=1, dst_core=1, dst_space=vmem, dst_flag=5
.core 1
  sync.wait flag=5
  dma.hbm_to_vmem flag=0, src=0x80, dst=0x10, n0=1
)");
  EXPECT_EQ(ReadS32(in.vmem(1), 0x0, 1)[0], 42);   // the remote DMA
  EXPECT_EQ(ReadS32(in.vmem(1), 0x10, 1)[0], 42);  // through the shared HBM
  EXPECT_EQ(&in.hbm(0), &in.hbm(1));
  EXPECT_NE(&in.hbm(0), &in.hbm(2));  // chip 1
  MemorySizes private_hbm = SmallChip();
  private_hbm.hbm_shared_by_cores = false;
  Interpreter p(private_hbm);
  Program two_cores;
  two_cores.cores.resize(2);
  ASSERT_TRUE(p.Load(two_cores).ok());
  EXPECT_NE(&p.hbm(0), &p.hbm(1));
  EXPECT_EQ(p.hbm(0).capacity(), uint64_t{32} << 20);  // half of the chip's 64 MiB
}

// dma.vmem_to_vmem: a strided copy inside one core's VMEM (a buffer memory-space assignment keeps
// in VMEM), buffered: an overlapping destination gets the source's old bytes; no HBM byte changes.
TEST(InterpreterDma, VmemToVmemCopiesInsideVmemAsIfBuffered) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.data vmem core=0, addr=0x0, s32 1, 2, 3, 4, 5, 6
.core 0
  dma.vmem_to_vmem flag=0, src=0x0, dst=0x100, n0=2, n1=3, src_s1=8, dst_s1=16
  sync.wait flag=0
  dma.vmem_to_vmem flag=1, src=0x0, dst=0x4, n0=4
  sync.wait flag=1
)");
  EXPECT_EQ(ReadS32(in.vmem(0), 0x100, 2), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(ReadS32(in.vmem(0), 0x110, 2), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(ReadS32(in.vmem(0), 0x120, 2), (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(ReadS32(in.vmem(0), 0x0, 6), (std::vector<int32_t>{1, 1, 2, 3, 4, 6}));
  EXPECT_EQ(ReadS32(in.hbm(0), 0x0, 1)[0], 0);
}

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

TEST(InterpreterCollectives, AllReduceAllGatherReduceScatterAllToAll) {
  Interpreter in(SmallChip());
  std::string prog = ".replica_groups 0 {0,1,2,3}\n.replica_groups 1 {0,2},{1,3}\n";
  for (int c = 0; c < 4; ++c) {
    // Core c holds x_c = [c+1, 10(c+1), 100(c+1), 1000(c+1)] at VMEM 0.
    prog += fmt::format(".data vmem core={0}, addr=0x0, f32 {1}, {2}, {3}, {4}\n", c, c + 1,
                        10 * (c + 1), 100 * (c + 1), 1000 * (c + 1));
  }
  for (int c = 0; c < 4; ++c) {
    prog += fmt::format(".core {}\n", c);
    prog +=
        "  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x100, count=4, group=0\n";
    prog += "  ici.all_gather dtype=f32, space=vmem, src=0x0, dst=0x200, count=1, group=1\n";
    prog +=
        "  ici.reduce_scatter op=max, dtype=f32, space=vmem, src=0x0, dst=0x300, count=2, "
        "group=1\n";
    prog += "  ici.all_to_all dtype=f32, space=vmem, src=0x0, dst=0x400, count=2, group=1\n";
  }
  RunAsm(in, prog);
  // Sum over all 4 cores: (1+2+3+4) * [1, 10, 100, 1000].
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(ReadF32(in.vmem(c), 0x100, 4), (std::vector<float>{10, 100, 1000, 10000})) << c;
  }
  // Groups {0,2} and {1,3}: all_gather of the first element = [x_0[0], x_2[0]] = [1, 3] on cores
  // 0, 2.
  EXPECT_EQ(ReadF32(in.vmem(2), 0x200, 2), (std::vector<float>{1, 3}));
  EXPECT_EQ(ReadF32(in.vmem(1), 0x200, 2), (std::vector<float>{2, 4}));
  // reduce_scatter max in {0,2}: chunk 0 (rank 0 = core 0) = max(x_0[0:2], x_2[0:2]) = [3, 30];
  // chunk 1 (core 2) = max(x_0[2:4], x_2[2:4]) = [300, 3000].
  EXPECT_EQ(ReadF32(in.vmem(0), 0x300, 2), (std::vector<float>{3, 30}));
  EXPECT_EQ(ReadF32(in.vmem(2), 0x300, 2), (std::vector<float>{300, 3000}));
  // all_to_all in {1,3}: core 1 gets chunk 0 of x_1 then chunk 0 of x_3 = [2, 20, 4, 40].
  EXPECT_EQ(ReadF32(in.vmem(1), 0x400, 4), (std::vector<float>{2, 20, 4, 40}));
  EXPECT_EQ(ReadF32(in.vmem(3), 0x400, 4), (std::vector<float>{200, 2000, 400, 4000}));
}

TEST(InterpreterCollectives, CollectivePermuteAndBf16AllReduce) {
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.permutation 0 {0,1},{1,2}
.replica_groups 0 {0,1,2}
.data hbm core=0, addr=0x0, s32 7
.data hbm core=1, addr=0x10, s32 8
.data hbm core=2, addr=0x0, s32 9
.data vmem core=0, addr=0x0, bf16 256
.data vmem core=1, addr=0x0, bf16 1
.data vmem core=2, addr=0x0, bf16 1
.core 0
  ici.collective_permute dtype=s32, space=hbm, src=0x0, dst=0x100, count=1, pairs=0
  ici.all_reduce op=sum, dtype=bf16, space=vmem, src=0x0, dst=0x0, count=1, group=0
.core 1
  ici.collective_permute dtype=s32, space=hbm, src=0x10, dst=0x110, count=1, pairs=0
  ici.all_reduce op=sum, dtype=bf16, space=vmem, src=0x0, dst=0x0, count=1, group=0
.core 2
  ici.collective_permute dtype=s32, space=hbm, src=0x0, dst=0x100, count=1, pairs=0
  ici.all_reduce op=sum, dtype=bf16, space=vmem, src=0x0, dst=0x0, count=1, group=0
)");
  // Cores 0 and 1 share chip 0's HBM; core 2 is on chip 1. 0 -> 1 sends 7 to 0x110, 1 -> 2 sends 8
  // to chip 1's 0x100; core 0 is no target and gets 0 at 0x100.
  EXPECT_EQ(ReadS32(in.hbm(1), 0x110, 1)[0], 7);
  EXPECT_EQ(ReadS32(in.hbm(2), 0x100, 1)[0], 8);
  EXPECT_EQ(ReadS32(in.hbm(0), 0x100, 1)[0], 0);
  // bf16 all-reduce in f32, rounded once: 256 + 1 + 1 = 258 (exact in f32) -> bf16(258) = 258
  // (bf16 spacing at 256 is 2). Pairwise bf16 rounding would give bf16(257) = 256, then 256 + 1 =
  // 256.
  EXPECT_EQ(testing::ReadBf16(in.vmem(1), 0x0, 1)[0], 258.0f);
}

TEST(InterpreterCollectives, EverySourceIsReadBeforeAnyDestinationIsWritten) {
  // Cores 0 and 1 share chip 0's HBM, and core 0's destination is core 1's source (and the
  // reverse): every rank's input is the value before the collective, as XLA's semantics and the
  // interpreter's read-all-then-write order give, whatever order the ranks are written in.
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.replica_groups 0 {0,1}
.data hbm core=0, addr=0x0, s32 1, 2
.data hbm core=0, addr=0x8, s32 10, 20
.core 0
  ici.all_reduce op=sum, dtype=s32, space=hbm, src=0x0, dst=0x8, count=2, group=0
  ici.reduce_scatter op=sum, dtype=s32, space=hbm, src=0x0, dst=0x20, count=1, group=0
  ici.all_gather dtype=s32, space=hbm, src=0x0, dst=0x10, count=1, group=0
.core 1
  ici.all_reduce op=sum, dtype=s32, space=hbm, src=0x8, dst=0x0, count=2, group=0
  ici.reduce_scatter op=sum, dtype=s32, space=hbm, src=0x8, dst=0x24, count=1, group=0
  ici.all_gather dtype=s32, space=hbm, src=0x8, dst=0x18, count=1, group=0
)");
  // all-reduce: both ranks get [1 + 10, 2 + 20] (rank 0 wrote 0x8 before rank 1 wrote 0x0, but
  // rank 1's input was read first).
  EXPECT_EQ(ReadS32(in.hbm(0), 0x0, 4), (std::vector<int32_t>{11, 22, 11, 22}));
  // reduce_scatter of [11, 22] + [11, 22]: rank 0 gets chunk 0 (22), rank 1 chunk 1 (44).
  EXPECT_EQ(ReadS32(in.hbm(0), 0x20, 2), (std::vector<int32_t>{22, 44}));
  // all_gather of the first elements (11 and 11) into both destinations.
  EXPECT_EQ(ReadS32(in.hbm(0), 0x10, 4), (std::vector<int32_t>{11, 11, 11, 11}));
}

TEST(InterpreterCollectives, ReductionsKeepRankOrderAndTheDtypesWidth) {
  // f32 sums in rank order: (1e8 + 1) + -1e8 = 0 in f32 (1e8 + 1 rounds to 1e8), where
  // (1e8 + -1e8) + 1 = 1; s8 sums wrap at 8 bits: 100 + 100 + 100 = 300 - 256 = 44; s8 max is
  // signed.
  Interpreter in(SmallChip());
  RunAsm(in, R"(
.replica_groups 0 {0,1,2}
.replica_groups 1 {0,2,1}
.data vmem core=0, addr=0x0, f32 1e8
.data vmem core=1, addr=0x0, f32 1
.data vmem core=2, addr=0x0, f32 -1e8
.data vmem core=0, addr=0x40, s8 100, -1
.data vmem core=1, addr=0x40, s8 100, -128
.data vmem core=2, addr=0x40, s8 100, 5
.core 0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=s8, space=vmem, src=0x40, dst=0x50, count=1, group=0
  ici.all_reduce op=max, dtype=s8, space=vmem, src=0x41, dst=0x51, count=1, group=0
.core 1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=s8, space=vmem, src=0x40, dst=0x50, count=1, group=0
  ici.all_reduce op=max, dtype=s8, space=vmem, src=0x41, dst=0x51, count=1, group=0
.core 2
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=s8, space=vmem, src=0x40, dst=0x50, count=1, group=0
  ici.all_reduce op=max, dtype=s8, space=vmem, src=0x41, dst=0x51, count=1, group=0
)");
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(ReadF32(in.vmem(c), 0x10, 1)[0], 0.0f) << c;  // ranks 0, 1, 2 = cores 0, 1, 2
    EXPECT_EQ(ReadF32(in.vmem(c), 0x20, 1)[0], 1.0f) << c;  // ranks 0, 1, 2 = cores 0, 2, 1
    std::vector<int8_t> s8(2);
    ASSERT_TRUE(in.vmem(c).Read(0x50, s8.data(), 2).ok());
    EXPECT_EQ(s8, (std::vector<int8_t>{44, 5})) << c;
  }
}

TEST(InterpreterCollectives, MismatchAcrossTheGroupIsAnError) {
  Interpreter in(SmallChip());
  Status st = RunAsmStatus(in, R"(
.replica_groups 0 {0,1}
.core 0
  ici.all_reduce op=sum, dtype=f32, src=0x0, dst=0x0, count=4, group=0
.core 1
  ici.all_reduce op=sum, dtype=f32, src=0x0, dst=0x0, count=8, group=0
)");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("collective mismatch across the group: core 0 has count=4 but core 1 "
                              "has count=8"),
            std::string::npos)
      << st.message();
}

// Two groupings that interleave (JAX xmap / 2-D meshes: {0,1},{2,3} then {0,2},{1,3}): core 1
// reaches its second {0,1} all-reduce while core 0 still waits in {0,2}; that is not a mismatch,
// the rendezvous waits for core 0 (this was "collective mismatch ... space" on a real module).
constexpr char kInterleavedGroups[] = R"(
.replica_groups 0 {0,1}, {2,3}
.replica_groups 1 {0,2}, {1,3}
.data vmem core=0, addr=0x0, f32 1
.data vmem core=1, addr=0x0, f32 2
.data vmem core=2, addr=0x0, f32 3
.data vmem core=3, addr=0x0, f32 4
.core 0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x10, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x20, dst=0x30, count=1, group=0
.core 1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x10, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x20, dst=0x30, count=1, group=0
.core 2
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x10, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x20, dst=0x30, count=1, group=0
.core 3
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x10, count=1, group=0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x10, dst=0x20, count=1, group=1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x20, dst=0x30, count=1, group=0
)";

TEST(InterpreterCollectives, InterleavedGroupsWaitForEachOther) {
  Interpreter in(SmallChip());
  RunAsm(in, kInterleavedGroups);
  // {1+2, 3+4} = {3, 7}; {3+7} = 10 everywhere; {10+10} = 20.
  for (int c = 0; c < 4; ++c) EXPECT_EQ(ReadF32(in.vmem(c), 0x30, 1)[0], 20.0f) << c;
}

// Core 0 waits for core 1 in {0,1}; core 1 waits for core 2 in {1,2}; core 2 halts: no
// rendezvous can gather, and the error lists where every core waits.
TEST(InterpreterCollectives, GroupsThatNeverGatherAreADeadlock) {
  Interpreter in(SmallChip());
  Status st = RunAsmStatus(in, R"(
.replica_groups 0 {0,1}, {2}
.replica_groups 1 {1,2}, {0}
.core 0
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x0, count=1, group=0
.core 1
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x0, count=1, group=1
.core 2
  ici.all_reduce op=sum, dtype=f32, space=vmem, src=0x0, dst=0x0, count=1, group=0
)");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("deadlock"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("core 1 waits"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace tpusim::isa
