// sim/core/sequencer.h: a TensorCore's in-order issue, one instruction a cycle — loops run their
// bodies count times (0: skipped; nested), sync.signal / sync.wait count a flag up and down, a
// wait for more than will ever arrive is a deadlock naming the flag, the scoreboard holds an
// instruction whose memory a running one still writes, and retirement charges add up to the
// core's cycles. Runs the whole simulator on the tiny chip (sim_test_util.h).
#include "sim/core/sequencer.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

SimOptions Profiled(bool values = true) {
  SimOptions o;
  o.instruction_profile = true;
  o.compute_values = values;
  o.fast_forward = false;  // every trip issued, so every execution is counted
  return o;
}

std::vector<uint64_t> Executions(const SimResult& r) {
  std::vector<uint64_t> e;
  for (const InstructionProfile& p : r.cores[0].instructions) e.push_back(p.executions);
  return e;
}

// N scalar instructions issue one a cycle and each completes a cycle after it issues.
TEST(SequencerTest, ScalarInstructionsIssueOneACycle) {
  for (int n : {1, 5, 40}) {
    std::string text;
    for (int i = 0; i < n; ++i) text += "nop\n";
    auto r = Simulator(TinyChip()).Run(Asm(text + "ctrl.halt\n"));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->cores[0].cycles.value(), static_cast<uint64_t>(n) + 1) << n;
  }
}

TEST(SequencerTest, LoopsRunTheirBodyCountTimes) {
  auto r = Simulator(TinyChip(), Profiled()).Run(Asm(R"(
ctrl.loop count=3
  ctrl.loop count=2
    vpu.fill dtype=f32, dst=0x0, count=8, value=1
  ctrl.endloop
  nop
ctrl.endloop
ctrl.loop count=0
  vpu.fill dtype=f32, dst=0x100, count=8, value=2
ctrl.endloop
ctrl.halt
)"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  // A count=0 loop jumps past its own ctrl.endloop (as the interpreter does).
  EXPECT_EQ(Executions(*r), (std::vector<uint64_t>{1, 3, 6, 6, 3, 3, 1, 0, 0, 1}));
  EXPECT_EQ(r->instructions_executed, 1u + 3 + 6 + 6 + 3 + 3 + 1 + 0 + 0 + 1);
  // The skipped body wrote nothing; the run one did.
  float v[2] = {-1, -1};
  ASSERT_TRUE(r->final_state.vmem(0).Read(0x100, &v[0], 4).ok());
  ASSERT_TRUE(r->final_state.vmem(0).Read(0x0, &v[1], 4).ok());
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 1.0f);
}

TEST(SequencerTest, SignalAndWaitCountAFlagUpAndDown) {
  auto ok = Simulator(TinyChip()).Run(Asm(R"(
sync.signal flag=7, value=3
sync.wait flag=7, value=2
sync.wait flag=7
ctrl.halt
)"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  // One more wait than the signals cover: the third unit is never there.
  auto stuck = Simulator(TinyChip()).Run(Asm(R"(
sync.signal flag=7, value=3
sync.wait flag=7, value=2
sync.wait flag=7, value=2
ctrl.halt
)"));
  ASSERT_FALSE(stuck.ok());
  EXPECT_NE(stuck.status().message().find("core 0 waits at instruction 2 sync.wait (flag 7 is 1, "
                                          "needs 2)"),
            std::string::npos)
      << stuck.status().message();
}

// A DMA of other VMEM issues at once, beside a running vpu.fill; a DMA reading the VMEM the fill
// writes issues only when the fill has completed (RAW), and, issue being in order, so does
// everything behind it.
TEST(SequencerTest, TheScoreboardHoldsAReaderOfMemoryInFlight) {
  SimOptions o;
  o.trace = true;
  auto r = Simulator(TinyChip(), o).Run(Asm(R"(
vpu.fill dtype=f32, dst=0x0, count=65536, value=1
dma.vmem_to_hbm src=0x80000, dst=0x100000, n0=1024, flag=1
dma.vmem_to_hbm src=0x0, dst=0x0, n0=1024, flag=0
nop
sync.wait flag=0
sync.wait flag=1
ctrl.halt
)"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  uint64_t fill_end = 0, dependent_start = 0, independent_start = 0, nop_start = 0;
  for (const TraceEvent& e : r->trace_events) {
    if (e.pc == 0) fill_end = e.end;
    if (e.pc == 1) independent_start = e.start;
    if (e.pc == 2) dependent_start = e.start;
    if (e.pc == 3) nop_start = e.start;
  }
  EXPECT_GT(fill_end, 512u);  // 256 KiB through the 512 B/cycle VMEM port
  EXPECT_LT(independent_start, 10u);
  EXPECT_GE(dependent_start, fill_end);
  EXPECT_GE(nop_start, dependent_start);
}

// In-order retirement: every cycle of the core is charged to one stall category.
TEST(SequencerTest, RetirementChargesSumToTheCoresCycles) {
  auto r = Simulator(TinyChip()).Run(Asm(R"(
vpu.fill dtype=f32, dst=0x0, count=4096, value=1
dma.vmem_to_hbm src=0x0, dst=0x0, n0=4096, flag=0
sync.wait flag=0
nop
ctrl.halt
)"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& s = r->cores[0].stalls;
  EXPECT_EQ(std::accumulate(s.begin(), s.end(), uint64_t{0}), r->cores[0].cycles.value());
}

}  // namespace
}  // namespace tpusim::sim
