// SimOptions::progress: the dynamic counts it reports against are exact (DynamicCounts equals what
// the run executes, nested loops, zero-trip loops and code after ctrl.halt included), the last call
// has everything retired, and observing a run does not change it.
#include <gtest/gtest.h>

#include <vector>

#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

isa::Program NestedLoops() {
  return testing::Asm(R"(
    ctrl.loop count=3
    dma.hbm_to_vmem flag=0, src=0, dst=0, elem_bytes=4, n0=64
    ctrl.loop count=4
    vpu.unary op=tanh, dtype=f32, dst=0, src=0, count=64
    ctrl.endloop
    ctrl.loop count=0
    vpu.unary op=tanh, dtype=f32, dst=0, src=0, count=64
    ctrl.endloop
    sync.wait flag=0
    ctrl.endloop
    ctrl.halt
    vpu.unary op=tanh, dtype=f32, dst=0, src=0, count=64
  )");
}

TEST(ProgressTest, DynamicCountsMatchTheRun) {
  isa::Program p = NestedLoops();
  auto [instructions, trips] = DynamicCounts(p.cores[0]);
  // ctrl.loop, per outer trip: dma, loop, 4 x (vpu + endloop), loop (0 trips), wait, endloop = 13;
  // ctrl.halt (not the vpu after it).
  EXPECT_EQ(instructions, 1 + 3u * 13 + 1);
  EXPECT_EQ(trips, 3u * (1 + 4));
  auto r = Simulator(testing::TinyChip()).Run(p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->instructions_executed, instructions);
}

TEST(ProgressTest, LastReportHasEverythingRetiredAndResultsDoNotChange) {
  isa::Program p = NestedLoops();
  std::vector<SimProgress> seen;
  SimOptions o;
  o.progress = [&](const SimProgress& s) { seen.push_back(s); };
  o.progress_interval_seconds = 0;  // every observer call
  auto with = Simulator(testing::TinyChip(), o).Run(p);
  auto without = Simulator(testing::TinyChip()).Run(p);
  ASSERT_TRUE(with.ok() && without.ok());
  ASSERT_FALSE(seen.empty());
  const SimProgress& last = seen.back();
  EXPECT_TRUE(last.done);
  EXPECT_EQ(last.instructions_retired, last.instructions_total);
  EXPECT_EQ(last.loop_trips, last.loop_trips_total);
  EXPECT_EQ(last.cycle, with->cycles);
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_LE(seen[i - 1].instructions_retired, seen[i].instructions_retired);
    EXPECT_LE(seen[i - 1].cycle, seen[i].cycle);
  }
  EXPECT_EQ(with->cycles, without->cycles);
  EXPECT_EQ(with->instructions_executed, without->instructions_executed);
}

}  // namespace
}  // namespace tpusim::sim
