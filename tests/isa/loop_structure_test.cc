// The control rules every executor shares (isa/loop_structure.h): loop matching and its errors,
// the trips a timing-only run assumes for a loop left by ctrl.break_unless, the nesting limit, the
// predicate ctrl.break_unless reads, and sync-flag overflow (AddToFlag).
#include "isa/loop_structure.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "isa/instruction.h"
#include "isa/machine_state.h"
#include "isa/memory_sizes.h"

namespace tpusim::isa {
namespace {

Instruction Loop(uint64_t count) { return op::CtrlLoop{.count = count}.ToInstruction(); }
Instruction EndLoop() { return op::CtrlEndLoop{}.ToInstruction(); }
Instruction Nop() { return op::Nop{}.ToInstruction(); }
Instruction Break(uint64_t trips, MemSpace space = MemSpace::kSmem, uint64_t addr = 0) {
  return op::CtrlBreakUnless{.space = space, .addr = addr, .trips = trips}.ToInstruction();
}

TEST(LoopStructureTest, MatchesNestedLoopsInnermostFirst) {
  //                                     0        1        2      3      4          5
  const LoopStructure s(std::vector<Instruction>{Loop(3), Loop(2), Nop(), EndLoop(), Loop(0),
                                                 EndLoop(), EndLoop()});
  ASSERT_TRUE(s.status().ok()) << s.status().message();
  EXPECT_EQ(s.EndOf(0), 6u);
  EXPECT_EQ(s.EndOf(1), 3u);
  EXPECT_EQ(s.EndOf(4), 5u);
  EXPECT_EQ(s.AssumedTrips(0, 3), 3u);  // no ctrl.break_unless: the count
}

TEST(LoopStructureTest, UnmatchedLoopsAreLocatedErrors) {
  const LoopStructure stray(std::vector<Instruction>{Nop(), EndLoop(), Loop(1)});
  EXPECT_EQ(stray.status().message(), "ctrl.endloop without a matching ctrl.loop");
  EXPECT_EQ(stray.error_index(), 1u);  // the first problem in code order
  const LoopStructure open(std::vector<Instruction>{Loop(1), Loop(1), EndLoop(), Loop(2)});
  EXPECT_EQ(open.status().message(), "ctrl.loop without a matching ctrl.endloop");
  EXPECT_EQ(open.error_index(), 3u);  // the innermost loop left open
  EXPECT_EQ(open.EndOf(1), 2u);       // what matched is still known
}

TEST(LoopStructureTest, BreakUnlessLimitsTheTripsOfItsOwnLoopOnly) {
  const LoopStructure s(std::vector<Instruction>{Loop(100), Loop(50), Break(4), EndLoop(),
                                                 Break(9), Break(6), EndLoop(), Loop(3), Break(8),
                                                 EndLoop()});
  ASSERT_TRUE(s.status().ok());
  EXPECT_EQ(s.AssumedTrips(1, 50), 5u);   // its own break: trips + 1
  EXPECT_EQ(s.AssumedTrips(0, 100), 7u);  // the smallest of its two breaks, not the inner one's
  EXPECT_EQ(s.AssumedTrips(7, 3), 3u);    // the count when it is smaller
}

TEST(LoopStructureTest, DepthLimitIsKMaxLoopDepth) {
  EXPECT_TRUE(CheckLoopDepth(kMaxLoopDepth - 1).ok());
  const Status st = CheckLoopDepth(kMaxLoopDepth);
  EXPECT_EQ(st.message(), "loops nested deeper than 8");
}

TEST(LoopStructureTest, BreakUnlessReadsItsPredicateByte) {
  MemorySizes sizes;
  sizes.vmem_bytes = sizes.smem_bytes = 64;
  auto state = MachineState::Create(sizes, 1);
  ASSERT_TRUE(state.ok()) << state.status().message();
  const uint8_t one = 1;
  ASSERT_TRUE(state->memory(MemSpace::kSmem, 0).Write(5, &one, 1).ok());
  auto stays =
      BreakUnlessLeaves(*state, 0, Break(0, MemSpace::kSmem, 5).As<op::CtrlBreakUnless>());
  ASSERT_TRUE(stays.ok());
  EXPECT_FALSE(*stays);  // pred 1: continue
  auto leaves =
      BreakUnlessLeaves(*state, 0, Break(0, MemSpace::kSmem, 6).As<op::CtrlBreakUnless>());
  ASSERT_TRUE(leaves.ok());
  EXPECT_TRUE(*leaves);  // pred 0: leave
  auto bad =
      BreakUnlessLeaves(*state, 0, Break(0, MemSpace::kHost, 0).As<op::CtrlBreakUnless>());
  EXPECT_NE(bad.status().message().find("(hbm, vmem or smem)"), std::string::npos);
  auto outside =
      BreakUnlessLeaves(*state, 0, Break(0, MemSpace::kSmem, 64).As<op::CtrlBreakUnless>());
  EXPECT_EQ(outside.status().message().rfind("addr ", 0), 0u) << outside.status().message();
  EXPECT_FALSE(BreakUnlessLeavesWithoutValues(Break(3).As<op::CtrlBreakUnless>(), 2));
  EXPECT_TRUE(BreakUnlessLeavesWithoutValues(Break(3).As<op::CtrlBreakUnless>(), 3));
}

TEST(LoopStructureTest, FlagsOverflowWithoutChanging) {
  uint32_t word = 0xFFFFFFF0u;
  EXPECT_TRUE(AddToFlag(word, 0xF, 3).ok());
  EXPECT_EQ(word, 0xFFFFFFFFu);
  const Status st = AddToFlag(word, 1, 3);
  EXPECT_EQ(st.message(), "flag 3 overflows 2^32-1");
  EXPECT_EQ(word, 0xFFFFFFFFu);
  uint32_t zero = 0;
  EXPECT_FALSE(AddToFlag(zero, UINT64_MAX, 7).ok());  // no wrap-around
  EXPECT_EQ(zero, 0u);
}

}  // namespace
}  // namespace tpusim::isa
