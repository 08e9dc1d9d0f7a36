// sim/work_budget.h: what the simulator charges an issued instruction against --max-instructions
// — kInstructionWorkUnits always; with values the interpreter's element work too; on the PE-level
// MXU model every PE step of the array, with or without values — the least work of a program
// over its fixed loop counts, and the two errors naming the figure and the option.
#include "sim/work_budget.h"

#include <gtest/gtest.h>

#include <string>

#include "isa/memory_sizes.h"
#include "isa/work_units.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

constexpr uint64_t kBase = isa::kInstructionWorkUnits;

SimOptions Options(bool values, MxuModelKind model) {
  SimOptions o;
  o.compute_values = values;
  o.mxu_model = model;
  return o;
}

TEST(WorkBudgetTest, EachInstructionIsChargedForWhatItCostsTheSimulator) {
  const config::ChipConfig chip = TinyChip();  // one 8 x 8 MXU
  const isa::Program p = Asm(R"(
nop
vpu.fill dtype=f32, dst=0x0, count=4096, value=1
mxu.load_weights mxu=0, addr=0x0, k=8, n=8, stride=8, dtype=bf16
mxu.matmul mxu=0, lhs=0x100, stride=8, m=16, k=8, n=8, dtype=bf16, acc=0, latch=1
)");
  const auto& code = p.cores[0].instructions;
  const isa::MemorySizes sizes = isa::MemorySizes::FromChipConfig(chip);
  const SimOptions timing = Options(false, MxuModelKind::kFast);
  const SimOptions values = Options(true, MxuModelKind::kFast);
  const SimOptions pe = Options(false, MxuModelKind::kPe);
  for (const isa::Instruction& inst : code) {
    EXPECT_EQ(SimulatorWorkUnits(inst, chip, timing), kBase);  // timing-only, fast: the count
    EXPECT_EQ(SimulatorWorkUnits(inst, chip, values),
              kBase + isa::InterpreterWorkUnits(inst, sizes));
  }
  EXPECT_GT(SimulatorWorkUnits(code[1], chip, values), kBase);  // the fill's elements
  // PE-level: matmul R * C * (m + R + C) = 8 * 8 * 32, load_weights R * C * R = 512 steps.
  EXPECT_EQ(SimulatorWorkUnits(code[0], chip, pe), kBase);
  EXPECT_EQ(SimulatorWorkUnits(code[2], chip, pe), kBase + 8 * 8 * 8);
  EXPECT_EQ(SimulatorWorkUnits(code[3], chip, pe), kBase + 8 * 8 * (16 + 8 + 8));
  EXPECT_EQ(SimulatorWorkCosts(p.cores[0], chip, pe),
            (std::vector<uint64_t>{kBase, kBase, kBase + 512, kBase + 2048}));
}

// A loop of 1,000 trips around two nops: 1 + 1,000 x 3 + 1 instructions at least (the halt).
TEST(WorkBudgetTest, TheLeastWorkFollowsFixedLoopCountsAndIsCheckedBeforeTheRun) {
  const config::ChipConfig chip = TinyChip();
  isa::Program p = Asm("ctrl.loop count=1000\nnop\nnop\nctrl.endloop\nctrl.halt\n");
  p.source_file = "loop.tasm";
  SimOptions o = Options(false, MxuModelKind::kFast);
  const uint64_t least = LeastWorkUnits(p, chip, o);
  EXPECT_EQ(least, (1 + 1000 * 3 + 1) * kBase);
  o.max_work = least;
  EXPECT_TRUE(CheckWorkBeforeRun(p, chip, o, false).ok());
  o.max_work = least - 1;
  const Status st = CheckWorkBeforeRun(p, chip, o, false);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(st.message().rfind("loop.tasm: the simulation does at least " +
                                   std::to_string(least) + " units of work",
                               0),
            0u)
      << st.message();
  EXPECT_NE(st.message().find("--max-instructions " + std::to_string(least) + " or more"),
            std::string::npos);
  // Trips a fast-forward may skip cost nothing, so nothing is refused up front; nor without a
  // budget.
  EXPECT_TRUE(CheckWorkBeforeRun(p, chip, o, true).ok());
  o.max_work = 0;
  EXPECT_TRUE(CheckWorkBeforeRun(p, chip, o, false).ok());
}

TEST(WorkBudgetTest, ExhaustedNamesTheBudgetTheCycleAndTheOption) {
  const Status st = WorkBudgetExhausted(5000, 4096, 77);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(st.message().rfind("simulation exceeded the instruction budget of 4096 units at "
                               "cycle 77 (5000 units issued;",
                               0),
            0u)
      << st.message();
  EXPECT_NE(st.message().find("--max-instructions"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::sim
