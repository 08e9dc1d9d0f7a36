// --custom-call-cost (CompileOptions::custom_call_cycles): an unknown custom-call target with a
// user-given cost becomes a wait for its operands plus a spin of exactly that many scalar issue
// slots; without a cost it stays an error naming the target.
#include <gtest/gtest.h>

#include "isa/opcode.h"
#include "tests/compiler/compile_test_util.h"

namespace tpusim::compiler {
namespace {

constexpr char kModule[] = R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  ROOT c = s32[4] custom-call(p), custom_call_target="vendor_kernel"
}
)";

// Scalar issue slots the program spends in nop / ctrl.loop / ctrl.endloop on core 0: one per
// executed instruction of those kinds (counted by walking the loop structure).
int64_t SpinSlots(const isa::CoreProgram& core) {
  int64_t slots = 0;
  for (size_t i = 0; i < core.instructions.size(); ++i) {
    const isa::Instruction& in = core.instructions[i];
    if (in.opcode == isa::Opcode::kCtrlLoop) {
      const int64_t n = static_cast<int64_t>(in.As<isa::op::CtrlLoop>().count);
      slots += 1 + 2 * n;  // the loop, then n x (nop + endloop)
      i += 2;
    } else if (in.opcode == isa::Opcode::kNop) {
      ++slots;
    }
  }
  return slots;
}

TEST(EstimatedCustomCallTest, UnknownTargetIsAnError) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto r = Compile(*m, testing::Config("tiny"), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--custom-call-cost vendor_kernel=CYCLES"), std::string::npos)
      << r.status().message();
}

TEST(EstimatedCustomCallTest, SpinsTheGivenCycles) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  for (int64_t cycles : {0, 1, 2, 5000, 5001}) {
    CompileOptions o;
    o.custom_call_cycles["vendor_kernel"] = cycles;
    auto r = Compile(*m, testing::Config("tiny"), o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->estimated_custom_calls, std::vector<std::string>{"c"});
    // The loop instruction itself is one more slot when it exists.
    const int64_t want = cycles + (cycles >= 2 ? 1 : 0);
    EXPECT_EQ(SpinSlots(r->program.cores[0]), want) << cycles;
    // It waits for a one-element read of its operand before spinning.
    int64_t loads = 0;
    for (const isa::Instruction& in : r->program.cores[0].instructions) {
      loads += in.opcode == isa::Opcode::kDmaHbmToVmem ? 1 : 0;
    }
    EXPECT_EQ(loads, 1);
  }
}

}  // namespace
}  // namespace tpusim::compiler
