// sim/simulator.h's Simulator::Run and ParseMxuModelKind (was errors_test.cc): runtime errors
// become Status values naming the core, the instruction and the problem; the simulator never
// hangs (deadlock and cycle-limit detection); a config built in code is validated first.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

TEST(SimErrorsTest, OutOfBoundsDmaNamesTheInstruction) {
  isa::Program p = Asm(R"(
    nop
    dma.hbm_to_vmem flag=0, src=0, dst=1048000, elem_bytes=4, n0=1024
    sync.wait flag=0
  )");
  auto r = Simulator(TinyChip()).Run(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("core 0 instruction 1 dma.hbm_to_vmem"), std::string::npos)
      << r.status().message();
}

TEST(SimErrorsTest, WaitingForAFlagNobodySetsIsADeadlock) {
  isa::Program p = Asm("sync.wait flag=3, value=2\nctrl.halt\n");
  auto r = Simulator(TinyChip()).Run(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlock"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("flag 3 is 0, needs 2"), std::string::npos)
      << r.status().message();
}

TEST(SimErrorsTest, CycleLimitIsResourceExhaustedNamingTheLimit) {
  isa::Program p = Asm(R"(
    ctrl.loop count=1000
    dma.hbm_to_vmem flag=0, src=0, dst=0, elem_bytes=4, n0=1024
    sync.wait flag=0
    ctrl.endloop
  )");
  SimOptions o;
  o.max_cycles = Cycles(5000);
  auto r = Simulator(TinyChip(), o).Run(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("5000"), std::string::npos) << r.status().message();
}

TEST(SimErrorsTest, WallClockLimitIsResourceExhaustedNamingTheLimit) {
  isa::Program p = Asm(R"(
    ctrl.loop count=100000
    dma.hbm_to_vmem flag=0, src=0, dst=0, elem_bytes=4, n0=1024
    sync.wait flag=0
    ctrl.endloop
  )");
  SimOptions o;
  o.max_seconds = 1e-9;  // passed by the first deadline check, on any machine
  auto r = Simulator(TinyChip(), o).Run(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("wall-clock limit of 1e-09 seconds"), std::string::npos)
      << r.status().message();
  o.max_seconds = -1;
  auto bad = Simulator(TinyChip(), o).Run(p);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(SimErrorsTest, MatmulShapeMismatchIsAnError) {
  isa::Program p = Asm(R"(
    mxu.load_weights mxu=0, addr=0, k=8, n=8, stride=8, dtype=bf16
    mxu.matmul mxu=0, lhs=1024, stride=8, m=4, k=4, n=8, dtype=bf16, acc=0, latch=1
  )");
  auto r = Simulator(TinyChip()).Run(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("core 0 instruction 1 mxu.matmul"), std::string::npos)
      << r.status().message();
}

TEST(SimErrorsTest, ProgramWithMoreCoresThanTheSystemIsAnError) {
  isa::Program p = Asm(".core 1\nctrl.halt\n");
  auto r = Simulator(TinyChip()).Run(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

// A config built in code is checked once, by the schema's ranges and the loader's checks between
// keys (config::ValidateChipConfig), before any unit is built: the error names the key path.
TEST(SimErrorsTest, ConfigBuiltInCodeIsCheckedNamingTheKey) {
  const isa::Program p = Asm("ctrl.halt\n");
  struct Case {
    const char* key;
    std::function<void(config::ChipConfig&)> spoil;
  };
  const std::vector<Case> cases = {
      {"chip.clock_hz", [](config::ChipConfig& c) { c.clock_hz = 0; }},
      {"chip.hbm.bandwidth_bytes_per_s",
       [](config::ChipConfig& c) { c.hbm.bandwidth_bytes_per_s = 0; }},
      {"core.dma.engines", [](config::ChipConfig& c) { c.core.dma_engines = 0; }},
      {"core.mxu.pop_latency_cycles",
       [](config::ChipConfig& c) { c.core.mxu.pop_latency_cycles = -1; }},
      {"system.topology",
       [](config::ChipConfig& c) { c.system.topology = config::Topology::kSingle; }},
      {"system.shape", [](config::ChipConfig& c) { c.system.shape = {3}; }},
      {"system.ici.link_bandwidth_bytes_per_s",
       [](config::ChipConfig& c) { c.system.ici_link_bandwidth_bytes_per_s = 0; }},
  };
  for (const Case& k : cases) {
    config::ChipConfig c = TinyChip(/*chips=*/2);
    k.spoil(c);
    auto r = Simulator(c).Run(p);
    ASSERT_FALSE(r.ok()) << k.key;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << k.key;
    EXPECT_EQ(r.status().message().rfind(std::string("config 'tiny': ") + k.key + ": ", 0), 0u)
        << r.status().message();
  }
  EXPECT_TRUE(Simulator(TinyChip(2)).Run(p).ok());
}

TEST(SimErrorsTest, MxuModelNames) {
  EXPECT_EQ(*ParseMxuModelKind("pe"), MxuModelKind::kPe);
  EXPECT_EQ(*ParseMxuModelKind("fast"), MxuModelKind::kFast);
  auto bad = ParseMxuModelKind("exact");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'exact'"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::sim
