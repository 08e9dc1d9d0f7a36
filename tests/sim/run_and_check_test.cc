// sim/run_and_check.h: the simulator's final state compared with the interpreter's — every byte
// the program may write (its instructions' write footprints and its data segments), every
// accumulator word and every sync flag; the first difference is named, a byte nothing writes is
// not compared.
#include "sim/run_and_check.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "isa/interpreter.h"
#include "isa/memory_sizes.h"
#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

// Four f32 1.0 (bytes 00 00 80 3f each, little-endian) at VMEM 0x100..0x10f, and flag 3 signalled
// twice (value 2).
constexpr char kProgram[] = R"(
vpu.fill dtype=f32, dst=0x100, count=4, value=1
sync.signal flag=3, value=2
)";

// The interpreter's and the simulator's runs of kProgram, not yet compared.
struct BothRuns {
  isa::Program program = Asm(kProgram);
  isa::Interpreter interpreter{isa::MemorySizes::FromChipConfig(TinyChip()), {}};
  SimResult sim;
  BothRuns() {
    EXPECT_TRUE(interpreter.Load(program).ok());
    EXPECT_TRUE(interpreter.Run().ok());
    auto r = Simulator(TinyChip()).Run(program);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (r.ok()) sim = std::move(*r);
  }
};

TEST(RunAndCheckTest, SameStatesPass) {
  auto r = RunAndCheck(TinyChip(), Asm(kProgram));
  ASSERT_TRUE(r.ok()) << r.status().message();
  BothRuns b;
  EXPECT_TRUE(CompareFinalState(b.program, b.interpreter, b.sim.final_state).ok());
  EXPECT_EQ(b.sim.final_state.cores[0].flags[3], 2u);
}

TEST(RunAndCheckTest, AWrittenByteThatDiffersIsNamedWithBothValues) {
  BothRuns b;
  const uint8_t bad = 0x55;
  ASSERT_TRUE(b.sim.final_state.vmem(0).Write(0x102, &bad, 1).ok());
  const Status s = CompareFinalState(b.program, b.interpreter, b.sim.final_state);
  EXPECT_EQ(s.code(), StatusCode::kCheckFailed);
  // Byte 2 of f32 1.0 (0x3f800000) is 0x80.
  EXPECT_NE(s.message().find("byte 0x102: simulator 0x55, interpreter 0x80"), std::string::npos)
      << s.message();
}

TEST(RunAndCheckTest, AByteNothingWritesIsNotCompared) {
  BothRuns b;
  const uint8_t junk = 0x55;
  ASSERT_TRUE(b.sim.final_state.vmem(0).Write(0x110, &junk, 1).ok());  // past the fill's 16 bytes
  EXPECT_TRUE(CompareFinalState(b.program, b.interpreter, b.sim.final_state).ok());
}

TEST(RunAndCheckTest, AFlagThatDiffersIsNamed) {
  BothRuns b;
  b.sim.final_state.cores[0].flags[3] = 5;
  const Status s = CompareFinalState(b.program, b.interpreter, b.sim.final_state);
  EXPECT_EQ(s.code(), StatusCode::kCheckFailed);
  EXPECT_NE(s.message().find("core 0 flag 3: simulator 5, interpreter 2"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace tpusim::sim
