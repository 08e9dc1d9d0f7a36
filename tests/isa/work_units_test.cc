// The interpreter's work units per instruction (isa/work_units.h): a matmul costs its MACs and
// outputs, a vector op its elements, a collective its elements times the group, a DMA its bytes
// and rows, each times its kind's measured charge.
#include "isa/work_units.h"

#include <gtest/gtest.h>

#include "isa/footprint.h"
#include "isa/assembler.h"
#include "isa/instruction.h"
#include "isa/interpreter.h"

namespace tpusim::isa {
namespace {

// A chip with an 8 x 8 MXU array (64 elements).
MemorySizes Chip() {
  MemorySizes s;
  s.mxu_rows = 8;
  s.mxu_cols = 8;
  return s;
}

TEST(WorkUnitsTest, MatmulCostsItsMultiplyAccumulatesAndOutputs) {
  auto matmul = [](uint64_t m, uint64_t k, uint64_t n, bool latch = false) {
    return op::MxuMatmul{.mxu = 0, .lhs = 0, .stride = 1, .m = m, .k = k, .n = n, .latch = latch}
        .ToInstruction();
  };
  EXPECT_EQ(InterpreterWorkUnits(matmul(3, 5, 7), Chip()), 21 * (5 * kMacUnits + kMxuOutputUnits));
  // k = 1: the outputs cost more than the MACs (measured 2.5 ns an output).
  EXPECT_EQ(InterpreterWorkUnits(matmul(1024, 1, 128), Chip()), 131072 * (kMacUnits + 6));
  // Latching copies the 8 x 8 array.
  EXPECT_EQ(InterpreterWorkUnits(matmul(1, 1, 1, true), Chip()),
            kMacUnits + kMxuOutputUnits + 64 * kMxuArrayUnits);
  // The largest a config allows: 2^24 rows of a 4096 x 4096 array, about 2^50 units (the ISA's
  // fields reach (2^24 - 1) * (2^16 - 1)^2 * 3 < 2^64: no saturation).
  EXPECT_EQ(InterpreterWorkUnits(matmul(uint64_t{1} << 24, 4096, 4096), Chip()),
            (uint64_t{1} << 48) * (4096 * kMacUnits + kMxuOutputUnits) / 4096);
  const Instruction weights =
      op::MxuLoadWeights{.mxu = 0, .addr = 0, .k = 8, .n = 4, .stride = 4}.ToInstruction();
  EXPECT_EQ(InterpreterWorkUnits(weights, Chip()), 32 * kWeightUnits + 64 * kMxuArrayUnits);
  // A 1 x 1 tile on a 4096 x 4096 array still clears the array: 2^24 elements (39 ms measured).
  MemorySizes big = Chip();
  big.mxu_rows = big.mxu_cols = 4096;
  const Instruction one =
      op::MxuLoadWeights{.mxu = 0, .addr = 0, .k = 1, .n = 1, .stride = 1}.ToInstruction();
  EXPECT_EQ(InterpreterWorkUnits(one, big), kWeightUnits + (uint64_t{1} << 24) * kMxuArrayUnits);
  const Instruction pop =
      op::MxuPop{.mxu = 0, .acc = 0, .m = 6, .n = 4, .dst = 0, .stride = 4}.ToInstruction();
  EXPECT_EQ(InterpreterWorkUnits(pop, Chip()), 24 * kPopUnits);
}

TEST(WorkUnitsTest, VectorOpsCostTheirElementsTimesTheirKindsCharge) {
  EXPECT_EQ(InterpreterWorkUnits(op::VpuFill{.dst = 0, .count = 1000}.ToInstruction(), Chip()),
            1000 * kVpuFillUnits);
  EXPECT_EQ(InterpreterWorkUnits(op::VpuBinary{.dst = 0, .a = 0, .b = 0, .rows = 3, .cols = 9}
                                     .ToInstruction(),
                                 Chip()),
            27 * kVpuBinaryUnits);
  EXPECT_EQ(InterpreterWorkUnits(op::XluTranspose{.dst = 0, .src = 0, .rows = 4, .cols = 16}
                                     .ToInstruction(),
                                 Chip()),
            64 * kTransposeUnits);
  EXPECT_EQ(InterpreterWorkUnits(
                op::VpuCopy{.dst = 0, .src = 0, .n0 = 2, .n1 = 3, .n2 = 5}.ToInstruction(),
                Chip()),
            30 * kVpuCopyUnits);
  // Every vector kind costs more than 1 unit an element: the slowest, vpu.copy, 19 ns.
  EXPECT_GT(kVpuCopyUnits, kVpuBinaryUnits);
}

TEST(WorkUnitsTest, CollectivesCostTheirElementsTimesTheGroup) {
  const Instruction all_reduce =
      op::IciAllReduce{.src = 0, .dst = 0, .count = 100, .group = 0}.ToInstruction();
  EXPECT_EQ(InterpreterWorkUnits(all_reduce, Chip(), 4), 400 * kCollectiveElementUnits);
  const Instruction permute =
      op::IciCollectivePermute{.src = 0, .dst = 0, .count = 100, .pairs = 0}.ToInstruction();
  // Each core receives one buffer.
  EXPECT_EQ(InterpreterWorkUnits(permute, Chip(), 4), 100 * kCollectiveElementUnits);
}

TEST(WorkUnitsTest, DmaCostsItsBytesAndRowsAndControlNothing) {
  auto dma = [](uint64_t elem_bytes, uint64_t n0, uint64_t n1) {
    return op::DmaHbmToVmem{.flag = 0, .src = 0, .dst = 0, .elem_bytes = elem_bytes, .n0 = n0,
                            .n1 = n1, .n2 = 1}
        .ToInstruction();
  };
  // 16 x 2 f32: 128 bytes, 2 rows.
  EXPECT_EQ(InterpreterWorkUnits(dma(4, 16, 2), Chip()), 128 / kDmaBytesPerUnit + 2 * kDmaRowUnits);
  // The same bytes in 1-element rows: a row each (measured 15 ns a row).
  EXPECT_EQ(InterpreterWorkUnits(dma(4, 1, 32), Chip()), 128 / kDmaBytesPerUnit + 32 * kDmaRowUnits);
  // Bytes round up: 3 bytes are a unit.
  EXPECT_EQ(InterpreterWorkUnits(dma(1, 3, 1), Chip()), 1 + kDmaRowUnits);
  EXPECT_EQ(InterpreterWorkUnits(op::Nop{}.ToInstruction(), Chip()), 0u);
  EXPECT_EQ(InterpreterWorkUnits(op::CtrlLoop{.count = 1u << 30}.ToInstruction(), Chip()), 0u);
}

// The least work the interpreter charges a program (exec refuses one past its budget before it
// runs): every instruction kInstructionWorkUnits plus its elements, times its loops' trips; a loop
// a ctrl.break_unless may leave counts no trip; code from a loop that holds a ctrl.halt on counts
// nothing.
TEST(WorkUnitsTest, MinimumWorkUnitsCountsLoopTrips) {
  auto least = [](const std::string& text) {
    StatusOr<Program> p = Assemble(text, "w.tasm");
    EXPECT_TRUE(p.ok()) << p.status().message();
    return p.ok() ? MinimumWorkUnits(*p, Chip()) : 0;
  };
  constexpr uint64_t I = kInstructionWorkUnits;
  const std::string copy = "dma.hbm_to_vmem flag=0, src=0x0, dst=0x0, elem_bytes=4, n0=16\n";
  // The copy: 64 bytes in one row.
  const uint64_t C = 64 / kDmaBytesPerUnit + kDmaRowUnits;
  EXPECT_EQ(least(copy), I + C);
  // ctrl.loop I, then 3 trips of (I + C + sync.wait I + ctrl.endloop I).
  EXPECT_EQ(least("ctrl.loop count=3\n" + copy + "sync.wait flag=0\nctrl.endloop\n"),
            I + 3 * (3 * I + C));
  // Nested: 2 x 5 trips of the copy, the inner loop's ctrl.loop twice, its endloop ten times.
  EXPECT_EQ(least("ctrl.loop count=2\nctrl.loop count=5\n" + copy + "ctrl.endloop\nctrl.endloop\n"),
            I + 2 * (I + 5 * (I + C + I) + I));
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
            I + I + C);
  // A core stops at ctrl.halt: nothing after it, nothing of a loop around it past the loop.
  EXPECT_EQ(least(copy + "ctrl.halt\n" + copy), I + C + I);
  EXPECT_EQ(least(copy + "ctrl.loop count=1000\n" + copy + "ctrl.halt\nctrl.endloop\n"), I + C);
  // A loop of 2^31 nop trips: 2^31 x (nop + ctrl.endloop) + its ctrl.loop, past the default
  // budget (it ran 40 minutes when an instruction counted 1).
  const uint64_t nops = least("ctrl.loop count=2147483648\nnop\nctrl.endloop\n");
  EXPECT_EQ(nops, I + (uint64_t{1} << 31) * 2 * I);
  EXPECT_GT(nops, kDefaultWorkBudget);
}

}  // namespace
}  // namespace tpusim::isa
