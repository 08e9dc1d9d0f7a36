// The interpreter's work units per instruction (isa/work_units.h): a matmul costs its MACs, a
// vector op its elements, a collective its elements times the group, a DMA its elements moved.
#include "isa/work_units.h"

#include <gtest/gtest.h>

#include "isa/footprint.h"
#include "isa/assembler.h"
#include "isa/instruction.h"
#include "isa/interpreter.h"

namespace tpusim::isa {
namespace {

TEST(WorkUnitsTest, MatmulCostsItsMultiplyAccumulates) {
  auto matmul = [](uint64_t m, uint64_t k, uint64_t n) {
    return op::MxuMatmul{.mxu = 0, .lhs = 0, .stride = 1, .m = m, .k = k, .n = n}.ToInstruction();
  };
  EXPECT_EQ(InterpreterWorkUnits(matmul(3, 5, 7)), uint64_t{105});
  // The largest a config allows: 2^24 rows of a 4096 x 4096 array, 2^48 MACs (the ISA's
  // fields reach (2^24 - 1) * (2^16 - 1)^2 < 2^64: no saturation is needed, none happens).
  EXPECT_EQ(InterpreterWorkUnits(matmul(uint64_t{1} << 24, 4096, 4096)), uint64_t{1} << 48);
  const Instruction weights =
      op::MxuLoadWeights{.mxu = 0, .addr = 0, .k = 8, .n = 4, .stride = 4}.ToInstruction();
  EXPECT_EQ(InterpreterWorkUnits(weights), uint64_t{32});
  const Instruction pop =
      op::MxuPop{.mxu = 0, .acc = 0, .m = 6, .n = 4, .dst = 0, .stride = 4}.ToInstruction();
  EXPECT_EQ(InterpreterWorkUnits(pop), uint64_t{24});
}

TEST(WorkUnitsTest, VectorOpsCostTheirElements) {
  EXPECT_EQ(InterpreterWorkUnits(op::VpuFill{.dst = 0, .count = 1000}.ToInstruction()), 1000u);
  EXPECT_EQ(InterpreterWorkUnits(op::VpuBinary{.dst = 0, .a = 0, .b = 0, .rows = 3, .cols = 9}
                                     .ToInstruction()),
            27u);
  EXPECT_EQ(InterpreterWorkUnits(op::XluTranspose{.dst = 0, .src = 0, .rows = 4, .cols = 16}
                                     .ToInstruction()),
            64u);
  EXPECT_EQ(InterpreterWorkUnits(
                op::VpuCopy{.dst = 0, .src = 0, .n0 = 2, .n1 = 3, .n2 = 5}.ToInstruction()),
            30u);
}

TEST(WorkUnitsTest, CollectivesCostTheirElementsTimesTheGroup) {
  const Instruction all_reduce =
      op::IciAllReduce{.src = 0, .dst = 0, .count = 100, .group = 0}.ToInstruction();
  EXPECT_EQ(InterpreterWorkUnits(all_reduce, 4), 400u);
  const Instruction permute =
      op::IciCollectivePermute{.src = 0, .dst = 0, .count = 100, .pairs = 0}.ToInstruction();
  EXPECT_EQ(InterpreterWorkUnits(permute, 4), 100u);  // each core receives one buffer
}

TEST(WorkUnitsTest, DmaCostsItsElementsAndControlNothing) {
  const Instruction dma = op::DmaHbmToVmem{.flag = 0, .src = 0, .dst = 0, .elem_bytes = 4,
                                           .n0 = 16, .n1 = 2, .n2 = 1}
                              .ToInstruction();
  EXPECT_EQ(InterpreterWorkUnits(dma), DmaElementsMoved(dma));
  EXPECT_EQ(InterpreterWorkUnits(dma), 32u);
  EXPECT_EQ(InterpreterWorkUnits(op::Nop{}.ToInstruction()), 0u);
  EXPECT_EQ(InterpreterWorkUnits(op::CtrlLoop{.count = 1u << 30}.ToInstruction()), 0u);
}

// The least work the interpreter charges a program (exec refuses one past its budget before it
// runs): every instruction kInstructionWorkUnits plus its elements, times its loops' trips; a loop
// a ctrl.break_unless may leave counts no trip; code from a loop that holds a ctrl.halt on counts
// nothing.
TEST(WorkUnitsTest, MinimumWorkUnitsCountsLoopTrips) {
  auto least = [](const std::string& text) {
    StatusOr<Program> p = Assemble(text, "w.tasm");
    EXPECT_TRUE(p.ok()) << p.status().message();
    return p.ok() ? MinimumWorkUnits(*p) : 0;
  };
  constexpr uint64_t I = kInstructionWorkUnits;
  const std::string copy = "dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, elem_bytes=4, n0=16\n";
  EXPECT_EQ(least(copy), I + 16);
  // ctrl.loop I, then 3 trips of (I + 16 + sync.wait I + ctrl.endloop I).
  EXPECT_EQ(least("ctrl.loop count=3\n" + copy + "sync.wait flag=0\nctrl.endloop\n"),
            I + 3 * (3 * I + 16));
  // Nested: 2 x 5 trips of the copy, the inner loop's ctrl.loop twice, its endloop ten times.
  EXPECT_EQ(least("ctrl.loop count=2\nctrl.loop count=5\n" + copy + "ctrl.endloop\nctrl.endloop\n"),
            I + 2 * (I + 5 * (I + 16 + I) + I));
  // A loop of count 0 runs no trip.
  EXPECT_EQ(least("ctrl.loop count=0\n" + copy + "ctrl.endloop\n"), I);
  // The counts multiply, saturating.
  EXPECT_EQ(least("ctrl.loop count=4000000000\nctrl.loop count=4000000000\n"
                  "ctrl.loop count=4000000000\n" + copy +
                  "ctrl.endloop\nctrl.endloop\nctrl.endloop\n"),
            UINT64_MAX);
  // A loop with a ctrl.break_unless of its own level may end on its first trip: no trip counted.
  EXPECT_EQ(least("ctrl.loop count=1000\n" + copy +
                  "ctrl.break_unless space=vmem, addr=0x0, trips=999\nctrl.endloop\n" + copy),
            I + I + 16);
  // A core stops at ctrl.halt: nothing after it, nothing of a loop around it past the loop.
  EXPECT_EQ(least(copy + "ctrl.halt\n" + copy), I + 16 + I);
  EXPECT_EQ(least(copy + "ctrl.loop count=1000\n" + copy + "ctrl.halt\nctrl.endloop\n"), I + 16);
  // A loop of 2^31 nop trips: 2^31 x (nop + ctrl.endloop) + its ctrl.loop, past the default
  // budget (it ran 40 minutes when an instruction counted 1).
  const uint64_t nops = least("ctrl.loop count=2147483648\nnop\nctrl.endloop\n");
  EXPECT_EQ(nops, I + (uint64_t{1} << 31) * 2 * I);
  EXPECT_GT(nops, kDefaultWorkBudget);
}

}  // namespace
}  // namespace tpusim::isa
