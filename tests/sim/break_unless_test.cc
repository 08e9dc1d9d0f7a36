// ctrl.break_unless on the cycle-level simulator (issue 16: data-dependent while loops run as
// real control flow). With values the sequencer reads the pred the program computed once every
// earlier instruction has completed; timing-only it takes the branch on trip `trips` + 1. Both
// must agree with the interpreter on the trips, and a timing-only run whose `trips` is the real
// count must take the same cycles as the run with values.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

// Options that keep the per-instruction profile the tests compare.
SimOptions ProfiledOptions() {
  SimOptions o;
  o.instruction_profile = true;
  return o;
}

using testing::Asm;
using testing::TinyChip;

// i = 0; while (i < 5) i += 1, with the counter round-tripping through HBM as a compiled while's
// state does (the pred is DMAed to HBM, and the branch reads it there).
std::string CountTo(int trips_hint) {
  return R"(
.data vmem core=0, addr=0x0, s32 0
.data vmem core=0, addr=0x10, s32 1
.data vmem core=0, addr=0x20, s32 5
ctrl.loop count=1000
  vpu.compare op=lt, dtype=s32, dst=0x40, a=0x0, b=0x20, cols=1
  dma.vmem_to_hbm flag=3, src=0x40, dst=0x100, elem_bytes=1, n0=1
  sync.wait flag=3
  ctrl.break_unless space=hbm, addr=0x100, trips=)" +
         std::to_string(trips_hint) + R"(
  vpu.binary op=add, dtype=s32, dst=0x0, a=0x0, b=0x10, cols=1
  sync.signal flag=1
ctrl.endloop
sync.signal flag=2
)";
}

uint64_t Executions(const SimResult& r, size_t pc) {
  return r.cores[0].instructions[pc].executions;
}

TEST(SimBreakUnlessTest, ValuesDecideTheTripsWhateverTheHint) {
  for (int hint : {0, 5, 900}) {
    auto r = Simulator(TinyChip(), ProfiledOptions()).Run(Asm(CountTo(hint)));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Executions(*r, 5), 5u) << hint;  // vpu.binary: 5 body trips
    EXPECT_EQ(Executions(*r, 1), 6u) << hint;  // vpu.compare: once more, to fail
    EXPECT_EQ(Executions(*r, 8), 1u) << hint;  // continued after the ctrl.endloop
    int32_t i = 0;
    ASSERT_TRUE(r->final_state.vmem(0).Read(0x0, &i, 4).ok());
    EXPECT_EQ(i, 5);
  }
}

TEST(SimBreakUnlessTest, TimingOnlyTakesTheHintAndMatchesTheCycles) {
  auto with_values = Simulator(TinyChip(), ProfiledOptions()).Run(Asm(CountTo(5)));
  ASSERT_TRUE(with_values.ok()) << with_values.status().message();
  SimOptions o;
  o.instruction_profile = true;  // per-instruction statistics compared
  o.compute_values = false;
  auto timing = Simulator(TinyChip(), o).Run(Asm(CountTo(5)));
  ASSERT_TRUE(timing.ok()) << timing.status().message();
  EXPECT_EQ(Executions(*timing, 5), 5u);
  EXPECT_EQ(timing->cycles, with_values->cycles);
  auto other = Simulator(TinyChip(), o).Run(Asm(CountTo(2)));
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_EQ(Executions(*other, 5), 2u);
  EXPECT_LT(other->cycles, timing->cycles);
}

TEST(SimBreakUnlessTest, ProgressCountsTheHintedTrips) {
  const isa::Program p = Asm(CountTo(5));
  auto [instructions, trips] = DynamicCounts(p.cores[0]);
  EXPECT_EQ(trips, 6u);  // 5 + the trip that takes the branch
  EXPECT_GT(instructions, 6u * 6u);
  EXPECT_LT(instructions, 1000u);
}

}  // namespace
}  // namespace tpusim::sim
