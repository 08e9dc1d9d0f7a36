// The per-op bound (sim/report/op_bound.h): each HLO tag's retirement cycles split by the class of
// the instructions they were charged to; the class with the most is the bound.
#include "sim/report/op_bound.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

TEST(OpBoundTest, NamesAreTheReportsClassNames) {
  EXPECT_STREQ(OpBoundName(OpBound::kMxu), "MXU");
  EXPECT_STREQ(OpBoundName(OpBound::kVpu), "VPU");
  EXPECT_STREQ(OpBoundName(OpBound::kHbm), "HBM");
  EXPECT_STREQ(OpBoundName(OpBound::kIci), "ICI");
  EXPECT_STREQ(OpBoundName(OpBound::kHost), "host");
  EXPECT_STREQ(OpBoundName(OpBound::kSync), "sync");
  EXPECT_STREQ(OpBoundName(OpBound::kNone), "-");
}

TEST(OpBoundTest, EachTagIsBoundByTheClassChargedTheMostCycles) {
  const isa::Program p = testing::Asm(R"(
    .hlo_name 0 "tanh.1"
    .hlo_name 1 "copy.2"
    .hlo_name 2 "nop.3"
    .hlo_name 3 "absent.4"
    .hlo 0
    vpu.unary op=tanh, dtype=f32, dst=0, src=0, count=4096
    .hlo 1
    dma.hbm_to_vmem flag=0, src=0, dst=65536, elem_bytes=4, n0=16384
    sync.wait flag=0, value=1
    .hlo 2
    nop
    ctrl.halt
  )");
  SimOptions options;
  options.instruction_profile = true;  // per-instruction cycles and CSV below
  auto r = Simulator(testing::TinyChip(), options).Run(p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<OpBoundShare> bounds = OpBounds(*r, p);
  ASSERT_EQ(bounds.size(), p.hlo_names.size());
  // Only VPU work: VPU-bound, all of it.
  EXPECT_EQ(bounds[0].bound, OpBound::kVpu);
  EXPECT_DOUBLE_EQ(bounds[0].fraction, 1.0);
  // A DMA and the wait for it: the wait's (sync) cycles count in the total but bound only an op
  // with nothing else, so the copy is HBM-bound with the DMA's share of the op's cycles.
  const std::vector<InstructionProfile>& cycles = r->cores[0].instructions;
  const double dma = static_cast<double>(cycles[1].cycles);
  const double wait = static_cast<double>(cycles[2].cycles);
  ASSERT_GT(dma, 0);
  EXPECT_EQ(bounds[1].bound, OpBound::kHbm);
  EXPECT_DOUBLE_EQ(bounds[1].fraction, dma / (dma + wait));
  // Scalar-unit instructions alone: sync.
  EXPECT_EQ(bounds[2].bound, OpBound::kSync);
  EXPECT_DOUBLE_EQ(bounds[2].fraction, 1.0);
  // A tag that ran nothing.
  EXPECT_EQ(bounds[3].bound, OpBound::kNone);
  EXPECT_EQ(bounds[3].fraction, 0.0);
}

}  // namespace
}  // namespace tpusim::sim
