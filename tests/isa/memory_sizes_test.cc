// isa/memory_sizes.h: the chip figures the ISA layer takes from a config::ChipConfig, and the HBM
// one core addresses (the chip's when shared by its cores, else its 1/tensorcores share).
#include "isa/memory_sizes.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace tpusim::isa {
namespace {

TEST(MemorySizesTest, FromChipConfigTakesTheChipsFigures) {
  config::ChipConfig c;
  c.tensorcores = 2;
  c.system.chips = 4;
  c.core.vmem_bytes = 1 << 20;
  c.core.smem_bytes = 1 << 14;
  c.hbm.capacity_bytes = int64_t{1} << 30;
  c.hbm.shared_by_cores = false;
  c.core.mxu.count = 4;
  c.core.mxu.rows = 128;
  c.core.mxu.cols = 256;
  c.core.mxu.accumulator_rows = 4096;
  const MemorySizes s = MemorySizes::FromChipConfig(c);
  EXPECT_EQ(s.cores, 8);
  EXPECT_EQ(s.tensorcores_per_chip, 2);
  EXPECT_EQ(s.vmem_bytes, 1 << 20);
  EXPECT_EQ(s.smem_bytes, 1 << 14);
  EXPECT_EQ(s.hbm_bytes_per_chip, int64_t{1} << 30);
  EXPECT_EQ(s.hbm_bytes_per_core(), int64_t{1} << 29);  // private: half a chip's
  EXPECT_EQ(s.mxu_count, 4);
  EXPECT_EQ(s.mxu_rows, 128);
  EXPECT_EQ(s.mxu_cols, 256);
  EXPECT_EQ(s.accumulator_rows, 4096);
  c.hbm.shared_by_cores = true;
  EXPECT_EQ(MemorySizes::FromChipConfig(c).hbm_bytes_per_core(), int64_t{1} << 30);
}

// The default MemorySizes (no config): one core, the chip's HBM addressed whole, and a 1 TiB host.
TEST(MemorySizesTest, DefaultsAreOneCoreWithSharedHbm) {
  MemorySizes s;
  s.hbm_bytes_per_chip = 3000;
  EXPECT_EQ(s.cores, 1);
  EXPECT_EQ(s.hbm_bytes_per_core(), 3000);
  EXPECT_EQ(s.host_bytes, int64_t{1} << 40);
  s.hbm_shared_by_cores = false;
  s.tensorcores_per_chip = 4;
  EXPECT_EQ(s.hbm_bytes_per_core(), 750);  // 3000 / 4
}

}  // namespace
}  // namespace tpusim::isa
