// The static DMA-traffic analysis (isa/program_traffic.h): HBM<->VMEM bytes times loop trips,
// over every core; a branch loop counts the trips its ctrl.break_unless assumes.
#include "isa/program_traffic.h"

#include <gtest/gtest.h>

#include <cmath>

#include "isa/instruction.h"

namespace tpusim::isa {
namespace {

Instruction Load(uint64_t n0, uint64_t n1, uint64_t n2, uint64_t elem_bytes) {
  return op::DmaHbmToVmem{.flag = 0, .src = 0, .dst = 0, .elem_bytes = elem_bytes, .n0 = n0,
                          .n1 = n1, .n2 = n2}
      .ToInstruction();
}

Instruction Loop(uint64_t count) { return op::CtrlLoop{.count = count}.ToInstruction(); }
Instruction EndLoop() { return op::CtrlEndLoop{}.ToInstruction(); }

TEST(ProgramTrafficTest, BytesTimesNestedLoopTripsOverEveryCore) {
  Program p;
  p.cores.resize(2);
  // Core 0: 32 bytes once, then 3 x (8 bytes + 5 x 16 bytes).
  for (const Instruction& i : {Load(8, 1, 1, 4), Loop(3), Load(2, 2, 1, 2), Loop(5),
                               Load(1, 2, 2, 4), EndLoop(), EndLoop()}) {
    p.cores[0].Append(i);
  }
  // Core 1: a store of 2 * 3 * 4 * 2 bytes inside a loop of 7 trips.
  p.cores[1].Append(Loop(7));
  p.cores[1].Append(op::DmaVmemToHbm{.flag = 0, .src = 0, .dst = 0, .elem_bytes = 2, .n0 = 2,
                                     .n1 = 3, .n2 = 4}
                        .ToInstruction());
  p.cores[1].Append(EndLoop());
  EXPECT_EQ(ProgramDmaBytes(p), 32 + 3 * (8 + 5 * 16) + 7 * 48);
}

TEST(ProgramTrafficTest, OnlyHbmVmemCopiesCountAndAnEmptyLoopCountsNothing) {
  Program p;
  p.cores.resize(1);
  p.cores[0].Append(op::DmaHostToHbm{.flag = 0, .src = 0, .dst = 0, .elem_bytes = 4, .n0 = 100}
                        .ToInstruction());
  p.cores[0].Append(Loop(0));
  p.cores[0].Append(Load(100, 1, 1, 4));
  p.cores[0].Append(EndLoop());
  EXPECT_EQ(ProgramDmaBytes(p), 0);
}

TEST(ProgramTrafficTest, BranchLoopCountsTheAssumedTripsPlusTheOneThatLeaves) {
  Program p;
  p.cores.resize(1);
  p.cores[0].Append(Loop(1000));
  p.cores[0].Append(op::CtrlBreakUnless{.space = MemSpace::kVmem, .addr = 0, .trips = 4}
                        .ToInstruction());
  p.cores[0].Append(Load(10, 1, 1, 1));
  p.cores[0].Append(EndLoop());
  EXPECT_EQ(ProgramDmaBytes(p), 5 * 10);
}

TEST(ProgramTrafficTest, HugeDescriptorsDoNotWrap) {
  // 2^32-1 elements x 2^24-1 x 2^24-1 x 8 bytes: about 2^83 bytes, past uint64.
  Program p;
  p.cores.resize(1);
  const uint64_t n0 = (uint64_t{1} << 32) - 1, n = (uint64_t{1} << 24) - 1;
  p.cores[0].Append(Load(n0, n, n, 8));
  const double want =
      8.0 * static_cast<double>(n0) * static_cast<double>(n) * static_cast<double>(n);
  EXPECT_EQ(ProgramDmaBytes(p), want);
  EXPECT_GT(ProgramDmaBytes(p), std::ldexp(1.0, 80));
}

}  // namespace
}  // namespace tpusim::isa
