// The simulator computes what the interpreter computes (issue 4 "must show" 3), runs the same
// whatever order units are stepped in within a cycle (1), and is deterministic (7).
#include <gtest/gtest.h>

#include <string>

#include "isa/verifier.h"
#include "sim/run_and_check.h"
#include "sim/simulator.h"
#include "tests/sim/random_program.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

struct Case {
  uint64_t seed;
  int chips;
  int cores_per_chip;
};

class EquivalenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(EquivalenceTest, RandomProgramEndsInTheInterpretersState) {
  const Case c = GetParam();
  const config::ChipConfig chip = testing::TinyChip(c.chips, c.cores_per_chip);
  const int cores = c.chips * c.cores_per_chip;
  isa::Program p = testing::RandomProgram(c.seed, cores, 80);
  Status verified = isa::Verify(p, isa::MemorySizes::FromChipConfig(chip));
  ASSERT_TRUE(verified.ok()) << verified.message();
  for (MxuModelKind kind : {MxuModelKind::kFast, MxuModelKind::kPe}) {
    SimOptions o;
    o.instruction_profile = true;  // per-instruction statistics compared
    o.mxu_model = kind;
    auto r = RunAndCheck(chip, p, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_GT(r->cycles.value(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, EquivalenceTest,
                         ::testing::Values(Case{1, 1, 1}, Case{2, 1, 1}, Case{3, 1, 1},
                                           Case{4, 1, 1}, Case{5, 1, 1}, Case{6, 2, 2},
                                           Case{7, 4, 1}, Case{8, 2, 1}),
                         [](const auto& info) {
                           const Case& c = info.param;
                           return "seed" + std::to_string(c.seed) + "_" + std::to_string(c.chips) +
                                  "chips_" + std::to_string(c.cores_per_chip) + "cores";
                         });

// Everything a run produces that could differ: cycles, every stat, every core's attribution.
void ExpectSameRun(const SimResult& a, const SimResult& b) {
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.stats->Flatten(), b.stats->Flatten());
  ASSERT_EQ(a.cores.size(), b.cores.size());
  for (size_t i = 0; i < a.cores.size(); ++i) {
    EXPECT_EQ(a.cores[i].stalls, b.cores[i].stalls);
    ASSERT_EQ(a.cores[i].instructions.size(), b.cores[i].instructions.size());
    for (size_t pc = 0; pc < a.cores[i].instructions.size(); ++pc) {
      EXPECT_EQ(a.cores[i].instructions[pc].cycles, b.cores[i].instructions[pc].cycles);
      EXPECT_EQ(a.cores[i].instructions[pc].executions, b.cores[i].instructions[pc].executions);
    }
  }
}

TEST(OrderIndependenceTest, StepOrderWithinACycleChangesNothing) {
  const config::ChipConfig chip = testing::TinyChip(2, 2);
  isa::Program p = testing::RandomProgram(11, 4, 120);
  SimOptions forward;
  forward.instruction_profile = true;  // per-instruction statistics compared
  auto a = RunAndCheck(chip, p, forward);
  ASSERT_TRUE(a.ok()) << a.status().message();
  for (StepOrder order : {StepOrder::kReverse, StepOrder::kShuffled}) {
    SimOptions o;
    o.instruction_profile = true;  // per-instruction statistics compared
    o.step_order = order;
    o.step_seed = 12345;
    auto b = RunAndCheck(chip, p, o);  // same final memory as the interpreter, so as each other
    ASSERT_TRUE(b.ok()) << b.status().message();
    ExpectSameRun(*a, *b);
  }
}

// The engine steps only the units with work at each event cycle (engine.h); stepping every unit
// at every event cycle, the reference, gives the same run: cycles, every stat, attribution,
// profile, event cycles and final memory, with values and timing-only, on 1 to 8 cores.
TEST(ScheduleTest, SteppingOnlyUnitsWithWorkChangesNothing) {
  // (Seed 39 ends with a ctrl.halt while other units still have work: a halted sequencer counts
  // issue cycles up to the next event cycle of the run, Sequencer::StepAtNextEvent.)
  for (const Case& c : {Case{31, 1, 1}, Case{39, 1, 1}, Case{32, 2, 1}, Case{36, 2, 1},
                        Case{33, 2, 2}, Case{37, 2, 2}, Case{34, 4, 2}, Case{38, 4, 2}}) {
    const config::ChipConfig chip = testing::TinyChip(c.chips, c.cores_per_chip);
    const int cores = c.chips * c.cores_per_chip;
    isa::Program p = testing::RandomProgram(c.seed, cores, 100);
    for (bool values : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "seed " << c.seed << " values " << values);
      SimOptions o;
      o.instruction_profile = true;  // per-instruction statistics compared
      o.compute_values = values;
      auto scheduled = Simulator(chip, o).Run(p);
      o.step_every_unit = true;
      auto every = Simulator(chip, o).Run(p);
      ASSERT_TRUE(scheduled.ok()) << scheduled.status().message();
      ASSERT_TRUE(every.ok()) << every.status().message();
      ExpectSameRun(*scheduled, *every);
      EXPECT_EQ(scheduled->events, every->events);
      for (int core = 0; core < cores; ++core) {
        std::string x(testing::kVmemSlots * testing::kSlot * 2, '\0'), y = x;
        ASSERT_TRUE(scheduled->final_state.vmem(core).Read(0, x.data(), x.size()).ok());
        ASSERT_TRUE(every->final_state.vmem(core).Read(0, y.data(), y.size()).ok());
        EXPECT_EQ(x, y) << "core " << core;
      }
    }
  }
}

TEST(DeterminismTest, TwoRunsGiveTheSameStatsAndBits) {
  const config::ChipConfig chip = testing::TinyChip(4, 1);
  isa::Program p = testing::RandomProgram(21, 4, 100);
  SimOptions o;
  o.instruction_profile = true;  // per-instruction statistics compared
  o.trace = true;
  auto a = Simulator(chip, o).Run(p);
  auto b = Simulator(chip, o).Run(p);
  ASSERT_TRUE(a.ok() && b.ok());
  ExpectSameRun(*a, *b);
  ASSERT_EQ(a->trace_events.size(), b->trace_events.size());
  for (int c = 0; c < 4; ++c) {
    std::string x(testing::kVmemSlots * testing::kSlot * 2, '\0'), y = x;
    ASSERT_TRUE(a->final_state.vmem(c).Read(0, x.data(), x.size()).ok());
    ASSERT_TRUE(b->final_state.vmem(c).Read(0, y.data(), y.size()).ok());
    EXPECT_EQ(x, y) << "core " << c;
  }
}

}  // namespace
}  // namespace tpusim::sim
