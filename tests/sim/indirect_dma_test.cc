// The simulator runs dma.gather / dma.scatter with the interpreter's bits (random programs whose
// index lists change under the scoreboard); their cost is dma_engine_test.cc's.
#include <gtest/gtest.h>

#include <string>

#include "isa/verifier.h"
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

}  // namespace
}  // namespace tpusim::sim
