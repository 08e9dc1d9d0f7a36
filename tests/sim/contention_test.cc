// Shared bandwidth: a chip's HBM shared by its cores (v4+ megacore) or split per core (v2/v3), and
// two transfers contending for one ICI link direction.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "sim/run_and_check.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;

// Core 0 of a 2-core chip streams 512 KiB from HBM; core 1 idles.
uint64_t OneCoreStreamCycles(bool shared) {
  config::ChipConfig chip = testing::TinyChip(1, 2);
  chip.hbm.shared_by_cores = shared;
  std::string text;
  for (int i = 0; i < 8; ++i) {
    text +=
        fmt::format("dma.hbm_to_vmem flag=0, src={0}, dst={0}, elem_bytes=4, n0=16384\n", i << 16);
  }
  text += "sync.wait flag=0, value=8\n.core 1\nctrl.halt\n";
  auto r = RunAndCheck(chip, Asm(text));
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->cycles.value() : 0;
}

TEST(ContentionTest, MegacoreHbmIsSharedAndV2HbmIsSplit) {
  // Shared: core 0 gets all 64 B/cycle: 512 KiB / 64 = 8192 cycles (+ latency and issue).
  // Split: core 0 owns half the chip's HBM, 32 B/cycle: 16384 cycles.
  const uint64_t shared = OneCoreStreamCycles(true), split = OneCoreStreamCycles(false);
  EXPECT_NEAR(static_cast<double>(shared), 8192.0, 8192 * 0.03);
  EXPECT_NEAR(static_cast<double>(split), 16384.0, 16384 * 0.03);
}

// Remote writes of S bytes into core 1's VMEM on a 4-chip ring, from core 0 (route: chip0.ici.x+)
// and, when `both`, from core 3 too (route 3 -> 0 -> 1: chip3.ici.x+, chip0.ici.x+).
uint64_t RemoteWriteCycles(bool both) {
  const config::ChipConfig chip = testing::TinyChip(4);
  auto dma = [](int dst) {
    return fmt::format(
        "dma.vmem_to_remote flag=0, src=0, dst={}, elem_bytes=4, n0=16384, dst_core=1, "
        "dst_space=vmem, dst_flag=1\nsync.wait flag=0\nctrl.halt\n",
        dst);
  };
  std::string text = fmt::format(
      ".core 0\n{}.core 1\nsync.wait flag=1, value={}\nctrl.halt\n.core 2\nctrl.halt\n"
      ".core 3\n{}",
      dma(0), both ? 2 : 1, both ? dma(65536) : std::string("ctrl.halt\n"));
  auto r = RunAndCheck(chip, Asm(text));
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->cycles.value() : 0;
}

TEST(ContentionTest, TwoTransfersOnOneLinkShareIt) {
  // Alone: 64 KiB / 16 B/cycle = 4096 cycles + 50 (one hop). Together on chip0.ici.x+: 8192 cycles.
  const uint64_t alone = RemoteWriteCycles(false), together = RemoteWriteCycles(true);
  EXPECT_NEAR(static_cast<double>(alone), 4096.0 + 50, 20);
  EXPECT_NEAR(static_cast<double>(together), 8192.0 + 100, 40);
}

}  // namespace
}  // namespace tpusim::sim
