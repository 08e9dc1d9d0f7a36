// The simulator runs dma.gather / dma.scatter with the interpreter's bits (random programs whose
// index lists change under the scoreboard) and costs them as dma_engine.h derives.
#include <gtest/gtest.h>

#include <string>

#include "isa/verifier.h"
#include "sim/core/dma_engine.h"
#include "sim/run_and_check.h"
#include "sim/simulator.h"
#include "tests/sim/random_indirect_program.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

struct Case {
  uint64_t seed;
  int chips;
  int cores_per_chip;
};

class IndirectEquivalenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(IndirectEquivalenceTest, RandomIndirectProgramEndsInTheInterpretersState) {
  const Case c = GetParam();
  const config::ChipConfig chip = TinyChip(c.chips, c.cores_per_chip);
  const int cores = c.chips * c.cores_per_chip;
  isa::Program p = testing::RandomIndirectProgram(c.seed, cores, 60, 30);
  int indirect = 0;
  for (const auto& core : p.cores) {
    for (const auto& inst : core.instructions) {
      indirect += inst.opcode == isa::Opcode::kDmaGather || inst.opcode == isa::Opcode::kDmaScatter;
    }
  }
  EXPECT_GT(indirect, 10 * cores);
  Status verified = isa::Verify(p, isa::MemorySizes::FromChipConfig(chip));
  ASSERT_TRUE(verified.ok()) << verified.message();
  auto r = RunAndCheck(chip, p, SimOptions{});  // every written byte equals the interpreter's
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->cycles.value(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, IndirectEquivalenceTest,
                         ::testing::Values(Case{31, 1, 1}, Case{32, 1, 1}, Case{33, 1, 1},
                                           Case{34, 1, 1}, Case{35, 2, 2}, Case{36, 2, 1}),
                         [](const auto& info) {
                           const Case& c = info.param;
                           return "seed" + std::to_string(c.seed) + "_" + std::to_string(c.chips) +
                                  "chips_" + std::to_string(c.cores_per_chip) + "cores";
                         });

TEST(IndirectOrderIndependenceTest, StepOrderWithinACycleChangesNothing) {
  const config::ChipConfig chip = TinyChip(2, 2);
  isa::Program p = testing::RandomIndirectProgram(41, 4, 60, 30);
  auto a = RunAndCheck(chip, p, SimOptions{});
  ASSERT_TRUE(a.ok()) << a.status().message();
  for (StepOrder order : {StepOrder::kReverse, StepOrder::kShuffled}) {
    SimOptions o;
    o.step_order = order;
    o.step_seed = 99;
    auto b = RunAndCheck(chip, p, o);
    ASSERT_TRUE(b.ok()) << b.status().message();
    EXPECT_EQ(a->cycles, b->cycles);
    EXPECT_EQ(a->stats->Flatten(), b->stats->Flatten());
  }
}

uint64_t Cycles(const std::string& text) {
  auto r = RunAndCheck(TinyChip(), Asm(text), SimOptions{});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->cycles.value() : 0;
}

TEST(IndirectDmaCost, SetupCyclesFormula) {
  // ceil(4 * count / VMEM bytes per cycle) + (count - 1) * issue cycles.
  EXPECT_EQ(DmaEngine::IndirectSetupCycles(1, ::tpusim::Cycles(1), 512).value(), 1u);
  EXPECT_EQ(DmaEngine::IndirectSetupCycles(4, ::tpusim::Cycles(1), 512).value(), 1u + 3u);
  EXPECT_EQ(DmaEngine::IndirectSetupCycles(200, ::tpusim::Cycles(2), 512).value(), 2u + 398u);
}

TEST(IndirectDmaCost, GatherCostsThePlainTransferPlusIndexSetup) {
  // tiny: HBM 64 B/cycle, 20 cycles latency, DMA issue 1 cycle, VMEM 512 B/cycle.
  // Four slices of 64 bytes = 256 bytes, the same as one contiguous 256-byte DMA; the gather adds
  // ceil(4*4/512) = 1 cycle of index read and 3 more descriptor issues: 4 cycles.
  const uint64_t plain = Cycles(R"(
    dma.hbm_to_vmem flag=0, src=0x0, dst=0x1000, n0=64
    sync.wait flag=0
  )");
  const uint64_t gather = Cycles(R"(
    .data vmem core=0, addr=0x0, s32 3, 0, 7, 1
    dma.gather flag=0, src=0x0, dst=0x1000, n0=16, idx=0x0, count=4, idx_scale=64, bound=9, slice_stride=64
    sync.wait flag=0
  )");
  // plain = issue 1 + 256/64 = 4 cycles of bytes + 20 latency (+ the sequencer's own cycles).
  EXPECT_EQ(gather - plain, 4u);
  // A combining scatter reads and writes every byte: 4 more cycles of HBM time than a plain one.
  const uint64_t assign = Cycles(R"(
    .data vmem core=0, addr=0x0, s32 3, 0, 7, 1
    dma.scatter flag=0, src=0x1000, dst=0x0, n0=16, idx=0x0, count=4, idx_scale=64, bound=9, slice_stride=64
    sync.wait flag=0
  )");
  const uint64_t add = Cycles(R"(
    .data vmem core=0, addr=0x0, s32 3, 0, 7, 1
    dma.scatter flag=0, src=0x1000, dst=0x0, n0=16, idx=0x0, count=4, idx_scale=64, bound=9, slice_stride=64, combine=1
    sync.wait flag=0
  )");
  EXPECT_EQ(assign, gather);
  EXPECT_EQ(add - assign, 256u / 64);
}

}  // namespace
}  // namespace tpusim::sim
