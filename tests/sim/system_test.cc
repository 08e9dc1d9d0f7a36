// sim/chip/system.h: what one run builds. Global core c is core c % tensorcores of chip
// c / tensorcores; only the program's cores get units, each a sequencer, its MXUs, a VPU, an XLU,
// its DMA engines and a collective unit, in that order, then the transfer network and the sync
// hub; the network has each chip's HBM and host link, its ICI link directions, the on-chip
// core-to-core links and each built core's VMEM copy path.
#include "sim/chip/system.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

std::vector<std::string> UnitPaths(System& s) {
  std::vector<std::string> out;
  for (Unit* u : s.units()) out.push_back(u->path());
  return out;
}

std::vector<std::string> CoreUnits(const std::string& core, int mxus, int dmas) {
  std::vector<std::string> out = {core + ".sequencer"};
  for (int i = 0; i < mxus; ++i) out.push_back(core + ".mxu" + std::to_string(i));
  out.push_back(core + ".vpu");
  out.push_back(core + ".xlu");
  for (int i = 0; i < dmas; ++i) out.push_back(core + ".dma" + std::to_string(i));
  out.push_back(core + ".ici");
  return out;
}

// Three cores of a 2-chip ring of 2-core chips: chip0.core0, chip0.core1, chip1.core0.
TEST(SystemTest, BuildsTheProgramsCoresOnTheirChipsInAFixedOrder) {
  config::ChipConfig chip = TinyChip(2, 2);
  chip.core.mxu.count = 2;
  chip.core.dma_engines = 3;
  auto s = System::Create(chip, Asm(".core 0\nnop\n.core 1\nnop\n.core 2\nnop\n"), nullptr, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ((*s)->cores().size(), 3u);
  std::vector<std::string> want;
  for (const char* core : {"chip0.core0", "chip0.core1", "chip1.core0"}) {
    for (const std::string& u : CoreUnits(core, 2, 3)) want.push_back(u);
  }
  want.push_back("network");
  want.push_back("sync_hub");
  EXPECT_EQ(UnitPaths(**s), want);
  // Every unit keeps its counters under its own path; chip1.core1 runs nothing and has none.
  const StatRegistry& stats = *(*s)->stats();
  for (const std::string& u : want) {
    if (u == "network" || u == "sync_hub") continue;
    EXPECT_NE(stats.Find(u), nullptr) << u;
  }
  EXPECT_EQ(stats.Find("chip1.core1.vpu"), nullptr);
  EXPECT_EQ(stats.Find("chip1.core1.sequencer"), nullptr);
}

TEST(SystemTest, TheNetworkHasEveryChipsMemoryAndLinks) {
  auto s = System::Create(TinyChip(2, 2), Asm(".core 0\nnop\n.core 2\nnop\n"), nullptr, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const StatRegistry& stats = *(*s)->stats();
  for (const char* path :
       {"chip0.hbm", "chip0.host", "chip1.hbm", "chip1.host", "chip0.ici.x+", "chip0.ici.x-",
        "chip1.ici.x+", "chip1.ici.x-", "chip0.core0_to_core1", "chip0.core1_to_core0",
        "chip1.core0_to_core1", "chip1.core1_to_core0", "chip0.core0.vmem_copy",
        "chip1.core0.vmem_copy"}) {
    EXPECT_NE(stats.Find(path), nullptr) << path;
  }
  // A program naming core 2 has cores 0..2: core 1, with no instructions, is built too.
  EXPECT_NE(stats.Find("chip0.core1.vmem_copy"), nullptr);
  EXPECT_EQ((*s)->cores().size(), 3u);
  EXPECT_EQ(stats.Find("chip1.core1.vmem_copy"), nullptr);
  // Unit paths are unique (the engine and the stats name units by them).
  const std::vector<std::string> paths = UnitPaths(**s);
  EXPECT_EQ(std::set<std::string>(paths.begin(), paths.end()).size(), paths.size());
}

TEST(SystemTest, ASingleChipHasNoIciLinks) {
  auto s = System::Create(TinyChip(), Asm("nop\n"), nullptr, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  const StatRegistry& stats = *(*s)->stats();
  EXPECT_NE(stats.Find("chip0.hbm"), nullptr);
  for (const StatGroup& g : stats.groups()) {
    EXPECT_EQ(g.path().find(".ici."), std::string::npos) << g.path();
  }
  EXPECT_EQ(UnitPaths(**s), ([] {
              std::vector<std::string> w = CoreUnits("chip0.core0", 1, 2);
              w.push_back("network");
              w.push_back("sync_hub");
              return w;
            }()));
}

}  // namespace
}  // namespace tpusim::sim
